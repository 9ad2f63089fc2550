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
import { basename, dirname, join, relative, resolve, sep } from 'node:path';
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
 * Shell prelude of the snapshot and diff scripts (one sandboxed shell each): finds the repository
 * root and its index, seeds the throwaway index ($GIT_INDEX_FILE) with a copy keeping its mtime
 * (see copyGitIndex) and goes to the root. The script then stages only the instances' folders: the
 * rest of the tree comes from the index as it is.
 */
const TEMP_INDEX = `loc=$(unset GIT_INDEX_FILE; git rev-parse --show-toplevel --path-format=absolute --git-path index) || exit 3
top=\${loc%%
*}
idx=\${loc#*
}
if [ -f "$idx" ]; then cp -p "$idx" "$GIT_INDEX_FILE" || exit 3; fi
cd "$top" || exit 3
`;

/**
 * Runs a TEMP_INDEX script with a throwaway index in a private temp folder, in the first of
 * `dirs` (all of them in one repository, real paths). Undefined when it cannot run at all.
 */
async function inTempIndex(
  dirs: string[],
  script: string,
  args: string[],
): Promise<{ code: number | null; stdout: Buffer } | undefined> {
  const cwd = dirs[0];
  if (cwd === undefined) return undefined;
  return withProductTemp('orchestrate-index-', async (tmp) => {
    try {
      const r = await productGitScript(TEMP_INDEX + script, args, {
        cwd,
        env: { GIT_INDEX_FILE: join(tmp, 'index') },
        writable: [tmp],
      });
      return { code: r.code, stdout: r.stdout };
    } catch {
      return undefined;
    }
  });
}

/** The real paths of `dirs`, or undefined for those that do not exist or are outside any git repository. */
function realDirs(dirs: string[]): (string | undefined)[] {
  return dirs.map((d) => {
    if (!existsSync(d) || !mayBeInGitRepo(d)) return undefined;
    try {
      return realpathSync(d);
    } catch {
      return undefined;
    }
  });
}

/** Records the current state of the work tree under `dir`; undefined outside git. */
export async function snapshot(dir: string): Promise<Snapshot | undefined> {
  return snapshotScopes([dir]);
}

/**
 * One snapshot covering the work trees under every folder of `dirs` (all in one repository): one
 * shell stages them all into one throwaway index and writes one tree, which serves each of them
 * (a diff reads only its own folder of it). Undefined outside git, or when a folder is missing
 * or cannot be staged (the caller then takes them one by one).
 */
export async function snapshotScopes(dirs: string[]): Promise<Snapshot | undefined> {
  const real = realDirs(dirs);
  if (real.some((d) => d === undefined)) return undefined;
  const scopes = real as string[];
  const r = await inTempIndex(
    scopes,
    `git add -A -- "$@" || exit 4
head=$(git rev-parse --verify -q HEAD) || head=
tree=$(git write-tree) || exit 4
printf '%s\\n%s\\n%s\\n' "$top" "$head" "$tree"
`,
    scopes,
  );
  if (!r || r.code !== 0) return undefined;
  const [root, commit, tree] = r.stdout.toString('utf8').split('\n');
  return root && tree ? { root, commit: commit || undefined, tree } : undefined;
}

export interface ScopeDiff {
  patch: string;
  /** The changed paths, relative to the repository root. */
  files: string[];
}

/**
 * The patch of everything that changed under `dir` since `baseTree` (binary-safe, untracked
 * files included), plus the changed paths relative to the repository root.
 */
export async function diffSince(dir: string, baseTree: string | undefined): Promise<ScopeDiff | undefined> {
  return (await diffScopes([{ dir, baseTree }]))?.[0];
}

/**
 * diffSince for several folders of one repository together. One shell stages them all into one
 * throwaway index and lists the changed paths of all of them at once (per base tree; the folders
 * of one snapshot batch share theirs); only the folders with changes get their patch, from that
 * same index, in a second shell. Undefined when a folder is missing or a git command fails (the
 * caller then takes them one by one).
 */
export async function diffScopes(
  items: readonly { dir: string; baseTree: string | undefined }[],
): Promise<ScopeDiff[] | undefined> {
  const real = realDirs(items.map((i) => i.dir));
  if (real.some((d) => d === undefined)) return undefined;
  const scopes = real as string[];
  const bases = items.map((i) => i.baseTree ?? EMPTY_TREE);
  const trees = [...new Set(bases)];
  return withProductTemp('orchestrate-index-', async (tmp) => {
    const opts = { cwd: scopes[0]!, env: { GIT_INDEX_FILE: join(tmp, 'index') }, writable: [tmp] };
    try {
      // Tree ids are hex: the list of them travels as one word-split argument. Per tree: its
      // changed paths (NUL-terminated), then an empty one.
      const listed = await productGitScript(
        `${TEMP_INDEX}trees=$1
shift
git add -A -- "$@" || exit 4
printf '%s\\0' "$top"
for t in $trees; do
  git diff --cached --name-only -z --no-renames --no-ext-diff --no-textconv "$t" -- "$@" || exit 5
  printf '\\0'
done
`,
        [trees.join(' '), ...scopes],
        opts,
      );
      if (listed.code !== 0) return undefined;
      const fields = listed.stdout.toString('utf8').split('\0');
      const top = fields[0] ?? '';
      const changedBy = new Map<string, string[]>();
      let at = 1;
      for (const t of trees) {
        const names: string[] = [];
        for (; at < fields.length && fields[at] !== ''; at++) names.push(fields[at]!);
        if (at >= fields.length) return undefined;
        at++;
        changedBy.set(t, names);
      }
      const files = scopes.map((dir, i) => {
        const rel = relative(top, dir).split(sep).join('/');
        const inScope = (f: string): boolean => rel === '' || f === rel || f.startsWith(`${rel}/`);
        return (changedBy.get(bases[i]!) ?? []).filter(inScope);
      });
      const changed = scopes.map((_, i) => i).filter((i) => files[i]!.length > 0);
      const patches = new Map<number, string>();
      if (changed.length > 0) {
        // The index staged above is still in place: the patches are of the same state as the names.
        const diffed = await productGitScript(
          `trees=$1
shift
for d do
  t=\${trees%% *}
  trees=\${trees#* }
  git diff --cached --binary --no-color --no-ext-diff --no-textconv "$t" -- "$d" || exit 5
  printf '\\0'
done
`,
          [changed.map((i) => bases[i]).join(' '), ...changed.map((i) => scopes[i]!)],
          opts,
        );
        if (diffed.code !== 0) return undefined;
        // git's binary patches are base85 text: a NUL ends each one.
        const out = diffed.stdout.toString('utf8').split('\0');
        if (out.length !== changed.length + 1) return undefined;
        changed.forEach((i, k) => patches.set(i, out[k] ?? ''));
      }
      return scopes.map((_, i) => ({ patch: patches.get(i) ?? '', files: files[i]! }));
    } catch {
      return undefined;
    }
  });
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
