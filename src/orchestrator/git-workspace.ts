// Git around an instance: a snapshot of the working tree when it starts, an optional worktree of
// its own (`isolation: worktree`), and the patch of what it changed (patches/<key>.diff).
//
// The snapshot is a tree object written through a temporary index, so the user's index and
// working tree are never touched, and the patch shows exactly what this instance changed, even
// when earlier tasks left uncommitted changes behind. Untracked files count (ignored ones don't).
//
// Every git here runs through tools/product-git (sanitized environment, the repository's program
// keys disabled, inside bubblewrap where it works): the repository is the model's to configure.
import {
  copyFileSync,
  existsSync,
  mkdirSync,
  readFileSync,
  realpathSync,
  statSync,
  utimesSync,
  writeFileSync,
} from 'node:fs';
import { basename, dirname, join, resolve } from 'node:path';
import { productGit, productGitScript, withProductTemp, type ProductCommandOptions } from '../tools/product-git.js';

/** The tree of an empty repository, for diffs in a repository without commits. */
const EMPTY_TREE = '4b825dc642cb6eb9a060e54bf8d69288fbee4904';

export interface GitResult {
  ok: boolean;
  stdout: string;
  stderr: string;
}

/**
 * Runs one product git in `cwd`. `env` holds the caller's GIT_* variables; the folders of a
 * GIT_INDEX_FILE or GIT_OBJECT_DIRECTORY it names are writable in the sandbox, as is `writable`.
 */
export async function git(
  args: string[],
  cwd: string,
  env?: Record<string, string>,
  more: Pick<ProductCommandOptions, 'input' | 'writable'> = {},
): Promise<GitResult> {
  try {
    const r = await productGit(args, {
      cwd,
      env,
      input: more.input,
      writable: [...writableOf(env), ...(more.writable ?? [])],
    });
    return {
      ok: r.code === 0,
      stdout: r.stdout.toString('utf8'),
      stderr: r.stderr || (r.code === 0 ? '' : `git ${args[0] ?? ''} exited with ${String(r.code)}`),
    };
  } catch (err) {
    return { ok: false, stdout: '', stderr: err instanceof Error ? err.message : String(err) };
  }
}

/** The folders the caller's GIT_INDEX_FILE / GIT_OBJECT_DIRECTORY live in (written by git). */
function writableOf(env: Record<string, string> | undefined): string[] {
  const out: string[] = [];
  if (env?.GIT_INDEX_FILE) out.push(dirname(env.GIT_INDEX_FILE));
  if (env?.GIT_OBJECT_DIRECTORY) out.push(env.GIT_OBJECT_DIRECTORY);
  return out;
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

export interface Snapshot {
  /** Repository root. */
  root: string;
  /** HEAD when the snapshot was taken (undefined in a repository without commits). */
  commit?: string;
  /** Tree object of the working tree under `dir` (tracked and untracked, not ignored). */
  tree: string;
}

/**
 * Shell prelude of snapshot and diffSince (one sandboxed shell each): finds the repository root
 * and its index, seeds the throwaway index ($GIT_INDEX_FILE) with a copy keeping its mtime (see
 * copyGitIndex), and stages the instance's folder ($1) into it. Only that folder is re-read; the
 * rest of the tree comes from the index as it is.
 */
const STAGE_SCOPE = `loc=$(unset GIT_INDEX_FILE; git rev-parse --show-toplevel --path-format=absolute --git-path index) || exit 3
top=\${loc%%
*}
idx=\${loc#*
}
if [ -f "$idx" ]; then cp -p "$idx" "$GIT_INDEX_FILE" || exit 3; fi
cd "$top" || exit 3
git add -A -- "$1" || exit 4
`;

/** Runs a STAGE_SCOPE script for the folder `dir` with a throwaway index in a private temp folder. */
async function inTempIndex(
  dir: string,
  script: string,
  extra: string[] = [],
): Promise<{ code: number | null; stdout: Buffer } | undefined> {
  if (!existsSync(dir) || !mayBeInGitRepo(dir)) return undefined;
  const real = realpathSync(dir);
  return withProductTemp('orchestrate-index-', async (tmp) => {
    try {
      const r = await productGitScript(STAGE_SCOPE + script, [real, ...extra], {
        cwd: real,
        env: { GIT_INDEX_FILE: join(tmp, 'index') },
        writable: [tmp],
      });
      return { code: r.code, stdout: r.stdout };
    } catch {
      return undefined;
    }
  });
}

/** Records the current state of the work tree under `dir`; undefined outside git. */
export async function snapshot(dir: string): Promise<Snapshot | undefined> {
  const r = await inTempIndex(
    dir,
    `head=$(git rev-parse --verify -q HEAD) || head=
tree=$(git write-tree) || exit 4
printf '%s\\n%s\\n%s\\n' "$top" "$head" "$tree"
`,
  );
  if (!r || r.code !== 0) return undefined;
  const [root, commit, tree] = r.stdout.toString('utf8').split('\n');
  return root && tree ? { root, commit: commit || undefined, tree } : undefined;
}

/**
 * The patch of everything that changed under `dir` since `baseTree` (binary-safe, untracked
 * files included), plus the changed paths relative to the repository root.
 */
export async function diffSince(
  dir: string,
  baseTree: string | undefined,
): Promise<{ patch: string; files: string[] } | undefined> {
  const r = await inTempIndex(
    dir,
    `git diff --cached --binary --no-color --no-ext-diff --no-textconv "$2" -- "$1" || exit 5
printf '\\0'
git diff --cached --name-only --no-renames --no-ext-diff --no-textconv "$2" -- "$1" || exit 5
`,
    [baseTree ?? EMPTY_TREE],
  );
  if (!r || r.code !== 0) return undefined;
  const text = r.stdout.toString('utf8');
  const cut = text.lastIndexOf('\0');
  if (cut < 0) return undefined;
  return {
    patch: text.slice(0, cut),
    files: text
      .slice(cut + 1)
      .split('\n')
      .filter(Boolean),
  };
}

/** Creates a detached worktree of `root` at `commit` in `dir` (reused if it is already there). */
export async function addWorktree(
  root: string,
  dir: string,
  commit: string | undefined,
): Promise<{ ok: true } | { ok: false; error: string }> {
  if (existsSync(join(dir, '.git'))) return { ok: true };
  if (!commit) return { ok: false, error: `cannot make a worktree of ${root}: the repository has no commits yet` };
  // The (empty) folder itself is made and bound into the sandbox: its parent may be removed
  // meanwhile by another instance dropping the last worktree there (rmdir fails once it holds one).
  mkdirSync(dir, { recursive: true });
  const r = await git(['worktree', 'add', '--detach', dir, commit], root, undefined, { writable: [dir] });
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
  await git(['worktree', 'remove', '--force', dir], root, undefined, { writable: [dirname(dir)] });
}
