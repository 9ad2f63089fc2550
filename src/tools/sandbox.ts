// The sandbox of every command run on a model's behalf or from a recipe (the bash tool, `verify`,
// `run:` steps): bubblewrap (`bwrap`) on Linux. Inside, the workspace is read-write and the rest
// of the file system read-only, with the places that hold secrets hidden (the run folder,
// ORCHESTRATE_HOME, ~/.ssh, ~/.aws ...); the home folder is an allowlist: an empty private home
// holding only a .gitconfig with the user's git identity, the toolchains on PATH and the
// read-only paths a caller adds; /run and /var/run (host sockets) are hidden when the network is
// off; /tmp, /dev/shm and the home are size-capped tmpfs (a full one says "No space left on
// device", it never fills host memory); the command gets a PID namespace of its own (the parent's
// /proc is not visible, and every process it started dies when it ends or when the process that
// started it dies); the network is off unless asked for; capabilities are dropped (root inside
// could otherwise remount / read-write); and the environment is built from an allowlist, never
// holding the provider keys.
//
// Where bwrap is missing or cannot create namespaces (probed once per process by running it),
// commands run unconfined as before and the caller warns once.
import { spawn, spawnSync } from 'node:child_process';
import { realpathSync, statSync } from 'node:fs';
import { homedir } from 'node:os';
import { basename, dirname, isAbsolute, join, resolve, sep } from 'node:path';
import { homeOf, sandboxGitConfig } from './sandbox-git-config.js';
import { isInside } from './workspace.js';

/** `workspace`: confine to the workspace (the default); `none`: run unconfined. */
export type SandboxMode = 'workspace' | 'none';
export const SANDBOX_MODES: readonly SandboxMode[] = ['workspace', 'none'];

/** What a caller asks for; the paths are resolved when a command runs. */
export interface SandboxOptions {
  /** Default `workspace`. */
  mode?: SandboxMode;
  /** Let the command reach the network (default false). */
  network?: boolean;
  /** Further folders or files to hide (the run folder, for example); the file tools refuse them too. */
  hide?: string[];
  /** Paths made visible read-only inside the private home (or anywhere hidden), e.g. a tool's config. */
  readOnly?: string[];
  /** Size cap of the sandbox's /tmp in bytes (default ORCHESTRATE_SANDBOX_TMP_MB, else 512 MiB); /dev/shm and the home get at most this too. */
  tmpBytes?: number;
  /** The bwrap binary (default: ORCHESTRATE_BWRAP, else `bwrap` on PATH); tests point it at a missing file. */
  bwrapPath?: string;
  /** Told once per process when the sandbox was asked for but cannot work here. */
  warn?: (message: string) => void;
}

/** One command's confinement. */
export interface SandboxPlan {
  /** Folders the command may write (the workspace, the session's temp folder). */
  writable: string[];
  hide?: string[];
  /** Read-only paths added to the allowlisted home (SandboxOptions.readOnly). */
  readOnly?: string[];
  network?: boolean;
  cwd: string;
  /** Size cap of /tmp in bytes (see SandboxOptions.tmpBytes). */
  tmpBytes?: number;
}

export interface SandboxProbe {
  ok: boolean;
  /** The binary that was tried. */
  bwrap: string;
  /** Why the sandbox cannot work here (when not ok). */
  reason?: string;
  /** Whether this bwrap caps tmpfs sizes (--size, bubblewrap 0.8+): without it /tmp and the home are uncapped. */
  sizeCap?: boolean;
}

/** Variables passed into a sandbox from the parent environment (plus LC_*). */
export const SANDBOX_ENV_ALLOWLIST: readonly string[] = [
  'PATH',
  'HOME',
  'USER',
  'LOGNAME',
  'SHELL',
  'LANG',
  'LANGUAGE',
  'TERM',
  'COLORTERM',
  'TZ',
  'NO_COLOR',
  'CI',
];

/** Provider credentials: never inside a sandbox, whatever a recipe's env says. */
export const PROVIDER_KEY_NAMES: readonly string[] = [
  'ANTHROPIC_API_KEY',
  'ANTHROPIC_AUTH_TOKEN',
  'CLAUDE_CODE_OAUTH_TOKEN',
  'OPENAI_API_KEY',
  'GEMINI_API_KEY',
  'GOOGLE_API_KEY',
  'AWS_SECRET_ACCESS_KEY',
  'AWS_SESSION_TOKEN',
  'AZURE_OPENAI_API_KEY',
];

