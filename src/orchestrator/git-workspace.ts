// Git around an instance: a snapshot of the working tree when it starts, an optional worktree of
// its own (`isolation: worktree`), and the patch of what it changed (patches/<key>.diff).
//
// The snapshot is a tree object written through a temporary index, so the user's index and
// working tree are never touched, and the patch shows exactly what this instance changed, even
// when earlier tasks left uncommitted changes behind. Untracked files count (ignored ones don't).
import { execFile } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, readFileSync, rmSync, statSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, dirname, join, relative, resolve } from 'node:path';
import { randomBytes } from 'node:crypto';

/** The tree of an empty repository, for diffs in a repository without commits. */
const EMPTY_TREE = '4b825dc642cb6eb9a060e54bf8d69288fbee4904';

export interface GitResult {
  ok: boolean;
  stdout: string;
  stderr: string;
}

export function git(args: string[], cwd: string, env?: Record<string, string>): Promise<GitResult> {
  return new Promise((resolvePromise) => {
    execFile(
      'git',
      args,
      { cwd, env: { ...process.env, ...env, GIT_TERMINAL_PROMPT: '0' }, maxBuffer: 256 * 1024 * 1024 },
      (err, stdout, stderr) => resolvePromise({ ok: !err, stdout: String(stdout), stderr: String(stderr || (err ? err.message : '')) }),
    );
  });
}

/**
 * False only when no folder from `dir` up to the file system root holds a `.git` entry (folder,
 * or file of a worktree or submodule) and no GIT_DIR / GIT_WORK_TREE points git elsewhere: then
 * git itself would find no repository. A fan-out over plain folders would otherwise spawn one
 * `git rev-parse` per instance only to hear "not a repository" (about 6 ms of the coordinator's
 * time each).
 */
export function mayBeInGitRepo(dir: string, env: Readonly<Record<string, string | undefined>> = process.env): boolean {
  if (env.GIT_DIR || env.GIT_WORK_TREE) return true;
  for (let d = resolve(dir); ; d = dirname(d)) {
    if (existsSync(join(d, '.git'))) return true;
    if (dirname(d) === d) return false;
  }
}

/** The repository root holding `dir`, or undefined when `dir` is not in a git work tree. */
export async function repoRoot(dir: string): Promise<string | undefined> {
  if (!existsSync(dir) || !mayBeInGitRepo(dir)) return undefined;
  const r = await git(['rev-parse', '--show-toplevel'], dir);
  return r.ok ? r.stdout.trim() : undefined;
}

export async function headCommit(dir: string): Promise<string | undefined> {
  const r = await git(['rev-parse', '--verify', '-q', 'HEAD'], dir);
  return r.ok ? r.stdout.trim() : undefined;
}

/**
 * Copies a git index for use as a throwaway one, keeping its modification time. git trusts an
 * entry's cached stat only when the file changed before the index was written ("racy git"): a copy
 * stamped later would make a same-size edit made in the index's last second look unchanged, and
 * the snapshot or patch would miss it (seen with an agent that edited right after an unpack).
 */
export function copyGitIndex(from: string, to: string): void {
  copyFileSync(from, to);
  const st = statSync(from);
  utimesSync(to, st.atime, st.mtime);
}

/** Runs `fn` with a throwaway index seeded from the repository's own (keeps git's stat cache warm). */
async function withTempIndex<T>(dir: string, fn: (env: Record<string, string>) => Promise<T>): Promise<T> {
  const tmp = join(tmpdir(), `orchestrate-index-${process.pid}-${randomBytes(4).toString('hex')}`);
  const real = await git(['rev-parse', '--path-format=absolute', '--git-path', 'index'], dir);
  try {
    if (real.ok && existsSync(real.stdout.trim())) copyGitIndex(real.stdout.trim(), tmp);
    return await fn({ GIT_INDEX_FILE: tmp });
  } finally {
    rmSync(tmp, { force: true });
  }
}

