// Git around an instance: a snapshot of the working tree when it starts, an optional worktree of
// its own (`isolation: worktree`), and the patch of what it changed (patches/<key>.diff).
//
// The snapshot is a tree object written through a temporary index, so the user's index and
// working tree are never touched, and the patch shows exactly what this instance changed, even
// when earlier tasks left uncommitted changes behind. Untracked files count (ignored ones don't).
//
// Every git here runs through tools/product-git (sanitized environment, the repository's program
// keys disabled, inside bubblewrap where it works): the repository is the model's to configure.
// Snapshots and diffs also pin the repository (repo-trust.ts: GIT_DIR, GIT_COMMON_DIR,
// GIT_WORK_TREE) and fail, with git's message, rather than give an answer a guard would read as
// "nothing changed": `writes:`, the patch and landing all depend on them.
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
import { productGit, productGitScript, withProductTemp, type ProductCommandOptions } from '../../tools/product-git.js';
import { isInside } from '../../tools/workspace.js';
import { pinnedGitEnv, sameLocation, trustedRepository, type RepositoryLocation } from './repo-trust.js';

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

/** git's error lines for a message of ours: joined, at most three, with how many more there were. */
export function gitErrorLines(stderr: string): string {
  const lines = stderr
    .split('\n')
    .map((l) => l.trim())
    .filter(Boolean);
  return lines.slice(0, 3).join('; ') + (lines.length > 3 ? `; and ${lines.length - 3} more` : '');
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
  /** Where git worked (repo-trust.ts): later snapshots and diffs of this work tree are pinned to it. */
  location: RepoPin;
}

/**
 * Shell prelude of the snapshot and diff scripts (one sandboxed shell each), run in the work
 * tree's top with the repository pinned (repo-trust.ts pinnedGitEnv): checks that core.worktree,
 * if set, names this work tree (`bad=7` and git's view on stderr otherwise: the model may have
 * pointed it elsewhere), then seeds the throwaway index ($GIT_INDEX_FILE) from the repository's
 * index (its path is $1) with a copy keeping its mtime (see copyGitIndex). `$ignores` is what
 * makes git ignore files besides .gitignore; with ORCHESTRATE_IGNORES (the pin's) it must be the
 * same (`bad=8` otherwise: a line the model added to info/exclude would hide its new files from
 * `writes:` and the patch). The script then stages
 * only the instances' folders: the rest of the tree comes from the index as it is.
 */
const PINNED_INDEX = `idx=$1
shift
bad=0
if wt=$(git config --get core.worktree); then
  at=$(cd "$GIT_DIR" 2>/dev/null && cd "$wt" 2>/dev/null && pwd -P) || at=
  if [ "$at" != "$(pwd -P)" ]; then
    printf 'core.worktree in %s/config is set to %s, not to this work tree (%s)\\n' "$GIT_DIR" "$wt" "$(pwd -P)" >&2
    bad=7
  fi
fi
ignores=$(git config --get core.excludesFile; cat "$GIT_COMMON_DIR/info/exclude" 2>/dev/null)
if [ -n "\${ORCHESTRATE_IGNORES+set}" ] && [ "$ignores" != "$ORCHESTRATE_IGNORES" ]; then
  printf '%s/info/exclude or core.excludesFile changed since the snapshot: files they now ignore would be hidden from the check\\n' "$GIT_COMMON_DIR" >&2
  [ "$bad" = 0 ] && bad=8
fi
if [ -f "$idx" ]; then cp -p "$idx" "$GIT_INDEX_FILE" || exit 3; fi
ex=
if [ -n "\${ORCHESTRATE_EXCLUDE-}" ] && ! git check-ignore -q -- "$ORCHESTRATE_EXCLUDE"; then
  ex=":(exclude,literal)$ORCHESTRATE_EXCLUDE"
fi
`;

/** Exit codes of the scripts that mean "the repository is not as the product left it". */
const EXIT_STAGING_FAILED = 6;
const EXIT_WORKTREE_MOVED = 7;
const EXIT_IGNORES_CHANGED = 8;

/**
 * A repository as a snapshot found it (repo-trust.ts), with what made git ignore files then
 * (core.excludesFile and info/exclude, which live in the model's reach and apply to every
 * folder): a later snapshot or diff pinned to it fails when they changed.
 */