/** Files and folders under the home folder that hold credentials; hidden when they exist. */
// The home folder itself is replaced by a private one (an allowlist); this list still matters for
// what the allowlist lets through (a toolchain folder on PATH) and where the home cannot be
// replaced (it is the workspace or lies inside it).
const HOME_SECRETS = [
  '.ssh',
  '.aws',
  '.azure',
  '.gnupg',
  '.docker',
  '.kube',
  '.config/gcloud',
  '.config/gh',
  '.password-store',
  '.netrc',
  '.git-credentials',
  '.npmrc',
  '.pypirc',
  '.cargo/credentials',
  '.cargo/credentials.toml',
  '.config/anthropic',
  '.claude',
  '.claude.json',
  '.bash_history',
  '.zsh_history',
  '.gitconfig',
  '.config/git',
  '.local/share/keyrings',
  '.orchestrate',
];
/** Sockets that hand out more than the sandbox allows (a Docker socket is root on the host). */
const SYSTEM_SECRETS = ['/run/user', '/run/docker.sock', '/var/run/docker.sock', '/run/containerd', '/run/podman'];
/** Folders of host sockets (D-Bus, systemd, databases ...), hidden whole when the network is off. */
const SOCKET_FOLDERS = ['/run', '/var/run', '/var/lock'];

const MIB = 1024 * 1024;
const DEFAULT_TMP_BYTES = 512 * MIB;
const SHM_BYTES = 64 * MIB;
const HOME_BYTES = 256 * MIB;

const INSTALL_HINT =
  'install bubblewrap (Debian/Ubuntu: apt-get install -y bubblewrap; Fedora: dnf install bubblewrap; Arch: pacman -S bubblewrap)';

/** `--size N` before a --tmpfs where this bwrap has it. */
function sized(bytes: number, sizeCap: boolean): string[] {
  return sizeCap ? ['--size', String(Math.max(4096, Math.floor(bytes)))] : [];
}

/** The flags every sandboxed command gets, before its mounts. */
function baseArgs(network: boolean, sizeCap: boolean, tmpBytes = DEFAULT_TMP_BYTES): string[] {
  return [
    '--die-with-parent',
    '--unshare-pid',
    '--unshare-ipc',
    '--unshare-uts',
    ...(network ? [] : ['--unshare-net']),
    '--cap-drop',
    'ALL',
    '--ro-bind',
    '/',
    '/',
    '--dev',
    '/dev',
    ...sized(Math.min(SHM_BYTES, tmpBytes), sizeCap),
    '--tmpfs',
    '/dev/shm',
    '--proc',
    '/proc',
    ...sized(tmpBytes, sizeCap),
    '--tmpfs',
    '/tmp',
  ];
}

/** The /tmp cap in bytes: the caller's, else ORCHESTRATE_SANDBOX_TMP_MB, else 512 MiB. */
export function sandboxTmpBytes(
  requested: number | undefined,
  env: Readonly<Record<string, string | undefined>> = process.env,
): number {
  if (requested !== undefined && requested > 0) return requested;
  const mb = Number(env.ORCHESTRATE_SANDBOX_TMP_MB);
  return Number.isFinite(mb) && mb > 0 ? mb * MIB : DEFAULT_TMP_BYTES;
}

const probes = new Map<string, SandboxProbe>();

/** The bwrap binary used when a caller names none: ORCHESTRATE_BWRAP, else `bwrap` on PATH. */
export function defaultBwrapPath(env: Readonly<Record<string, string | undefined>> = process.env): string {
  return env.ORCHESTRATE_BWRAP || 'bwrap';
}

/** What one attempt to start bwrap gave (spawnSync's fields, also filled by the asynchronous attempt). */
interface ProbeAttempt {
  error?: Error;
  status: number | null;
  signal?: NodeJS.Signals | null;
  stderr: string;
}

const PROBE_TIMEOUT_MS = 15_000;

function unsupportedPlatform(bwrapPath: string): SandboxProbe {
  return {
    ok: false,
    bwrap: bwrapPath,
    reason: `the sandbox uses Linux namespaces (bubblewrap), which ${process.platform} does not have`,
  };
}

/** Whether the first attempt failed only because this bwrap has no --size (before 0.8): then it is tried without. */
function lacksSizeCap(r: ProbeAttempt): boolean {
  return !r.error && r.status !== 0 && /--size|Unknown option/i.test(r.stderr);
}

