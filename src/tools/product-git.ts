// Every git and tar the product itself runs on a workspace (snapshots, patches, checkpoints,
// worktrees, merges, packing and unpacking a workspace for a worker) goes through here, because
// the workspace is the model's: an agent that writes `.git/config` (core.fsmonitor, a filter or
// textconv driver, core.hooksPath, credential.helper ...), `.gitattributes` or `.git/hooks/*` must
// not get a program run outside its sandbox, and never with the provider keys.
//
// Three layers, so that a git config key nobody thought of cannot reopen the hole:
//  (a) The environment is an allowlist (PATH, TZ, USER, LOGNAME, TMPDIR, LC_ALL=C) plus only the
//      GIT_* variables the caller sets: no provider key, no credential, no GIT_DIR of the parent.
//      HOME is an empty private folder; GIT_CONFIG_NOSYSTEM, GIT_ATTR_NOSYSTEM; the global config
//      is a file written here holding only harmless keys of the user's own (identity, excludes and
//      attributes files copied in, line endings, safe.directory, the CA file an https push trusts).
//  (b) Every program-valued key known is overridden on the command line's level (GIT_CONFIG_COUNT,
//      which also reaches the gits that git starts): fsmonitor off, hooks at /dev/null, no
//      credential helper, no signing, every transport but file/bundle refused. The drivers the
//      repository defines (filter.*.clean/smudge/process, diff.*.textconv/command,
//      merge.*.driver, credential.*.helper, pager.*) are listed with `git config --name-only
//      --list`, which runs no program, right before the command in the same shell, and emptied
//      (an empty clean/smudge/process with required=false means "no filter", checked by test).
//      Diffs are run with --no-ext-diff --no-textconv by the callers.
//  (c) Where bubblewrap works (probeSandbox), the shell and git run inside the same kind of sandbox
//      as agent commands: no network, hidden secrets, read-only root, only the repository (work
//      tree and git folders) and the folders the caller names writable. Several git commands are
//      batched into one sandboxed shell (productGitScript) so a snapshot pays one bwrap start.
// Where bwrap is missing (or not on Linux), (a) and (b) still hold but (c) does not: a config key
// that names a program and is missing from (b) would then run unconfined (without provider keys).
// Without bwrap the agents' own commands run unconfined too, so the model is not confined anyway.
// None of this lets a git reach the network: the gits that do (publishing's ls-remote, fetch and
// push) run in network-git.ts, in a git folder of the product's that reads no repository config,
// because a denylist of keys cannot keep a network setting (http.proxy, insteadOf ...) out.
import { execFile, spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { homedir, tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { defaultBwrapPath, probeSandbox, probeSandboxAsync, sandboxedSpawn } from './sandbox.js';
import { sandboxGitConfigAsync } from './sandbox-git-config.js';

export interface ProductCommandOptions {
  cwd: string;
  /** Variables for this command (GIT_INDEX_FILE, GIT_OBJECT_DIRECTORY, identity ...): the only ones beyond the allowlist. */
  env?: Readonly<Record<string, string>>;
  input?: Buffer | string;
  /** Folders the command writes besides the repository holding `cwd` (a temp index's folder, a clone's target). */
  writable?: readonly string[];
  /** Keep at most this many stdout bytes (the rest is counted, not kept). */
  keepBytes?: number;
  /** Kill the command once stdout passes this many bytes. */
  stopAfterBytes?: number;
  /**
   * Reach the network (a push to a forge over https): the sandbox keeps its network, and https
   * joins the allowed transports. Only network-git.ts sets it (a git folder of the product's, with
   * no repository config), never a git run in the workspace.
   */
  network?: boolean;
  /** Config keys set above every file for this command (an auth header: in the environment, never in argv). */
  config?: readonly (readonly [string, string])[];
  /** Folders the sandbox shows read-only (a workspace's object store read by a throwaway git folder). */
  readOnly?: readonly string[];
  /**
   * Run without bubblewrap: only for a git that reads nothing the model wrote but objects (the
   * network git of network-git.ts over ssh, which needs the user's ssh agent and known_hosts).
   */
  unconfined?: boolean;
}

export interface ProductCommandResult {
  code: number | null;
  stdout: Buffer;
  stderr: string;
  /** Bytes written to stdout (counted even after `keepBytes` stopped keeping them). */
  stdoutBytes: number;
  /** True when the command was stopped because stdout passed `stopAfterBytes`. */
  stopped: boolean;
}

/** Thrown when git, tar or the sandbox cannot be started at all. */
export class ProductCommandError extends Error {}

/**
 * Program-valued keys with a fixed harmless value, applied above every config file (the
 * repository's, its includes', the global one).
 */
export const PROGRAM_KEY_OVERRIDES: readonly (readonly [string, string])[] = [
  ['core.fsmonitor', 'false'],
  ['core.hooksPath', '/dev/null'],
  ['core.sshCommand', 'false'],
  ['core.askPass', 'false'],
  ['core.gitProxy', 'false'],
  ['core.editor', 'false'],
  ['core.pager', 'cat'],
  ['core.alternateRefsCommand', ''],
  ['sequence.editor', 'false'],
  ['credential.helper', ''],
  ['diff.external', ''],
  ['gpg.program', 'false'],
  ['gpg.openpgp.program', 'false'],
  ['gpg.x509.program', 'false'],
  ['gpg.ssh.program', 'false'],
  ['gpg.ssh.defaultKeyCommand', 'false'],
  ['commit.gpgSign', 'false'],
  ['tag.gpgSign', 'false'],
  ['push.gpgSign', 'false'],
  ['protocol.allow', 'never'],
  ['protocol.file.allow', 'always'],
  ['submodule.recurse', 'false'],
  ['fetch.recurseSubmodules', 'false'],
  ['gc.auto', '0'],
  ['maintenance.auto', 'false'],
  ['core.splitIndex', 'false'],
  ['advice.detachedHead', 'false'],
];

/**
 * Run first in every product shell: lists the repository's own keys and empties those naming a
 * driver program (names vary: filter.<any>.clean ...). `git config --list` itself runs nothing.
 */
const NEUTRALIZE_DRIVERS = `__n=\${GIT_CONFIG_COUNT:-0}
while IFS= read -r __k; do
  case "$__k" in
    filter.*.clean|filter.*.smudge|filter.*.process|diff.*.textconv|diff.*.command|merge.*.driver|credential.*.helper) __v= ;;
    filter.*.required) __v=false ;;
    pager.*) __v=false ;;
    *) continue ;;
  esac
  export "GIT_CONFIG_KEY_$__n=$__k" "GIT_CONFIG_VALUE_$__n=$__v"
  __n=$((__n+1))
done <<__ORCHESTRATE_EOF__
$(git config --name-only --list 2>/dev/null)
__ORCHESTRATE_EOF__
export GIT_CONFIG_COUNT=$__n
unset __n __k __v
`;

/** Parent variables a product git may see (all else, provider keys included, stays out). */
const ENV_ALLOWLIST = ['PATH', 'TZ', 'USER', 'LOGNAME', 'TMPDIR'];

/** Keys of the user's global config carried into the product's one: none of them names a program. */
const CARRIED_GLOBAL_KEYS = new Set([
  'user.name',
  'user.email',
  'core.autocrlf',
  'core.eol',
  'core.safecrlf',
  'core.quotepath',
  'core.precomposeunicode',
  'init.defaultbranch',
  'safe.directory',
]);

interface PrivateGitHome {
  /** The folder holding everything below (read-only inside the sandbox). */
  dir: string;
  /** HOME of every product git: empty. */
  home: string;
  /** GIT_CONFIG_GLOBAL of every product git. */
  globalConfig: string;
}

let privateHome: PrivateGitHome | undefined;

function quoteConfigValue(v: string): string {
  return `"${v.replace(/\\/g, '\\\\').replace(/"/g, '\\"').replace(/\n/g, '\\n').replace(/\t/g, '\\t')}"`;
}

/** `~/x` and `$HOME/x` as git expands them in a path-valued key. */
function expandHome(path: string): string {
  return path.startsWith('~/') ? join(homedir(), path.slice(2)) : path;
}

/**
 * The user's global config keys worth keeping (identity, line endings, ...) and the excludes and
 * attributes files it names (or git's defaults), read once with the user's real environment.
 * Reading config runs no program.
 */
interface UserGlobalConfig {
  keys: [string, string][];
  excludesFile?: string;
  attributesFile?: string;
  /**
   * The certificates a push over https trusts: GIT_SSL_CAINFO, else the user's http.sslCAInfo
   * (a self-hosted forge behind a company's CA). Unset: the system's bundle, as for git itself.
   */
  caFile?: string;
}

/** `git config --global --list -z` with the user's real environment (minus GIT_* but the config's own). */
function userGlobalConfigCommand() {
  const env: Record<string, string | undefined> = { ...process.env, GIT_CONFIG_NOSYSTEM: '1', LC_ALL: 'C' };
  for (const k of Object.keys(env))
    if (k.startsWith('GIT_') && k !== 'GIT_CONFIG_GLOBAL' && k !== 'GIT_CONFIG_NOSYSTEM') delete env[k];
  return { args: ['config', '--global', '--list', '-z'], options: { env, encoding: 'utf8' as const, cwd: tmpdir() } };
}

function parseUserGlobalConfig(listed: string | undefined): UserGlobalConfig {
  const keys: [string, string][] = [];
  let excludesFile: string | undefined;
  let attributesFile: string | undefined;
  let caFile = process.env.GIT_SSL_CAINFO || undefined;
  for (const entry of listed !== undefined ? listed.split('\0') : []) {
    const nl = entry.indexOf('\n');
    const key = (nl < 0 ? entry : entry.slice(0, nl)).toLowerCase();
    const value = nl < 0 ? 'true' : entry.slice(nl + 1);
    if (key === 'core.excludesfile') excludesFile = expandHome(value);
    else if (key === 'core.attributesfile') attributesFile = expandHome(value);
    else if (key === 'http.sslcainfo') caFile ??= expandHome(value);
    else if (CARRIED_GLOBAL_KEYS.has(key)) keys.push([key, value]);
  }
  const xdg = process.env.XDG_CONFIG_HOME || join(homedir(), '.config');
  return {
    keys,
    excludesFile: excludesFile ?? join(xdg, 'git', 'ignore'),
    attributesFile: attributesFile ?? join(xdg, 'git', 'attributes'),
    ...(caFile ? { caFile } : {}),
  };
}

/**
 * The user's global config keys worth keeping (identity, line endings, ...) and the excludes and
 * attributes files it names (or git's defaults), read once with the user's real environment.
 * Reading config runs no program.
 */
function userGlobalConfig(): UserGlobalConfig {
  const { args, options } = userGlobalConfigCommand();
  const r = spawnSync('git', args, { ...options, stdio: ['ignore', 'pipe', 'ignore'] });
  return parseUserGlobalConfig(r.status === 0 ? r.stdout : undefined);
}

/** userGlobalConfig without blocking the event loop. */
function userGlobalConfigAsync(): Promise<UserGlobalConfig> {
  const { args, options } = userGlobalConfigCommand();
  return new Promise((done) => {
    const child = execFile('git', args, options, (err, stdout) =>
      done(parseUserGlobalConfig(err ? undefined : stdout)),
    );
    child.stdin?.end();
  });
}

function readIfThere(path: string | undefined): string | undefined {
  if (!path) return undefined;
  try {
    return readFileSync(path, 'utf8');
  } catch {
    return undefined;
  }
}

/** Whether the private home made earlier is still there (a test may have removed the temp folder). */
function madeHome(): PrivateGitHome | undefined {
  return privateHome && existsSync(privateHome.globalConfig) ? privateHome : undefined;
}

/** The private HOME and global config, made once per process (or worker thread) and removed at exit. */
function gitHome(): PrivateGitHome {
  return madeHome() ?? keepHome(makeHome(userGlobalConfig()));
}

let homePending: Promise<PrivateGitHome> | undefined;

/** gitHome without blocking the event loop: concurrent callers share one reading of the user's config. */
function gitHomeAsync(): Promise<PrivateGitHome> {
  const made = madeHome();
  if (made) return Promise.resolve(made);
  homePending ??= userGlobalConfigAsync()
    .then((user) => madeHome() ?? keepHome(makeHome(user)))
    .finally(() => {
      homePending = undefined;
    });
  return homePending;
}

function makeHome(user: UserGlobalConfig): PrivateGitHome {
  const dir = mkdtempSync(join(tmpdir(), 'orchestrate-git-'));
  const home = join(dir, 'home');
  mkdirSync(home);
  const lines: string[] = ['# written by orchestrate: the global config of its own git commands'];
  const add = (key: string, value: string): void => {
    const dot = key.indexOf('.');
    lines.push(`[${key.slice(0, dot)}]`, `\t${key.slice(dot + 1)} = ${quoteConfigValue(value)}`);
  };
  for (const [k, v] of user.keys) add(k, v);
  // Copies, so they stay readable inside the sandbox even where the home folder is hidden.
  const excludes = readIfThere(user.excludesFile);
  if (excludes !== undefined) {
    writeFileSync(join(dir, 'ignore'), excludes);
    add('core.excludesFile', join(dir, 'ignore'));
  }
  const attributes = readIfThere(user.attributesFile);
  if (attributes !== undefined) {
    writeFileSync(join(dir, 'attributes'), attributes);
    add('core.attributesFile', join(dir, 'attributes'));
  }
  // The certificates too: the user's file may sit in the home the sandbox hides.
  const ca = readIfThere(user.caFile);
  if (ca !== undefined) {
    writeFileSync(join(dir, 'ca.pem'), ca);
    add('http.sslCAInfo', join(dir, 'ca.pem'));
  }
  const globalConfig = join(dir, 'gitconfig');
  writeFileSync(globalConfig, `${lines.join('\n')}\n`);
  return { dir, home, globalConfig };
}

/** Makes `made` the process's private home (replacing a removed one), removed at exit. */
function keepHome(made: PrivateGitHome): PrivateGitHome {
  if (!privateHome)
    process.once('exit', () => privateHome && rmSync(privateHome.dir, { recursive: true, force: true }));
  else rmSync(privateHome.dir, { recursive: true, force: true });
  privateHome = made;
  return made;
}

/**
 * The whole environment of a product git: the allowlist, the private home and global config, the
 * overrides of PROGRAM_KEY_OVERRIDES, then `extra` (the caller's GIT_INDEX_FILE ...).
 */
export function productGitEnv(
  extra: Readonly<Record<string, string>> = {},
  parent: Readonly<Record<string, string | undefined>> = process.env,
): Record<string, string> {
  return envWithHome(gitHome(), extra, parent);
}

function envWithHome(
  h: PrivateGitHome,
  extra: Readonly<Record<string, string>>,
  parent: Readonly<Record<string, string | undefined>>,
): Record<string, string> {
  const env: Record<string, string> = {};
  for (const k of ENV_ALLOWLIST) {
    const v = parent[k];
    if (v !== undefined) env[k] = v;
  }
  env.PATH ??= '/usr/local/bin:/usr/bin:/bin';
  Object.assign(env, {
    HOME: h.home,
    XDG_CONFIG_HOME: join(h.home, '.config'),
    GIT_CONFIG_NOSYSTEM: '1',
    GIT_CONFIG_GLOBAL: h.globalConfig,
    GIT_ATTR_NOSYSTEM: '1',
    GIT_TERMINAL_PROMPT: '0',
    GIT_OPTIONAL_LOCKS: '0',
    LC_ALL: 'C',
    GIT_CONFIG_COUNT: String(PROGRAM_KEY_OVERRIDES.length),
  });
  PROGRAM_KEY_OVERRIDES.forEach(([k, v], i) => {
    env[`GIT_CONFIG_KEY_${i}`] = k;
    env[`GIT_CONFIG_VALUE_${i}`] = v;
  });
  return { ...env, ...extra };
}

export interface RepositoryLocation {
  /** The work tree's top folder (holds `.git`). */
  top: string;
  /** The git folder of this work tree (a linked worktree's own, under the main one's worktrees/). */
  gitDir: string;
  /** The folder with objects and refs shared by all worktrees. */
  commonDir: string;
}

/**
 * The repository git would find from `dir`, found the way git does (a `.git` folder with a HEAD,
 * or a `.git` file naming one), without running git: it decides what the sandbox lets git write.
 */
export function findRepository(dir: string): RepositoryLocation | undefined {
  for (let d = resolve(dir); ; d = dirname(d)) {
    const dotGit = join(d, '.git');
    let gitDir: string | undefined;
    try {
      // Most levels have no .git: asked without an exception (an ENOENT thrown and caught at every
      // level cost ~0.2 ms per instance on the coordinator's loop, #41).
      const st = statSync(dotGit, { throwIfNoEntry: false });
      if (st?.isDirectory()) gitDir = dotGit;
      else if (st?.isFile()) {
        const pointed = /^gitdir:\s*(.+?)\s*$/m.exec(readFileSync(dotGit, 'utf8'))?.[1];
        if (pointed) gitDir = resolve(d, pointed);
      }
    } catch {
      // no .git here
    }
    if (gitDir && existsSync(join(gitDir, 'HEAD'))) {
      const common = readIfThere(join(gitDir, 'commondir'))?.trim();
      return { top: d, gitDir, commonDir: common ? resolve(gitDir, common) : gitDir };
    }
    if (dirname(d) === d) return undefined;
  }
}

/** Whether product git and tar run inside bubblewrap here, and if not, why. */
export function productSandbox(): { sandboxed: boolean; reason?: string } {
  const probe = probeSandbox(defaultBwrapPath());
  return probe.ok ? { sandboxed: true } : { sandboxed: false, reason: probe.reason };
}

/** Whether `name` is an executable file in one of PATH's folders. */
function onPath(name: string, path: string | undefined): boolean {
  for (const d of (path ?? '').split(':')) {
    try {
      if (d && statSync(join(d, name)).isFile()) return true;
    } catch {
      // not in this folder
    }
  }
  return false;
}

/**
 * Runs `file args` with `env`, in the sandbox when it works, collecting output as asked. `program`
 * is what the command needs (git or tar), checked on PATH first so a missing one is named. The
 * sandbox may write `cwd`, `opts.writable` and, with `repoWritable`, the repository around `cwd`.
 */
export async function runProductCommand(
  program: string,
  file: string,
  args: string[],
  extraEnv: Readonly<Record<string, string>>,
  opts: ProductCommandOptions,
  what: string,
  repoWritable: boolean,
): Promise<ProductCommandResult> {
  // What every product command needs once per process (bwrap's probe, the private home and the
  // sandbox's .gitconfig), made by child processes the event loop does not wait for.
  const bwrap = defaultBwrapPath();
  const [probe, h] = await Promise.all([
    probeSandboxAsync(bwrap).then(async (p) => {
      if (p.ok) await sandboxGitConfigAsync(process.env);
      return p;
    }),
    gitHomeAsync(),
  ]);
  const env = envWithHome(h, extraEnv, process.env);
  if (!onPath(program, env.PATH))
    throw new ProductCommandError(`${program} is not installed or not on PATH: ${what} needs it`);
  let cmd = file;
  let argv = args;
  if (probe.ok && !opts.unconfined) {
    const repo = repoWritable ? findRepository(opts.cwd) : undefined;
    const writable = [...(repo ? [repo.top, repo.gitDir, repo.commonDir] : []), opts.cwd, ...(opts.writable ?? [])];
    const boxed = sandboxedSpawn(
      bwrap,
      {
        writable,
        network: opts.network === true,
        cwd: opts.cwd,
        ...(opts.readOnly ? { readOnly: [...opts.readOnly] } : {}),
      },
      file,
      args,
      process.env,
    );
    // The private home sits in the host's temp folder, which the sandbox replaces: bound back
    // read-only, after the sandbox's own mounts (just before its `-- file args`).
    const at = boxed.args.length - args.length - 2;
    cmd = boxed.file;
    argv = [...boxed.args.slice(0, at), '--ro-bind', h.dir, h.dir, ...boxed.args.slice(at)];
  }
  return new Promise((resolvePromise, reject) => {
    const child = spawn(cmd, argv, { cwd: opts.cwd, env, stdio: ['pipe', 'pipe', 'pipe'] });
    const chunks: Buffer[] = [];
    let kept = 0;
    let total = 0;
    let stopped = false;
    const errChunks: Buffer[] = [];
    child.stdout.on('data', (chunk: Buffer) => {
      total += chunk.length;
      if (opts.keepBytes === undefined || kept + chunk.length <= opts.keepBytes) {
        chunks.push(chunk);
        kept += chunk.length;
      }
      if (opts.stopAfterBytes !== undefined && total > opts.stopAfterBytes && !stopped) {
        stopped = true;
        child.kill('SIGKILL');
      }
    });
    child.stderr.on('data', (chunk: Buffer) => errChunks.push(chunk));
    child.on('error', (err: NodeJS.ErrnoException) => {
      if (err.code === 'ENOENT')
        reject(new ProductCommandError(`${cmd} is not installed or not on PATH: ${what} needs it`));
      else reject(new ProductCommandError(`${cmd} could not be started in ${opts.cwd}: ${err.message}`));
    });
    // A command that exits without reading all its input (EPIPE) reports that through its exit code.
    child.stdin.on('error', () => {});
    child.stdin.end(opts.input ?? Buffer.alloc(0));
    child.on('close', (code) => {
      resolvePromise({
        code,
        stdout: Buffer.concat(chunks),
        stderr: Buffer.concat(errChunks).toString('utf8'),
        stdoutBytes: total,
        stopped,
      });
    });
  });
}

/**
 * Runs a POSIX shell `script` (its arguments in "$@") whose git commands all get the sanitized
 * environment, the overrides and the repository's drivers emptied, in one sandbox: several git
 * commands for the price of one sandbox start. The script must call nothing but git and the
 * shell's builtins (plus cp/cat/rm on the paths it was given).
 */
export function productGitScript(
  script: string,
  args: readonly string[],
  opts: ProductCommandOptions,
): Promise<ProductCommandResult> {
  return runProductCommand(
    'git',
    'sh',
    ['-c', `${NEUTRALIZE_DRIVERS}${script}`, 'orchestrate-git', ...args],
    { ...configEnv(opts), ...opts.env },
    opts,
    'git work on a workspace',
    true,
  );
}

/** GIT_CONFIG_* entries for `opts.config` (and https when the command may use the network), after the overrides. */
export function configEnv(opts: ProductCommandOptions): Record<string, string> {
  const keys = [...(opts.network ? [['protocol.https.allow', 'always'] as const] : []), ...(opts.config ?? [])];
  if (!keys.length) return {};
  const env: Record<string, string> = {};
  let n = PROGRAM_KEY_OVERRIDES.length;
  for (const [k, v] of keys) {
    env[`GIT_CONFIG_KEY_${n}`] = k;
    env[`GIT_CONFIG_VALUE_${n}`] = v;
    n++;
  }
  env.GIT_CONFIG_COUNT = String(n);
  return env;
}

/** Runs one `git args` as productGitScript does. */
export function productGit(args: readonly string[], opts: ProductCommandOptions): Promise<ProductCommandResult> {
  return productGitScript('exec git "$@"', args, opts);
}

/**
 * Runs tar with the sanitized environment (no TAR_OPTIONS, no keys), in the sandbox when it
 * works, where it may write `opts.writable` only (not the repository around `cwd`).
 */
export function productTar(args: readonly string[], opts: ProductCommandOptions): Promise<ProductCommandResult> {
  return runProductCommand(
    'tar',
    'tar',
    [...args],
    opts.env ?? {},
    opts,
    'moving a workspace to another machine',
    false,
  );
}

/** A private temp folder (mode 700) for one operation's files (a throwaway index, a bundle), removed after `fn`. */
export async function withProductTemp<T>(prefix: string, fn: (dir: string) => Promise<T>): Promise<T> {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  try {
    return await fn(dir);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/**
 * Starts what the first product command needs (bwrap's probe, the private home, the sandbox's
 * .gitconfig) without waiting for it, so a coordinator that will take snapshots finds it made.
 */
export function warmProductGit(): void {
  void probeSandboxAsync(defaultBwrapPath())
    .then((p) => (p.ok ? sandboxGitConfigAsync(process.env) : undefined))
    .catch(() => {});
  gitHomeAsync().catch(() => {});
}