export interface Snapshot {
  /** Repository root. */
  root: string;
  /** HEAD when the snapshot was taken (undefined in a repository without commits). */
  commit?: string;
  /** Tree object of the working tree under `dir` (tracked and untracked, not ignored). */
  tree: string;
}

/** Records the current state of the work tree under `dir`; undefined outside git. */
export async function snapshot(dir: string): Promise<Snapshot | undefined> {
  const root = await repoRoot(dir);
  if (!root) return undefined;
  const commit = await headCommit(root);
  // Only the instance's folder is re-read; the rest of the tree comes from the index as it is.
  const scope = relative(root, resolve(dir)) || '.';
  const tree = await withTempIndex(root, async (env) => {
    if (!(await git(['add', '-A', '--', scope], root, env)).ok) return undefined;
    const w = await git(['write-tree'], root, env);
    return w.ok ? w.stdout.trim() : undefined;
  });
  return tree ? { root, commit, tree } : undefined;
}

/**
 * The patch of everything that changed under `dir` since `baseTree` (binary-safe, untracked
 * files included), plus the changed paths relative to the repository root.
 */
export async function diffSince(dir: string, baseTree: string | undefined): Promise<{ patch: string; files: string[] } | undefined> {
  const root = await repoRoot(dir);
  if (!root) return undefined;
  const scope = relative(root, resolve(dir)) || '.';
  return withTempIndex(root, async (env) => {
    if (!(await git(['add', '-A', '--', scope], root, env)).ok) return undefined;
    const base = baseTree ?? EMPTY_TREE;
    const d = await git(['diff', '--cached', '--binary', '--no-color', '--no-ext-diff', base, '--', scope], root, env);
    if (!d.ok) return undefined;
    const names = await git(['diff', '--cached', '--name-only', '--no-renames', base, '--', scope], root, env);
    const files = names.ok ? names.stdout.split('\n').filter(Boolean) : [];
    return { patch: d.stdout, files };
  });
}

/** Creates a detached worktree of `root` at `commit` in `dir` (reused if it is already there). */
export async function addWorktree(root: string, dir: string, commit: string | undefined): Promise<{ ok: true } | { ok: false; error: string }> {
  if (existsSync(join(dir, '.git'))) return { ok: true };
  if (!commit) return { ok: false, error: `cannot make a worktree of ${root}: the repository has no commits yet` };
  mkdirSync(dirname(dir), { recursive: true });
  const r = await git(['worktree', 'add', '--detach', dir, commit], root);
  return r.ok ? { ok: true } : { ok: false, error: `git worktree add failed: ${r.stderr.trim()}` };
}

/**
 * A worktree copied along with its repository (a copied project folder being resumed) still
 * points at the original's git metadata, and `git worktree repair` would rewrite the original's
 * files to point at the copy. Instead the copy's own two links are set: the worktree's `.git`
 * file to `root`'s entry for it, and that entry's `gitdir` back to the worktree. Nothing outside
 * `wt` and `root/.git` is written; a worktree already linked to `root` is left as it is.
 */
export function relinkWorktree(root: string, wt: string): void {
  const dotGit = join(wt, '.git');
  let text: string;
  try {
    text = readFileSync(dotGit, 'utf8');
  } catch {
    return;
  }
  const pointed = /^gitdir:\s*(.+?)\s*$/m.exec(text)?.[1];
  if (!pointed) return;
  const entry = join(root, '.git', 'worktrees', basename(pointed));
  if (resolve(wt, pointed) === entry || !existsSync(join(entry, 'HEAD'))) return;
  writeFileSync(dotGit, `gitdir: ${entry}\n`);
  writeFileSync(join(entry, 'gitdir'), `${dotGit}\n`);
}

export async function removeWorktree(root: string, dir: string): Promise<void> {
  await git(['worktree', 'remove', '--force', dir], root);
}