/** The probe's verdict from the attempt that counts. */
function verdict(bwrapPath: string, r: ProbeAttempt, sizeCap: boolean): SandboxProbe {
  if (r.error) {
    const code = (r.error as NodeJS.ErrnoException).code;
    return {
      ok: false,
      bwrap: bwrapPath,
      reason:
        code === 'ENOENT'
          ? `bubblewrap (${bwrapPath}) is not installed; ${INSTALL_HINT}`
          : `${bwrapPath} could not be started: ${r.error.message}`,
    };
  }
  if (r.status !== 0) {
    const said = r.stderr.trim().split('\n').slice(-2).join(' ');
    return {
      ok: false,
      bwrap: bwrapPath,
      reason:
        `${bwrapPath} cannot create a sandbox here (${said || `exit ${r.status ?? r.signal}`}). ` +
        'It needs user namespaces (sysctl kernel.unprivileged_userns_clone=1, or user.max_user_namespaces > 0) or a setuid bwrap; ' +
        'in a container, run it with --privileged or a seccomp/AppArmor profile that allows unshare and mount',
    };
  }
  return { ok: true, bwrap: bwrapPath, sizeCap };
}

/**
 * Whether bwrap can run a command here: tried for real (a missing binary, no user namespaces, a
 * container without the needed privileges all fail differently), once per process and binary.
 * Blocks while bwrap starts (0.1-0.5 s on a busy machine): the coordinator awaits
 * probeSandboxAsync first, which fills the same cache.
 */
export function probeSandbox(bwrapPath = defaultBwrapPath()): SandboxProbe {
  const cached = probes.get(bwrapPath);
  if (cached) return cached;
  let probe: SandboxProbe;
  if (process.platform !== 'linux') probe = unsupportedPlatform(bwrapPath);
  else {
    const attempt = (sizeCap: boolean): ProbeAttempt => {
      const r = spawnSync(bwrapPath, [...baseArgs(false, sizeCap), '--', 'true'], {
        encoding: 'utf8',
        timeout: PROBE_TIMEOUT_MS,
        stdio: ['ignore', 'ignore', 'pipe'],
      });
      return { error: r.error, status: r.status, signal: r.signal, stderr: r.stderr ?? '' };
    };
    // Tried with size caps first; a bwrap without --size (before 0.8) is still a sandbox, uncapped.
    const capped = attempt(true);
    probe = lacksSizeCap(capped) ? verdict(bwrapPath, attempt(false), false) : verdict(bwrapPath, capped, true);
  }
  probes.set(bwrapPath, probe);
  return probe;
}

/** One start of `bwrap ... -- true` without blocking the event loop (spawnSync's outcome, timeout included). */
function attemptAsync(bwrapPath: string, sizeCap: boolean): Promise<ProbeAttempt> {
  return new Promise((done) => {
    let settled = false;
    const settle = (r: ProbeAttempt): void => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      done(r);
    };
    const child = spawn(bwrapPath, [...baseArgs(false, sizeCap), '--', 'true'], {
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    const err: Buffer[] = [];
    child.stderr?.on('data', (chunk: Buffer) => err.push(chunk));
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      const e: NodeJS.ErrnoException = new Error(`${bwrapPath} did not exit within ${PROBE_TIMEOUT_MS / 1000} s`);
      e.code = 'ETIMEDOUT';
      settle({ error: e, status: null, stderr: '' });
    }, PROBE_TIMEOUT_MS);
    child.on('error', (error) => settle({ error, status: null, stderr: '' }));
    child.on('close', (status, signal) => settle({ status, signal, stderr: Buffer.concat(err).toString('utf8') }));
  });
}

const probing = new Map<string, Promise<SandboxProbe>>();

/**
 * probeSandbox without blocking the event loop: the same attempts and verdict, run once per
 * process and binary (concurrent callers share one probe), into the cache probeSandbox reads.
 */