export interface RepoPin extends RepositoryLocation {
  ignores?: string;
}

/** git's error lines, joined, at most three. */
function gitMessage(stderr: string, fallback: string): string {
  const lines = stderr
    .split('\n')
    .map((l) => l.trim())
    .filter(Boolean);
  if (lines.length === 0) return fallback;
  return lines.slice(0, 3).join('; ') + (lines.length > 3 ? `; and ${lines.length - 3} more` : '');
}

/** What to do about a nested repository git cannot stage, when that is what went wrong. */
function stagingHint(stderr: string): string {
  return /does not have a commit checked out/.test(stderr)
    ? ' (a nested git repository without a commit: commit in it, remove it, or list it in .gitignore)'
    : '';
}

/** The real paths of `dirs`, or undefined for those that do not exist or are outside any git repository. */
function realDirs(dirs: readonly string[]): (string | undefined)[] {
  return dirs.map((d) => {
    if (!existsSync(d) || !mayBeInGitRepo(d)) return undefined;
    try {
      return realpathSync(d);
    } catch {
      return undefined;
    }
  });
}

/**
 * Where the product's git works for `dirs` (real paths, one repository): the repository as it is
 * now, when orchestrate trusts it and it is `pin` (the place an earlier snapshot of it used), else
 * why not. `location` is what may still be used to look at the changes (the pin when there is one).
 */
function locate(dirs: readonly string[], pin: RepoPin | undefined): { location?: RepoPin; problem?: string } {
  const now = trustedRepository(dirs[0]!);
  const location = pin ?? (now.ok ? now.location : undefined);
  let problem = now.ok ? undefined : now.error;
  if (now.ok && pin && !sameLocation(now.location, pin))
    problem = `the repository of ${pin.top} changed while the run used it: git would now work in ${now.location.top} with ${now.location.gitDir} (objects in ${now.location.commonDir}) instead of ${pin.gitDir}. Something in the workspace (an agent's command?) rewired its git metadata; undo that, then run again`;
  const outside = location ? dirs.find((d) => !isInside(location.top, d)) : undefined;
  if (outside && location) problem ??= `${outside} is not in the work tree of ${location.top}`;
  return { ...(location ? { location } : {}), ...(problem ? { problem } : {}) };
}

/**
 * The folder to leave out of snapshots and diffs of the work tree at `top`, relative to it: the
 * runs folder (`runs`, a real path), when it lies inside that work tree and holds none of `scopes`
 * (the run writes its own files there: sessions, logs and patches are no instance's work).
 */
function excludedFolder(top: string, scopes: readonly string[], runs: string | undefined): string | undefined {
  if (runs === undefined || !isInside(top, runs) || runs === top || scopes.some((d) => isInside(runs, d)))
    return undefined;
  return relative(top, runs).split(sep).join('/');
}

/**
 * Options of a product git script pinned to `loc`, with a throwaway index in `tmp`; `exclude`, a
 * folder (relative to the work tree) its git commands leave out.
 */
function pinnedOptions(loc: RepoPin, tmp: string, exclude?: string) {
  return {
    cwd: loc.top,
    env: {
      ...pinnedGitEnv(loc),
      GIT_INDEX_FILE: join(tmp, 'index'),
      ...(loc.ignores !== undefined ? { ORCHESTRATE_IGNORES: loc.ignores } : {}),
      ...(exclude !== undefined ? { ORCHESTRATE_EXCLUDE: exclude } : {}),
    },
    writable: [tmp, loc.top, loc.gitDir, loc.commonDir],
  };
}

export type SnapshotOutcome = ({ ok: true } & Snapshot) | { ok: false; error: string };

/** Records the current state of the work tree under `dir`; undefined outside git or when git fails. */
export async function snapshot(dir: string): Promise<Snapshot | undefined> {
  const r = await snapshotScopes([dir]);
  return r.ok ? r : undefined;
}

/**
 * One snapshot covering the work trees under every folder of `dirs` (all in one repository): one
 * shell stages them all into one throwaway index and writes one tree, which serves each of them
 * (a diff reads only its own folder of it). Fails (with git's message) when a folder is missing,
 * the repository is not one orchestrate trusts (repo-trust.ts) or is not `pin`, core.worktree
 * names another place, or a folder cannot be staged (a nested repository without a commit).
 */
