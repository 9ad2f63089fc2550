// A task's workspace travelling between a coordinator and a worker that share nothing but Redis.
//
// The coordinator packs the workspace (packWorkspace), the worker unpacks it into a git repo of
// its own whose baseline is that state (unpackWorkspace), the agent works there, the worker sends
// back the patch of what changed (workspaceDiff), and the coordinator applies it to the original
// folder (applyWorkspacePatch). The same patch also restores a checkpoint onto a fresh unpack.
//
// Packing never writes into the user's repository: the snapshot commit is written through a
// temporary index into a temporary object store that borrows the repository's objects as an
// alternate, so the user's index, refs and objects stay as they were.
//
// Every git and tar here runs through tools/product-git: an allowlisted environment (no provider
// key), the repository's program-valued config (fsmonitor, hooks, filters ...) disabled, inside
// bubblewrap where it works. A shipped archive's top-level `.git` is never unpacked.
import {
  existsSync,
  lstatSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  realpathSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { homedir, tmpdir } from 'node:os';
import { join, relative, resolve, sep } from 'node:path';
import { copyGitIndex } from '../orchestrator/workspace/git-workspace.js';
import {
  ProductCommandError,
  findRepository,
  productGit,
  productGitScript,
  type ProductCommandOptions,
  type ProductCommandResult,
} from '../tools/product-git.js';
import { type TarResult, tarFolder, tarPaths } from './tar-writer.js';
import {
  ALWAYS_EXCLUDED,
  WORKSPACE_BASE_REF,
  errorText,
  excludePathspecs,
  oneLine,
  rememberBaseline,
} from './workspace-patch.js';

// Diffing and applying (workspace-patch.ts) are part of this module's API.
export {
  WORKSPACE_BASE_REF,
  applyWorkspacePatch,
  forgetWorkspace,
  resetToBaseline,
  workspaceDiff,
} from './workspace-patch.js';

export interface PackedWorkspace {
  kind: 'git' | 'folder';
  /** The bytes that travel (a git bundle, or a tar archive of a plain folder). */
  data: Buffer;
  /** For kind git: the commit (in the bundle) holding the workspace as it was, uncommitted changes included. */
  base?: string;
  /** Names (globs) left out when packing; the unpacked copy ignores them too, so they never come back in a diff. */
  exclude?: string[];
  /**
   * Ignore rules that applied to the workspace but live outside it (the repository's info/exclude,
   * the user's global excludes, .gitignore files above a subfolder), so a diff on the worker skips
   * what git would skip on the coordinator.
   */
  ignore?: string;
}

/**
 * The most bytes a packed workspace may have. It travels through Redis (held in memory there and
 * on both ends); 64 MiB holds the source of large projects (compressed) while stopping a folder
 * full of build output or media by mistake. `orchestrate --max-workspace-mb` changes it.
 */
export const DEFAULT_MAX_WORKSPACE_BYTES = 64 * 1024 * 1024;

/** Commits made here are bookkeeping, not the user's: a fixed identity works where none is configured. */
const IDENTITY_ENV = {
  GIT_AUTHOR_NAME: 'orchestrate',
  GIT_AUTHOR_EMAIL: 'orchestrate@localhost',
  GIT_COMMITTER_NAME: 'orchestrate',
  GIT_COMMITTER_EMAIL: 'orchestrate@localhost',
};

/** How far past the limit a too-large pack is still measured, so the error can say how big it is. */
const OVERSIZE_MEASURE_FACTOR = 4;

type CommandResult = ProductCommandResult;
type CommandOptions = ProductCommandOptions;
const CommandError = ProductCommandError;

/**
 * A product git (tools/product-git): the parent's GIT_DIR and friends never reach it, no config
 * of the repository can name a program for it, and it runs sandboxed where bwrap works.
 */
function git(args: string[], opts: CommandOptions): Promise<CommandResult> {
  return productGit(args, opts);
}

/** Runs git and returns its trimmed stdout; throws with git's own reason when it fails. */
async function gitText(args: string[], opts: CommandOptions): Promise<string> {
  const r = await git(args, opts);
  if (r.code !== 0)
    throw new CommandError(
      `git ${args[0] ?? ''} failed in ${opts.cwd}: ${oneLine(r.stderr) || `exit code ${String(r.code)}`}`,
    );
  return r.stdout.toString('utf8').trim();
}

/** A size for messages: KB below a megabyte, else MB with one decimal. */
export function megabytes(bytes: number): string {
  if (bytes < 1024 * 1024) return `${Math.ceil(bytes / 1024)} KB`;
  return `${(bytes / (1024 * 1024)).toFixed(1)} MB`;
}

/**
 * Pathspecs leaving out untracked folders that are git repositories of their own (a clone inside
 * the workspace): git cannot add their files one by one, so they neither travel nor come back.
 */
async function nestedRepoPathspecs(
  cwd: string,
  specs: string[],
  env?: Record<string, string>,
  writable?: string[],
): Promise<string[]> {
  const r = await git(['ls-files', '-z', '--others', '--exclude-standard', '--', '.', ...specs], {
    cwd,
    env,
    writable,
  });
  if (r.code !== 0) throw new CommandError(`git ls-files failed in ${cwd}: ${oneLine(r.stderr)}`);
  return r.stdout
    .toString('utf8')
    .split('\0')
    .filter((p) => p.endsWith('/'))
    .map((p) => `:(exclude,literal)${p.slice(0, -1)}`);
}

function checkExcludeNames(names: string[]): string | undefined {
  const bad = names.find(
    (n) => n.trim() === '' || n.includes('/') || n.includes('\\') || n === '.' || n === '..' || n.startsWith(':'),
  );
  return bad === undefined
    ? undefined
    : `exclude entry "${bad}" is not a file or folder name: give names such as "node_modules" or "*.log", not paths`;
}

// ---------------------------------------------------------------------------------------------
// Packing

/**
 * Packs the workspace folder `dir` into bytes that can travel. The top level of a git work tree
 * becomes a git bundle whose commit holds HEAD plus every uncommitted change (staged, unstaged,
 * untracked but not ignored, deletions); any other folder becomes a tar archive (in a subfolder of
 * a repository, without the files git ignores). The `.orchestrate` folder and `opts.exclude`
 * names are left out. Fails, without packing, when the data would pass `opts.maxBytes`.
 */
export async function packWorkspace(
  dir: string,
  opts: { maxBytes?: number; exclude?: string[] } = {},
): Promise<{ ok: true; packed: PackedWorkspace } | { ok: false; error: string }> {
  const maxBytes = opts.maxBytes ?? DEFAULT_MAX_WORKSPACE_BYTES;
  if (!Number.isFinite(maxBytes) || maxBytes <= 0)
    return {
      ok: false,
      error: `the workspace size limit must be a positive number of bytes (got ${String(maxBytes)})`,
    };
  const exclude = [...new Set([...ALWAYS_EXCLUDED, ...(opts.exclude ?? [])])];
  const badName = checkExcludeNames(exclude);
  if (badName) return { ok: false, error: badName };
  const abs = resolve(dir);
  let real: string;
  try {
    real = realpathSync(abs);
    if (!statSync(real).isDirectory()) return { ok: false, error: `the workspace ${abs} is not a folder` };
  } catch {
    return { ok: false, error: `the workspace folder ${abs} does not exist` };
  }
  try {
    // No .git here or above: a plain folder, told without a git process (git would find no work tree either).
    const top = findRepository(real) === undefined ? undefined : await workTreeTop(real);
    if (top !== undefined && realpathSync(top) === real) return await packGitWorkTree(real, abs, exclude, maxBytes);
    return await packFolder(real, abs, top, exclude, maxBytes);
  } catch (err) {
    return { ok: false, error: `cannot pack the workspace ${abs}: ${errorText(err)}` };
  }
}

/** The top of the git work tree holding `dir`, or undefined when git finds no repository there. */
async function workTreeTop(dir: string): Promise<string | undefined> {
  const r = await git(['rev-parse', '--show-toplevel'], { cwd: dir });
  if (r.code === 0) return r.stdout.toString('utf8').trim() || undefined;
  // Outside a repository; inside a .git folder or a bare repository there is no work tree either.
  if (/not a git repository|must be run in a work tree/i.test(r.stderr)) return undefined;
  throw new CommandError(`git cannot tell whether it is a repository: ${oneLine(r.stderr)}`);
}

function tooLargeError(
  shown: string,
  bytes: number,
  measuredAll: boolean,
  maxBytes: number,
  what: string,
  gitHint: boolean,
): string {
  const size = measuredAll ? megabytes(bytes) : `more than ${megabytes(bytes)}`;
  const fix = gitHint
    ? 'remove build output or large files from it, or add them to .gitignore (ignored files do not travel)'
    : 'remove build output or large files from it (or list them in a .gitignore when it is inside a git repository)';
  return (
    `the workspace ${shown} is too large to send to a worker: ${what} is ${size}, the limit is ${megabytes(maxBytes)}. ` +
    `Raise the limit with --max-workspace-mb, or ${fix}`
  );
}

async function packGitWorkTree(
  root: string,
  shown: string,
  exclude: string[],
  maxBytes: number,
): Promise<{ ok: true; packed: PackedWorkspace } | { ok: false; error: string }> {
  const tmp = mkdtempSync(join(tmpdir(), 'orchestrate-pack-'));
  try {
    const cwd = root;
    const objects = await gitText(['rev-parse', '--path-format=absolute', '--git-path', 'objects'], { cwd });
    // The temp store borrows the repository's objects: both must be visible in the sandbox.
    const inTmp = { writable: [tmp, objects] };
    const index = await gitText(['rev-parse', '--path-format=absolute', '--git-path', 'index'], { cwd });
    const format = await gitText(['rev-parse', '--show-object-format'], { cwd });
    const headRun = await git(['rev-parse', '--verify', '-q', 'HEAD^{commit}'], { cwd });
    const head = headRun.code === 0 ? headRun.stdout.toString('utf8').trim() : undefined;

    // New objects go to a throwaway store that reads the repository's own as an alternate.
    const store = join(tmp, 'snapshot.git');
    await gitText(['init', '-q', '--bare', `--object-format=${format}`, store], { cwd: tmp, ...inTmp });
    writeFileSync(join(store, 'objects', 'info', 'alternates'), `${objects}\n`);
    const tmpIndex = join(tmp, 'index');
    // A copy of the real index keeps git's stat cache: only changed files are read again.
    if (existsSync(index)) copyGitIndex(index, tmpIndex);
    const env = {
      GIT_INDEX_FILE: tmpIndex,
      GIT_OBJECT_DIRECTORY: join(store, 'objects'),
      GIT_ALTERNATE_OBJECT_DIRECTORIES: objects,
    };
    const specs = excludePathspecs(exclude);
    specs.push(...(await nestedRepoPathspecs(cwd, specs, env, [tmp])));
    await gitText(['add', '-A', '--', '.', ...specs], { cwd, env, ...inTmp });
    // Excluded names may also be tracked; they must not travel either.
    const dropSpecs = exclude.flatMap((n) => [`:(glob)**/${n}`, `:(glob)**/${n}/**`]);
    await gitText(['rm', '-r', '-q', '--cached', '--ignore-unmatch', '--', ...dropSpecs], { cwd, env, ...inTmp });
    const tree = await gitText(['write-tree'], { cwd, env, ...inTmp });
    const ignore = await outsideIgnoreRules(root, undefined);

    // With history when it fits (the agent can read the log); else the snapshot alone. A shallow
    // repository lacks the objects of its history, so only its snapshot can travel.
    const shallow = (await gitText(['rev-parse', '--is-shallow-repository'], { cwd })) === 'true';
    const attempts = head && !shallow ? [[head], []] : [[]];
    let last: CommandResult | undefined;
    let failure = '';
    for (const parents of attempts) {
      const commitArgs = [
        'commit-tree',
        '--no-gpg-sign',
        tree,
        ...parents.flatMap((p) => ['-p', p]),
        '-m',
        'orchestrate: workspace snapshot (HEAD plus uncommitted changes)',
      ];
      const commit = await gitText(commitArgs, { cwd, env: { ...env, ...IDENTITY_ENV }, ...inTmp });
      const storeOpts = { cwd: tmp, env: { GIT_DIR: store }, ...inTmp };
      await gitText(['update-ref', 'refs/heads/workspace', commit], storeOpts);
      await gitText(['symbolic-ref', 'HEAD', 'refs/heads/workspace'], storeOpts);
      last = await git(['bundle', 'create', '-q', '-', 'HEAD', 'refs/heads/workspace'], {
        ...storeOpts,
        keepBytes: maxBytes,
        stopAfterBytes: maxBytes * OVERSIZE_MEASURE_FACTOR,
      });
      if (last.stopped || last.stdoutBytes > maxBytes) continue;
      if (last.code === 0)
        return {
          ok: true,
          packed: { kind: 'git', data: last.stdout, base: commit, exclude, ...(ignore ? { ignore } : {}) },
        };
      failure = `git bundle create failed: ${oneLine(last.stderr) || `exit code ${String(last.code)}`}`;
    }
    if (last && !last.stopped && last.stdoutBytes <= maxBytes) throw new CommandError(failure);
    const size = last?.stdoutBytes ?? 0;
    return {
      ok: false,
      error: tooLargeError(
        shown,
        size,
        !last?.stopped,
        maxBytes,
        'its snapshot (committed files plus uncommitted changes, without history)',
        true,
      ),
    };
  } finally {
    rmSync(tmp, { recursive: true, force: true });
  }
}

async function packFolder(
  real: string,
  shown: string,
  repoTop: string | undefined,
  exclude: string[],
  maxBytes: number,
): Promise<{ ok: true; packed: PackedWorkspace } | { ok: false; error: string }> {
  let ignore: string | undefined;
  let r: TarResult;
  // Archived in this process (tar-writer.ts): no tar process per instance.
  const stopAfter = maxBytes * OVERSIZE_MEASURE_FACTOR;
  if (repoTop !== undefined) {
    // A subfolder of a repository: the files git sees (tracked, or untracked and not ignored).
    const listed = await git(
      [
        'ls-files',
        '-z',
        '--cached',
        '--others',
        '--exclude-standard',
        '--deduplicate',
        '--',
        '.',
        ...excludePathspecs(exclude),
      ],
      { cwd: real },
    );
    if (listed.code !== 0) throw new CommandError(`git ls-files failed in ${real}: ${oneLine(listed.stderr)}`);
    const present = listed.stdout
      .toString('utf8')
      .split('\0')
      .filter((p) => p !== '' && !p.endsWith('/') && existsOrIsLink(join(real, p))); // 'x/': a nested repository
    ignore = await outsideIgnoreRules(repoTop, real);
    r = tarPaths(real, present, stopAfter);
  } else {
    r = tarFolder(real, exclude, stopAfter);
  }
  if (r.bytes > maxBytes || r.stopped) {
    return {
      ok: false,
      error: tooLargeError(shown, r.bytes, !r.stopped, maxBytes, 'its archive', repoTop !== undefined),
    };
  }
  return { ok: true, packed: { kind: 'folder', data: r.data, exclude, ...(ignore ? { ignore } : {}) } };
}

function existsOrIsLink(path: string): boolean {
  try {
    lstatSync(path);
    return true;
  } catch {
    return false;
  }
}

/**
 * Ignore rules that apply to `dir` but are not inside it: the repository's info/exclude and the
 * user's global excludes file, and (for a subfolder) the .gitignore files above it. Rules from
 * above a subfolder are kept only when they match at any depth (no slash but a trailing one),
 * since their anchored paths do not carry over to the subfolder's copy.
 */
async function outsideIgnoreRules(repoTop: string, subfolder: string | undefined): Promise<string | undefined> {
  const keepAnchored = subfolder === undefined;
  const rules: string[] = [];
  const add = (text: string, anchoredOk: boolean): void => {
    for (const line of text.split('\n')) {
      const t = line.trimEnd();
      if (t === '' || t.startsWith('#')) continue;
      if (
        anchoredOk ||
        !/\//.test(
          t
            .replace(/^!/, '')
            .replace(/^\*\*\//, '')
            .replace(/\/$/, ''),
        )
      )
        rules.push(t);
    }
  };
  // The global config's only: a repository's own core.excludesFile may name any file (a key, say), which would then travel.
  const global = await git(['config', '--global', '--path', '--get', 'core.excludesFile'], { cwd: repoTop });
  const xdg = process.env.XDG_CONFIG_HOME || join(homedir(), '.config');
  const globalFile = global.code === 0 ? global.stdout.toString('utf8').trim() : join(xdg, 'git', 'ignore');
  add(readIfThere(globalFile), true);
  const infoExclude = await gitText(['rev-parse', '--path-format=absolute', '--git-path', 'info/exclude'], {
    cwd: repoTop,
  });
  add(readIfThere(infoExclude), keepAnchored);
  if (subfolder !== undefined) {
    const top = realpathSync(repoTop);
    const parts = relative(top, subfolder).split(sep).filter(Boolean);
    for (let i = 0; i < parts.length; i++) add(readIfThere(join(top, ...parts.slice(0, i), '.gitignore')), false);
  }
  return rules.length ? `${rules.join('\n')}\n` : undefined;
}

function readIfThere(path: string): string {
  try {
    return readFileSync(path, 'utf8');
  } catch {
    return '';
  }
}

// ---------------------------------------------------------------------------------------------
// Unpacking

/**
 * Makes `into` (missing or empty) hold exactly the packed workspace, as a git repository whose
 * baseline commit (WORKSPACE_BASE_REF) is that state, so workspaceDiff can tell what changed.
 * Throws with a clear message when `into` is not empty or git/tar fail.
 */
export async function unpackWorkspace(packed: PackedWorkspace, into: string): Promise<void> {
  const target = resolve(into);
  if (existsSync(target)) {
    if (!statSync(target).isDirectory())
      throw new Error(`cannot unpack a workspace into ${target}: it is not a folder`);
    if (readdirSync(target).length > 0)
      throw new Error(`cannot unpack a workspace into ${target}: the folder is not empty`);
  }
  mkdirSync(target, { recursive: true });
  try {
    if (packed.kind === 'git') await unpackBundle(packed, target);
    else await unpackArchive(packed, target);
  } catch (err) {
    throw new Error(`cannot unpack the workspace into ${target}: ${errorText(err)}`);
  }
}

/** The info/exclude of an unpacked workspace: what did not travel with it, so a diff never sends it back. */
function ignoreRulesText(packed: PackedWorkspace): string {
  const names = [...new Set([...ALWAYS_EXCLUDED, ...(packed.exclude ?? [])])];
  const lines = ['# written by orchestrate: what did not travel with the workspace', ...names, packed.ignore ?? ''];
  return `${lines.join('\n').trimEnd()}\n`;
}

/** Runs an unpack script in `target` (one sandboxed shell for every step) and says which step failed. */
async function unpackScript(
  script: string,
  args: string[],
  target: string,
  steps: Record<number, string>,
  extra: { input?: Buffer; writable?: string[] } = {},
): Promise<void> {
  const r = await productGitScript(script, args, {
    cwd: target,
    env: IDENTITY_ENV,
    writable: [target, ...(extra.writable ?? [])],
    ...(extra.input ? { input: extra.input } : {}),
  });
  if (r.code !== 0) {
    const step = (r.code !== null && steps[r.code]) || 'git';
    throw new CommandError(`${step} failed: ${oneLine(r.stderr) || `exit code ${String(r.code)}`}`);
  }
}

/**
 * A bundle's unpack: $1 the bundle, $2 the baseline commit, $3 the info/exclude text. A clone
 * without checkout, so info/exclude is in place before the files are.
 */
const UNPACK_BUNDLE_SCRIPT = `git clone -q --no-checkout "$1" . || exit 3
git remote remove origin || exit 4
git update-ref ${WORKSPACE_BASE_REF} "$2" || exit 4
printf '%s' "$3" > .git/info/exclude 2>/dev/null || { mkdir -p .git/info && printf '%s' "$3" > .git/info/exclude; } || exit 4
exec git checkout -q --detach ${WORKSPACE_BASE_REF}
`;

async function unpackBundle(packed: PackedWorkspace, target: string): Promise<void> {
  if (!packed.base) throw new Error('the packed git workspace names no base commit');
  const tmp = mkdtempSync(join(tmpdir(), 'orchestrate-unpack-'));
  try {
    const bundle = join(tmp, 'workspace.bundle');
    writeFileSync(bundle, packed.data);
    // clone reads the bundle's object format.
    await unpackScript(
      UNPACK_BUNDLE_SCRIPT,
      [bundle, packed.base, ignoreRulesText(packed)],
      target,
      { 3: 'git clone', 4: 'git setting up the clone' },
      { writable: [tmp] },
    );
  } finally {
    rmSync(tmp, { recursive: true, force: true });
  }
}

/**
 * A folder archive's unpack, from stdin: $1 the info/exclude text. A top-level \`.git\` in the
 * archive would make \`git init\` adopt its config (fsmonitor, filters ...): never unpacked. The
 * baseline is committed with plumbing (no hooks, no editor); untracked folders that are
 * repositories of their own are left out of it (as nestedRepoPathspecs does).
 */
const UNPACK_ARCHIVE_SCRIPT = `tar -x -f - --no-same-owner --anchored --exclude=./.git --exclude=.git || exit 3
git init -q -b workspace || exit 4
printf '%s' "$1" > .git/info/exclude 2>/dev/null || { mkdir -p .git/info && printf '%s' "$1" > .git/info/exclude; } || exit 4
shift
nested=$(git ls-files -z --others --exclude-standard -- . | tr '\\0' '\\n' | sed -n 's|/$||p') || exit 5
while IFS= read -r p; do
  if [ -n "$p" ]; then set -- "$@" ":(exclude,literal)$p"; fi
done <<__NESTED__
$nested
__NESTED__
git add -A -- . "$@" || exit 5
tree=$(git write-tree) || exit 5
commit=$(git commit-tree --no-gpg-sign "$tree" -m 'orchestrate: workspace baseline') || exit 5
git update-ref HEAD "$commit" || exit 5
exec git update-ref ${WORKSPACE_BASE_REF} "$commit"
`;

async function unpackArchive(packed: PackedWorkspace, target: string): Promise<void> {
  await unpackScript(
    UNPACK_ARCHIVE_SCRIPT,
    [ignoreRulesText(packed)],
    target,
    { 3: 'tar could not extract the archive', 4: 'git init', 5: 'git committing the baseline' },
    { input: packed.data },
  );
  // The baseline is the folder as extracted: its diff is empty until the agent changes a file.
  rememberBaseline(target);
}