export function probeSandboxAsync(bwrapPath = defaultBwrapPath()): Promise<SandboxProbe> {
  const cached = probes.get(bwrapPath);
  if (cached) return Promise.resolve(cached);
  let pending = probing.get(bwrapPath);
  if (!pending) {
    pending = (async (): Promise<SandboxProbe> => {
      if (process.platform !== 'linux') return unsupportedPlatform(bwrapPath);
      const capped = await attemptAsync(bwrapPath, true);
      return lacksSizeCap(capped)
        ? verdict(bwrapPath, await attemptAsync(bwrapPath, false), false)
        : verdict(bwrapPath, capped, true);
    })().then((probe) => {
      probing.delete(bwrapPath);
      // A synchronous probe that finished meanwhile stays the answer (one verdict per process).
      const won = probes.get(bwrapPath) ?? probe;
      probes.set(bwrapPath, won);
      return won;
    });
    probing.set(bwrapPath, pending);
  }
  return pending;
}

/** The mode that will actually be used, and the warning to give once when it is not what was asked. */
export function resolveSandboxMode(options: SandboxOptions | undefined): { mode: SandboxMode; warning?: string } {
  const mode = options?.mode ?? 'workspace';
  if (mode === 'none') return { mode };
  const probe = probeSandbox(options?.bwrapPath);
  if (probe.ok) return { mode };
  return {
    mode: 'none',
    warning: `warning: commands run WITHOUT a sandbox (they can read and write anything this user can, and reach the network): ${probe.reason}. Run \`orchestrate doctor\` for details; \`sandbox: none\` in the recipe (orchestrate agent: --sandbox none) silences this.`,
  };
}

const warned = new Set<string>();
/** Gives `message` to `warn` once per process (one warning per run, not one per command). */
export function warnOnce(message: string, warn: (message: string) => void): void {
  if (warned.has(message)) return;
  warned.add(message);
  warn(message);
}

/** The environment inside a sandbox: the allowlist from `base`, then `extra`, never a provider key. */
export function sandboxEnv(
  base: Readonly<Record<string, string | undefined>>,
  extra: Readonly<Record<string, string | undefined>> = {},
): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(base)) {
    if (v !== undefined && (SANDBOX_ENV_ALLOWLIST.includes(k) || k.startsWith('LC_'))) out[k] = v;
  }
  for (const [k, v] of Object.entries(extra)) {
    if (v === undefined) delete out[k];
    else out[k] = v;
  }
  for (const k of PROVIDER_KEY_NAMES) delete out[k];
  out.PATH ??= '/usr/local/bin:/usr/bin:/bin';
  return out;
}

/** The environment of an unconfined command: everything but the provider keys, unless `extra` sets one. */
export function unconfinedEnv(
  base: Readonly<Record<string, string | undefined>>,
  extra: Readonly<Record<string, string | undefined>> = {},
): Record<string, string | undefined> {
  const out: Record<string, string | undefined> = { ...base };
  for (const k of PROVIDER_KEY_NAMES) delete out[k];
  return { ...out, ...extra };
}

/** realpath, or undefined when the path does not exist. */
function existing(path: string): string | undefined {
  try {
    return realpathSync(path);
  } catch {
    return undefined;
  }
}

function depth(path: string): number {
  return path.split(sep).filter(Boolean).length;
}

/** Places hidden in every sandbox: credentials under the home folder, ORCHESTRATE_HOME, host sockets. */
export function defaultHiddenPaths(env: Readonly<Record<string, string | undefined>> = process.env): string[] {
  const home = env.HOME || homedir();
  const orchestrateHome = env.ORCHESTRATE_HOME || join(home, '.orchestrate');
  return [...HOME_SECRETS.map((p) => join(home, p)), orchestrateHome, ...SYSTEM_SECRETS];
}

/**
 * Toolchains installed in the home folder and on PATH (~/.local/bin, ~/.cargo/bin, a node under
 * ~/.nvm ...): made visible read-only, with the folder above a `bin` (its lib/ and share/).
 */
function toolchainPaths(home: string, env: Readonly<Record<string, string | undefined>>): string[] {
  const out: string[] = [];
  for (const dir of (env.PATH ?? '').split(':')) {
    if (!dir || !isAbsolute(dir) || !isInside(home, dir) || resolve(dir) === resolve(home)) continue;
    out.push(basename(dir) === 'bin' && dirname(dir) !== resolve(home) ? dirname(dir) : dir);
  }
  return out;
}

type Mount = { path: string; kind: 'hide' | 'home' | 'ro' | 'bind' };
const ORDER: Record<Mount['kind'], number> = { hide: 0, home: 0, ro: 1, bind: 2 };