export async function snapshotScopes(
  dirs: readonly string[],
  pin?: RepoPin,
  runsDir?: string,
): Promise<SnapshotOutcome> {
  const real = realDirs(dirs);
  const missing = real.indexOf(undefined);
  if (missing >= 0) return { ok: false, error: `${dirs[missing]} does not exist or is not in a git repository` };
  const scopes = real as string[];
  const { location, problem } = locate(scopes, pin);
  if (problem || !location) return { ok: false, error: problem ?? `${scopes[0]} is not in a git repository` };
  return withProductTemp('orchestrate-index-', async (tmp) => {
    let r: { code: number | null; stdout: Buffer; stderr: string };
    try {
      r = await productGitScript(
        `${PINNED_INDEX}[ "$bad" = 0 ] || exit "$bad"
git add -A -- "$@" \${ex:+"$ex"} || exit 4
head=$(git rev-parse --verify -q HEAD) || head=
tree=$(git write-tree) || exit 4
printf '%s\\n%s\\n%s' "$head" "$tree" "$ignores"
`,
        [join(location.gitDir, 'index'), ...scopes],
        pinnedOptions(location, tmp, excludedFolder(location.top, scopes, runsDir)),
      );
    } catch (err) {
      return {
        ok: false,
        error: `cannot run git in ${location.top}: ${err instanceof Error ? err.message : String(err)}`,
      };
    }
    const [commit, tree, ...ignored] = r.stdout.toString('utf8').split('\n');
    const said = gitMessage(r.stderr, `exit code ${String(r.code)}`);
    if (r.code === EXIT_IGNORES_CHANGED)
      return { ok: false, error: `the repository at ${location.top} is not as the run found it: ${said}` };
    if (r.code === EXIT_WORKTREE_MOVED)
      return {
        ok: false,
        error: `the repository at ${location.top} is not one orchestrate trusts: ${said}. Unset it (git config --unset core.worktree), then run again`,
      };
    if (r.code !== 0 || !tree)
      return { ok: false, error: `git cannot take a snapshot of ${location.top}: ${said}${stagingHint(r.stderr)}` };
    return {
      ok: true,
      root: location.top,
      commit: commit || undefined,
      tree,
      location: { ...location, ignores: ignored.join('\n') },
    };
  });
}

export interface ScopeDiff {
  patch: string;
  /** The changed paths, relative to the repository root. */
  files: string[];
}

/**
 * A diff, or why it could not be trusted. `files`, when there, are the changed paths git could
 * still list (through the pinned repository), for the user to see what the instance changed.
 */
export type DiffOutcome = ({ ok: true } & ScopeDiff) | { ok: false; error: string; files?: string[] };

/**
 * The patch of everything that changed under `dir` since `baseTree` (binary-safe, untracked
 * files included), plus the changed paths relative to the repository root. Undefined outside git
 * or when the diff cannot be trusted (diffScopes says why).
 */
export async function diffSince(dir: string, baseTree: string | undefined): Promise<ScopeDiff | undefined> {
  const r = (await diffScopes([{ dir, baseTree }]))[0]!;
  return r.ok ? { patch: r.patch, files: r.files } : undefined;
}

/**
 * diffSince for several folders of one repository together. One shell stages them all into one
 * throwaway index and lists the changed paths of all of them at once (per base tree; the folders
 * of one snapshot batch share theirs); only the folders with changes get their patch, from that
 * same index, in a second shell. Each outcome fails, with git's message, when a folder is
 * missing, a git command fails, or the repository is not the trusted `pin` any more (the changed
 * paths are then still listed through the pin where git can).
 */
