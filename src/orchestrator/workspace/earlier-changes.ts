// What an instance changed before this session: the files its earlier patch touches
// (patches/<instance>.diff in the run folder, written whenever its work was measured for landing,
// also when the landing then failed) and, for `isolation: worktree`, what its worktree holds
// since its base tree (an unfinished or failed instance keeps its edits there, and a resume
// continues in it). Paths are absolute, inside the instance's repository.
//
// A resume gives them to the scheduler beside the instance's `writes:` globs, so two instances
// that edited the same files before run one after another wherever overlapping `writes:` would
// (task-walk.ts schedulable); what the instance may write (its write scope) is never widened.
// `orchestrate resume --dry-run` and `publish --rebase --dry-run` name the pairs from the same
// data. Reading only: git runs as product git (sandboxed, no optional locks: not even the
// index's stat cache is written), and a missing patch or worktree is simply nothing known.
import { existsSync, readFileSync } from 'node:fs';
import { isAbsolute, join, sep } from 'node:path';
import type { GitState } from '../../run/instance-record.js';
import { type InstanceState, isTerminal } from '../../run/run-state.js';
import { productGitScript } from '../../tools/product-git.js';
import { unquoteGitPath } from './write-scope-check.js';

/** A git object id (sha-1 or sha-256), the only thing from the log that is passed to git. */
export const OBJECT_ID = /^[0-9a-f]{40}([0-9a-f]{24})?$/;

/** What is needed of an instance: its id, its git record (instance_start) and its patch file, if any. */
export interface EarlierWork {
  id: string;
  git?: GitState;
  patchFile?: string;
}

/** `a/x` or `b/x` (possibly quoted) without its prefix; `/dev/null` is no file. */
function sidePath(raw: string): string | undefined {
  const p = unquoteGitPath(raw.trim());
  if (p === '/dev/null') return undefined;
  return p.replace(/^[ab]\//, '');
}

/**
 * The files a git patch touches, relative to its repository: both sides of every file's header
 * (a rename names the old path and the new one). Read from the `---` / `+++` lines, and from
 * `rename from` / `rename to` and the `diff --git` line of a change with no text hunk (a binary
 * file, a mode change, an empty new file).
 */
export function patchPaths(patch: string): string[] {
  const out = new Set<string>();
  for (const line of patch.split('\n')) {
    let p: string | undefined;
    if (line.startsWith('--- ') || line.startsWith('+++ ')) p = sidePath(line.slice(4));
    else if (line.startsWith('rename from ') || line.startsWith('rename to ') || line.startsWith('copy to '))
      p = unquoteGitPath(line.slice(line.indexOf(' ', 7) + 1).trim());
    else if (line.startsWith('diff --git ')) {
      // Unquoted and with no space in the name: "a/x b/x". Quoted or spaced ones have --- / +++ or rename lines.
      const m = /^diff --git a\/(\S+) b\/(\S+)$/.exec(line);
      if (m) {
        out.add(m[1]!);
        p = m[2];
      }
    }
    if (p) out.add(p);
  }
  return [...out].sort();
}

/** The files a worktree changed since `baseTree` (untracked ones included), relative to its top; undefined when git cannot say. */
export async function worktreeChanges(worktree: string, baseTree: string): Promise<string[] | undefined> {
  // The tree id comes from the run log: only an object id reaches git's command line.
  if (!OBJECT_ID.test(baseTree) || !existsSync(join(worktree, '.git'))) return undefined;
  try {
    // One sandboxed shell for both lists (tracked changes, then new files), each NUL-terminated.
    const r = await productGitScript(
      `git -c core.quotePath=false diff --name-only -z --no-renames --no-ext-diff --no-textconv "$1" || exit 5
git ls-files --others --exclude-standard -z || exit 5
`,
      [baseTree],
      { cwd: worktree },
    );
    if (r.code !== 0) return undefined;
    return [...new Set(r.stdout.toString('utf8').split('\0').filter(Boolean))].sort();
  } catch {
    // git or the sandbox cannot start: nothing is known of the worktree (a dry run says so by naming nothing).
    return undefined;
  }
}

/** Absolute, '/'-separated. */
const slashed = (p: string): string => p.split(sep).join('/');

/**
 * The files (absolute) an instance changed before this session: its patch's and its worktree's.
 * Empty when it has no git record (no repository) or nothing of its earlier work is left.
 */
export async function earlierChanges(runDir: string, inst: EarlierWork): Promise<string[]> {
  const g = inst.git;
  if (!g) return [];
  const rel = new Set<string>();
  const patchFile = inst.patchFile ?? `patches/${inst.id}.diff`;
  const patchPath = isAbsolute(patchFile) ? patchFile : join(runDir, patchFile);
  if (existsSync(patchPath)) {
    try {
      for (const f of patchPaths(readFileSync(patchPath, 'utf8'))) rel.add(f);
    } catch {
      // An unreadable patch tells nothing; the worktree may still.
    }
  }
  if (g.worktree) for (const f of (await worktreeChanges(g.worktree, g.tree)) ?? []) rel.add(f);
  return [...rel].map((f) => slashed(join(g.root, f))).sort();
}

/** Instances whose earlier work is read at once on resume. */
const EARLIER_BATCH = 4;

/**
 * On resume: each instance that will run again gets `earlierWrites`, the files its earlier
 * attempts changed, which the scheduler treats like its writes: globs (never its write scope).
 */
export async function noteEarlierWrites(runDir: string, instances: Iterable<InstanceState>): Promise<void> {
  const open = [...instances].filter((i) => !isTerminal(i.status) && i.git);
  // A few at a time: each worktree asked is one sandboxed git, and a big fan-out has hundreds.
  for (let i = 0; i < open.length; i += EARLIER_BATCH)
    await Promise.all(
      open.slice(i, i + EARLIER_BATCH).map(async (inst) => {
        const files = await earlierChanges(runDir, inst);
        if (files.length) inst.earlierWrites = files;
      }),
    );
}