/**
 * The bwrap arguments that run a command under `plan` (append `--` and the command). Mounts go
 * from the outermost path in, so a workspace inside a hidden folder (a worktree in the run
 * folder) or inside the private home is still reachable and a secret inside the workspace
 * (~/.ssh when the workspace is the home folder) is still hidden. Hidden folders become empty
 * read-only tmpfs (nothing to fill); the private home is a size-capped tmpfs.
 */
export function bwrapArgs(
  plan: SandboxPlan,
  env: Readonly<Record<string, string | undefined>> = process.env,
  sizeCap = true,
): string[] {
  const mounts: Mount[] = [];
  const seen = new Set<string>();
  const writable = plan.writable
    .map((p) => existing(resolve(p)))
    .filter((p): p is string => p !== undefined && p !== '/');
  const add = (p: string, kind: Mount['kind']): void => {
    const real = existing(resolve(p));
    if (!real || real === '/' || seen.has(`${kind}:${real}`)) return;
    seen.add(`${kind}:${real}`);
    mounts.push({ path: real, kind });
  };
  // The home is replaced unless a writable folder is the home or holds it (then only the secrets are hidden).
  const home = existing(homeOf(env));
  const privateHome = home !== undefined && home !== '/' && !writable.some((w) => isInside(w, home));
  const readOnly = [...(privateHome ? toolchainPaths(home, env) : []), ...(plan.readOnly ?? [])];
  const visibleInHome = [...readOnly.map((p) => existing(resolve(p)) ?? p), ...writable];
  const hidden = [...defaultHiddenPaths(env), ...(plan.hide ?? []), ...(plan.network ? [] : SOCKET_FOLDERS)];
  for (const p of hidden) {
    // Inside the private home a secret exists only where a visible folder brings it in.
    const real = existing(resolve(p));
    if (privateHome && real && isInside(home, real) && !visibleInHome.some((v) => isInside(v, real))) continue;
    add(p, 'hide');
  }
  if (privateHome) add(home, 'home');
  for (const p of readOnly) add(p, 'ro');
  for (const p of writable) add(p, 'bind');
  // A read-only view or hidden folder inside another of its kind adds nothing, unless something
  // else visible lies between.
  const visible = mounts.filter((m) => m.kind === 'bind' || m.kind === 'ro' || m.kind === 'home').map((m) => m.path);
  // The default hidden places (/run/user inside a hidden /run, ~/.ssh inside a hidden home) are
  // dropped the same way; the caller's (the runs folder) stay, as empty folders.
  const callers = new Set((plan.hide ?? []).map((p) => existing(resolve(p))));
  const redundant = (m: Mount): boolean =>
    (m.kind === 'ro' || (m.kind === 'hide' && !callers.has(m.path))) &&
    mounts.some(
      (o) =>
        o.kind === m.kind &&
        o.path !== m.path &&
        isInside(o.path, m.path) &&
        !visible.some((v) => v !== o.path && v !== m.path && isInside(o.path, v) && isInside(v, m.path)),
    );
  const kept = mounts.filter((m) => !redundant(m));
  mounts.length = 0;
  mounts.push(...kept);
  // Outer paths first; at the same path: hiding, then read-only views, then the workspace.
  mounts.sort((a, b) => depth(a.path) - depth(b.path) || ORDER[a.kind] - ORDER[b.kind]);
  const tmpBytes = plan.tmpBytes ?? DEFAULT_TMP_BYTES;
  const args = baseArgs(plan.network ?? false, sizeCap, tmpBytes);
  const readOnlyLater: string[] = ['/dev'];
  for (const m of mounts) {
    if (m.kind === 'bind') args.push('--bind', m.path, m.path);
    else if (m.kind === 'ro') args.push('--ro-bind', m.path, m.path);
    else if (m.kind === 'home') {
      args.push(...sized(Math.min(HOME_BYTES, tmpBytes), sizeCap), '--tmpfs', m.path);
      args.push('--ro-bind', sandboxGitConfig(env), join(m.path, '.gitconfig'));
    } else if (statSync(m.path).isDirectory()) {
      args.push(...sized(4096, sizeCap), '--tmpfs', m.path);
      readOnlyLater.push(m.path);
    } else args.push('--ro-bind', '/dev/null', m.path);
  }
  // After every mount inside them: the hidden folders and /dev cannot be written (nor filled).
  for (const p of readOnlyLater) args.push('--remount-ro', p);
  args.push('--chdir', existing(plan.cwd) ?? plan.cwd);
  return args;
}

