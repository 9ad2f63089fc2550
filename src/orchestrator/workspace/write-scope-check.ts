// `writes:` holds for every way an instance changes files, not only edit/write (which refuse
// out-of-scope paths themselves): bash, verify commands and `run:` steps can write anywhere in
// the workspace. Before an instance settles, the changes in its git workspace since its snapshot
// are compared with its `writes:` globs; anything outside is put back as it was (restored from
// the snapshot, or removed when it is new) and the attempt fails with class `write_scope`.
//
// Instances of the same run may work in the same checkout at once. A change that another
// instance's `writes:` covers may be that instance's work and is left alone; while an instance
// without `writes:` runs in the same checkout, nobody can tell whose a change is, so the check
// waits for a later attempt (or is skipped) rather than revert someone else's work.
//
// The check fails closed: when the changes cannot be measured (git fails on a nested repository
// the agent made, the repository's git metadata was rewired), the attempt fails with class
// `workspace` and git's message, naming the changed files git could still list.
import { rmSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { isInside } from '../../tools/workspace.js';
import { compileGlob } from '../../tools/glob.js';
import { diffScopes, git } from './git-workspace.js';
import { pinnedGitEnv, trustedRepository } from './repo-trust.js';
import type { WorkerResult } from '../protocol.js';
import type { InstanceState, TaskState } from '../../run/run-state.js';
import { zeroUsage } from '../../run/usage-summary.js';
import { writeGlobs } from './write-scopes.js';

const toPosix = (p: string): string => p.split('\\').join('/');

/** git's C-style quoting of unusual names (`"\303\244.txt"`) undone: the path as it is on disk. */
export function unquoteGitPath(name: string): string {
  if (!(name.startsWith('"') && name.endsWith('"') && name.length >= 2)) return name;
  const bytes: number[] = [];
  const body = name.slice(1, -1);
  const named: Record<string, number> = { a: 7, b: 8, t: 9, n: 10, v: 11, f: 12, r: 13, '"': 34, '\\': 92 };
  for (let i = 0; i < body.length; i++) {
    const c = body[i]!;
    if (c !== '\\') {
      bytes.push(...Buffer.from(c, 'utf8'));
      continue;
    }
    const next = body[i + 1] ?? '';
    const octal = /^[0-7]{3}/.exec(body.slice(i + 1));
    if (octal) {
      bytes.push(parseInt(octal[0], 8));
      i += 3;
    } else {
      bytes.push(named[next] ?? next.charCodeAt(0));
      i += 1;
    }
  }
  return Buffer.from(bytes).toString('utf8');
}

/** A glob of the original checkout, moved into the instance's worktree when it has one. */
function intoWorktree(inst: InstanceState, glob: string): string {
  const g = inst.git;
  if (!g?.worktree) return glob;
  const root = toPosix(g.root);
  return glob === root || glob.startsWith(`${root}/`) ? toPosix(g.worktree) + glob.slice(root.length) : glob;
}

/** Absolute globs of `inst`'s `writes:`. */
function scopeOf(task: TaskState, inst: InstanceState): string[] {
  return writeGlobs(inst.resolved?.cwd ?? task.task.dir, inst.resolved?.writes ?? []).map((w) => intoWorktree(inst, w));
}

export interface WriteScopeViolation {
  /** Paths relative to the repository (or worktree) root. */
  files: string[];
  /** Files that could not be put back, with the reason. */
  notReverted: string[];
  /**
   * Why the changes could not be measured (the diff failed, the repository is not one orchestrate
   * trusts): nothing was reverted, and `files` are those git could still list.
   */
  unchecked?: string;
}

/** Changed paths under `cwd` since a base tree: a diff, or why there is none. */
export type MeasuredChanges = { ok: true; files: string[] } | { ok: false; error: string; files?: string[] };

/**
 * The changes under `cwd` since `baseTree` that no glob of `allowed` matches, put back as they
 * were. `root` is the root of the repository (or worktree) that holds `cwd`. `measured`: the
 * changes when the caller has them (Workspaces' batched, pinned diff); else they are diffed here.
 */
export async function revertOutsideScope(
  cwd: string,
  root: string,
  baseTree: string,
  allowed: string[],
  tolerated: string[] = [],
  measured?: MeasuredChanges,
): Promise<WriteScopeViolation | undefined> {
  const d: MeasuredChanges = measured ?? (await diffScopes([{ dir: cwd, baseTree }]))[0]!;
  if (!d.ok) return { files: (d.files ?? []).map(unquoteGitPath), notReverted: [], unchecked: d.error };
  if (d.files.length === 0) return undefined;
  const changed = d.files.map(unquoteGitPath);
  const own = allowed.map((g) => compileGlob(g));
  const others = tolerated.map((g) => compileGlob(g));
  const outside = changed.filter((f) => {
    const abs = toPosix(join(root, f));
    return !own.some((re) => re.test(abs)) && !others.some((re) => re.test(abs));
  });
  if (outside.length === 0) return undefined;
  // git restores into the repository it was measured in, never one its config points at now.
  const trusted = trustedRepository(root);
  if (!trusted.ok) return { files: outside, notReverted: [], unchecked: trusted.error };
  const env = pinnedGitEnv(trusted.location);
  // Which of them the snapshot holds: those are restored, the others are new and removed.
  const listed = await git(
    ['ls-tree', '-r', '--name-only', '-z', baseTree, '--', ...outside.map((f) => `:(literal)${f}`)],
    root,
    env,
  );
  if (!listed.ok)
    return { files: outside, notReverted: [], unchecked: `git ls-tree failed in ${root}: ${listed.stderr.trim()}` };
  const inBase = new Set(listed.stdout.split('\0').filter(Boolean));
  const notReverted: string[] = [];
  const restore = outside.filter((f) => inBase.has(f));
  if (restore.length > 0) {
    // The working tree only: the user's index is not touched.
    const r = await git(
      ['restore', `--source=${baseTree}`, '--worktree', '--', ...restore.map((f) => `:(literal)${f}`)],
      root,
      env,
      { writable: [trusted.location.top, trusted.location.gitDir, trusted.location.commonDir] },
    );
    if (!r.ok) notReverted.push(...restore.map((f) => `${f} (${r.stderr.trim().split('\n')[0]})`));
  }
  for (const f of outside.filter((x) => !inBase.has(x))) {
    try {
      rmSync(join(root, f), { force: true });
    } catch (err) {
      notReverted.push(`${f} (${err instanceof Error ? err.message : String(err)})`);
    }
  }
  return { files: outside, notReverted };
}

function describe(v: WriteScopeViolation, scope: string[]): string {
  if (v.unchecked !== undefined) {
    const seen =
      v.files.length > 0
        ? `; changed files git could still list: ${v.files.slice(0, 10).join(', ')}${v.files.length > 10 ? ` and ${v.files.length - 10} more` : ''}`
        : '';
    return `writes: (${scope.join(', ')}) cannot be checked, so the attempt fails and nothing of it is kept as done: ${v.unchecked}${seen}`;
  }
  const shown = v.files.slice(0, 10).join(', ') + (v.files.length > 10 ? ` and ${v.files.length - 10} more` : '');
  const kept = v.notReverted.length > 0 ? `; could not put back: ${v.notReverted.join(', ')}` : '';
  return `changed files outside writes: (${scope.join(', ')}): ${shown}; they were reverted${kept}. Only files matching writes: may change (by any tool, bash and verify included): widen writes: or keep the change inside it`;
}

/**
 * Checks `inst`'s attempt against its `writes:` once the attempt is over. A successful attempt
 * with changes outside becomes a `write_scope` failure; a failed one keeps its class, and the
 * reverted files are named in its error.
 */
export async function enforceWriteScope(
  task: TaskState,
  inst: InstanceState,
  result: WorkerResult,
  siblings: Iterable<{ task: TaskState; inst: InstanceState }>,
  git: {
    withGitLock: <T>(root: string, fn: () => Promise<T>) => Promise<T>;
    /** Workspaces' diff (workspaces.ts: batched, pinned to the repository of the instance's snapshot). */
    diffSince(root: string, dir: string, baseTree: string | undefined, worktree?: string): Promise<MeasuredChanges>;
  },
  /** Folders whose changes are never the instance's (the runs folder, which this run writes). */
  exempt: string[] = [],
): Promise<WorkerResult> {
  const g = inst.git;
  if (!g || (inst.resolved?.writes ?? []).length === 0) return result;
  const scope = scopeOf(task, inst);
  const root = g.worktree ?? g.root;
  // A worktree lives in the run folder: the exemption covers the run's files, not the worktree's.
  const tolerated: string[] = exempt
    .filter((d) => !isInside(resolve(d), resolve(root)))
    .map((d) => `${toPosix(d).replace(/\/+$/, '')}/**`);
  if (!g.worktree) {
    for (const s of siblings) {
      if (s.inst === inst || s.inst.git?.worktree || !s.inst.git || s.inst.git.root !== g.root) continue;
      const theirs = scopeOf(s.task, s.inst);
      if (theirs.length > 0) tolerated.push(...theirs);
      // Someone else may be writing anywhere in this checkout right now: do not guess.
      else if (s.inst.status === 'running') return result;
    }
  }
  const cwd = inst.workCwd ?? inst.resolved!.cwd;
  const measured = await git.diffSince(g.root, cwd, g.tree, g.worktree);
  const v = await git.withGitLock(g.root, () => revertOutsideScope(cwd, root, g.tree, scope, tolerated, measured));
  if (!v) return result;
  const message = describe(v, inst.resolved?.writes ?? []);
  if (!result.ok) return { ...result, error: `${result.error} (also ${message})` };
  return {
    ok: false,
    failure: v.unchecked !== undefined ? 'workspace' : 'write_scope',
    error: message,
    usage: result.usage ?? zeroUsage(),
  };
}