export async function diffScopes(
  items: readonly { dir: string; baseTree: string | undefined }[],
  pin?: RepoPin,
  runsDir?: string,
): Promise<DiffOutcome[]> {
  const failAll = (error: string, files?: string[][]): DiffOutcome[] =>
    items.map((_, i) => ({ ok: false, error, ...(files ? { files: files[i]! } : {}) }));
  const real = realDirs(items.map((i) => i.dir));
  const missing = real.indexOf(undefined);
  if (missing >= 0) return failAll(`${items[missing]!.dir} does not exist or is not in a git repository`);
  const scopes = real as string[];
  const { location, problem } = locate(scopes, pin);
  if (!location) return failAll(problem ?? `${scopes[0]} is not in a git repository`);
  if (scopes.some((d) => !isInside(location.top, d))) return failAll(problem ?? 'outside the work tree');
  const bases = items.map((i) => i.baseTree ?? EMPTY_TREE);
  const trees = [...new Set(bases)];
  return withProductTemp('orchestrate-index-', async (tmp) => {
    const opts = pinnedOptions(location, tmp, excludedFolder(location.top, scopes, runsDir));
    try {
      // Tree ids are hex: the list of them travels as one word-split argument. Per tree: its
      // changed paths (NUL-terminated), then an empty one. Staging goes on past a path git cannot
      // add (--ignore-errors), so the paths it could list are still named when that fails it.
      const listed = await productGitScript(
        `${PINNED_INDEX}trees=$1
shift
git add -A --ignore-errors -- "$@" \${ex:+"$ex"} || { [ "$bad" = 0 ] && bad=${EXIT_STAGING_FAILED}; }
for t in $trees; do
  git diff --cached --name-only -z --no-renames --no-ext-diff --no-textconv "$t" -- "$@" \${ex:+"$ex"} || exit 5
  printf '\\0'
done
exit "$bad"
`,
        [join(location.gitDir, 'index'), trees.join(' '), ...scopes],
        opts,
      );
      const code = listed.code;
      const fields = listed.stdout.toString('utf8').split('\0');
      const changedBy = new Map<string, string[]>();
      let at = 0;
      for (const t of trees) {
        const names: string[] = [];
        for (; at < fields.length && fields[at] !== ''; at++) names.push(fields[at]!);
        at++;
        changedBy.set(t, names);
      }
      const complete = at <= fields.length;
      const files = scopes.map((dir, i) => {
        const rel = relative(location.top, dir).split(sep).join('/');
        const inScope = (f: string): boolean => rel === '' || f === rel || f.startsWith(`${rel}/`);
        return (changedBy.get(bases[i]!) ?? []).filter(inScope);
      });
      const listedOk =
        complete &&
        (code === 0 || code === EXIT_STAGING_FAILED || code === EXIT_WORKTREE_MOVED || code === EXIT_IGNORES_CHANGED);
      if (problem || code !== 0) {
        const said = gitMessage(listed.stderr, `exit code ${String(code)}`);
        const why = [
          problem,
          code === EXIT_IGNORES_CHANGED
            ? `the repository at ${location.top} is not as the run found it: ${said}. Undo that change (what the instance wrote there), then run again`
            : code === EXIT_WORKTREE_MOVED
              ? `the repository at ${location.top} is not one orchestrate trusts: ${said}. Something in the workspace (an agent's command?) set it; unset it (git config --unset core.worktree), then run again`
              : code !== 0
                ? `git cannot measure the changes in ${location.top}: ${said}${stagingHint(listed.stderr)}`
                : undefined,
        ]
          .filter(Boolean)
          .join('; ');
        return failAll(why, listedOk ? files : undefined);
      }
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
  git diff --cached --binary --no-color --no-ext-diff --no-textconv "$t" -- "$d" \${ORCHESTRATE_EXCLUDE:+":(exclude,literal)$ORCHESTRATE_EXCLUDE"} || exit 5
  printf '\\0'
done
`,
          [changed.map((i) => bases[i]).join(' '), ...changed.map((i) => scopes[i]!)],
          opts,
        );
        // git's binary patches are base85 text: a NUL ends each one.
        const out = diffed.stdout.toString('utf8').split('\0');
        if (diffed.code !== 0 || out.length !== changed.length + 1)
          return failAll(
            `git cannot write the patch of the changes in ${location.top}: ${gitMessage(diffed.stderr, `exit code ${String(diffed.code)}`)}`,
            files,
          );
        for (const [k, i] of changed.entries()) patches.set(i, out[k] ?? '');
      }
      return scopes.map((_, i) => ({ ok: true, patch: patches.get(i) ?? '', files: files[i]! }));
    } catch (err) {
      return failAll(`cannot run git in ${location.top}: ${err instanceof Error ? err.message : String(err)}`);
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