/** What a command that ran out of room in a capped tmpfs is told, added to its own error. */
export function tmpfsFullHint(tmpBytes: number): string {
  const mb = Math.round(tmpBytes / MIB);
  return (
    `The command ran out of space. In the sandbox /tmp holds at most ${mb} MiB, /dev/shm ${Math.min(mb, SHM_BYTES / MIB)} MiB and the home folder ${Math.min(mb, HOME_BYTES / MIB)} MiB ` +
    '(they live in memory); write large files into the working directory instead, or raise the cap with ORCHESTRATE_SANDBOX_TMP_MB.'
  );
}

/** The program and arguments that run `file args` inside the sandbox. */
export function sandboxedSpawn(
  bwrapPath: string | undefined,
  plan: SandboxPlan,
  file: string,
  args: string[],
  env?: Readonly<Record<string, string | undefined>>,
): { file: string; args: string[] } {
  const bwrap = bwrapPath ?? defaultBwrapPath();
  const sizeCap = probeSandbox(bwrap).sizeCap ?? false;
  return {
    file: bwrap,
    args: [...bwrapArgs({ ...plan, tmpBytes: sandboxTmpBytes(plan.tmpBytes, env) }, env, sizeCap), '--', file, ...args],
  };
}

/** What `orchestrate doctor` reports of the sandbox's hardening, measured by running a command in it. */
export interface SandboxHardening {
  /** The home folder inside is the private one (only these entries are in it). */
  privateHome: boolean;
  homeEntries: string[];
  /** Nothing but empty folders under /run and /var/run (no socket, no file) with the network off. */
  runHidden: boolean;
  /** Size of the sandbox's /tmp in bytes (undefined: could not be read). */
  tmpBytes?: number;
  /** The hidden folder given (the runs folder) shows nothing and cannot be written. */
  hiddenSealed: boolean;
  /** Why the measurement failed, when it did. */
  error?: string;
}

/**
 * Runs one command in the sandbox as a bash call would (network off, `hide` hidden) and reports
 * what it saw: the home's entries, /run, the size of /tmp, whether `hide` can be read or written.
 */
export function measureSandboxHardening(
  bwrapPath: string,
  hide: string,
  env: Readonly<Record<string, string | undefined>> = process.env,
): SandboxHardening {
  const script = [
    'echo "home=$(ls -A "$HOME" | tr "\\n" " ")"',
    'echo "run=$(find /run/ /var/run/ -mindepth 1 ! -type d 2>/dev/null | wc -l)"',
    'echo "tmp=$(df -k /tmp | tail -1 | awk "{print \\$2}")"',
    `if [ -z "$(ls -A ${JSON.stringify(hide)} 2>/dev/null)" ] && ! touch ${JSON.stringify(`${hide}/.doctor`)} 2>/dev/null; then echo sealed=1; else echo sealed=0; fi`,
  ].join('\n');
  const cwd = existing(tmpdirOf(env)) ?? '/';
  const { file, args } = sandboxedSpawn(
    bwrapPath,
    { writable: [], hide: [hide], network: false, cwd },
    '/bin/sh',
    ['-c', script],
    env,
  );
  const r = spawnSync(file, args, { encoding: 'utf8', timeout: 15_000, env: sandboxEnv(env) });
  if (r.error || r.status !== 0)
    return {
      privateHome: false,
      homeEntries: [],
      runHidden: false,
      hiddenSealed: false,
      error: r.error?.message ?? (r.stderr.trim() || `exit ${r.status}`),
    };
  const value = (key: string): string => new RegExp(`^${key}=(.*)$`, 'm').exec(r.stdout)?.[1]?.trim() ?? '';
  const homeEntries = value('home').split(' ').filter(Boolean);
  const tmpKb = Number(value('tmp'));
  return {
    privateHome:
      homeEntries.includes('.gitconfig') &&
      !homeEntries.some((e) => e !== '.gitconfig' && HOME_SECRETS.includes(e)) &&
      !homeEntries.includes('.orchestrate-doctor-home-probe'),
    homeEntries,
    runHidden: value('run') === '0',
    ...(Number.isFinite(tmpKb) && tmpKb > 0 ? { tmpBytes: tmpKb * 1024 } : {}),
    hiddenSealed: value('sealed') === '1',
  };
}

function tmpdirOf(env: Readonly<Record<string, string | undefined>>): string {
  return env.TMPDIR || '/tmp';
}
