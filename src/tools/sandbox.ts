// The sandbox of every command run on a model's behalf or from a recipe (the bash tool, `verify`,
// `run:` steps): bubblewrap (`bwrap`) on Linux. Inside, the workspace is read-write and the rest
// of the file system read-only, with the places that hold secrets hidden (the run folder,
// ORCHESTRATE_HOME, ~/.ssh, ~/.aws ...); /tmp is private; the command gets a PID namespace of
// its own (the parent's /proc is not visible, and every process it started dies when it ends or
// when the process that started it dies); the network is off unless asked for; capabilities are
// dropped (root inside could otherwise remount / read-write); and the environment is built from
// an allowlist, never holding the provider keys.
//
// Where bwrap is missing or cannot create namespaces (probed once per process by running it),
// commands run unconfined as before and the caller warns once.
import { spawnSync } from 'node:child_process';
import { realpathSync, statSync } from 'node:fs';
import { homedir } from 'node:os';
import { join, resolve, sep } from 'node:path';

/** `workspace`: confine to the workspace (the default); `none`: run unconfined. */
export type SandboxMode = 'workspace' | 'none';
export const SANDBOX_MODES: readonly SandboxMode[] = ['workspace', 'none'];

/** What a caller asks for; the paths are resolved when a command runs. */
export interface SandboxOptions {
  /** Default `workspace`. */
  mode?: SandboxMode;
  /** Let the command reach the network (default false). */
  network?: boolean;
  /** Further folders or files to hide (the run folder, for example). */
  hide?: string[];
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
  network?: boolean;
  cwd: string;
}

export interface SandboxProbe {
  ok: boolean;
  /** The binary that was tried. */
  bwrap: string;
  /** Why the sandbox cannot work here (when not ok). */
  reason?: string;
}

/** Variables passed into a sandbox from the parent environment (plus LC_*). */
export const SANDBOX_ENV_ALLOWLIST: readonly string[] = [
  'PATH', 'HOME', 'USER', 'LOGNAME', 'SHELL', 'LANG', 'LANGUAGE', 'TERM', 'COLORTERM', 'TZ', 'NO_COLOR', 'CI',
];

/** Provider credentials: never inside a sandbox, whatever a recipe's env says. */
export const PROVIDER_KEY_NAMES: readonly string[] = [
  'ANTHROPIC_API_KEY', 'ANTHROPIC_AUTH_TOKEN', 'CLAUDE_CODE_OAUTH_TOKEN', 'OPENAI_API_KEY', 'GEMINI_API_KEY', 'GOOGLE_API_KEY',
  'AWS_SECRET_ACCESS_KEY', 'AWS_SESSION_TOKEN', 'AZURE_OPENAI_API_KEY',
];

/** Files and folders under the home folder that hold credentials; hidden when they exist. */
const HOME_SECRETS = [
  '.ssh', '.aws', '.azure', '.gnupg', '.docker', '.kube', '.config/gcloud', '.config/gh', '.password-store',
  '.netrc', '.git-credentials', '.npmrc', '.pypirc', '.cargo/credentials', '.cargo/credentials.toml',
];
/** Sockets that hand out more than the sandbox allows (a Docker socket is root on the host). */
const SYSTEM_SECRETS = ['/run/user', '/run/docker.sock', '/var/run/docker.sock', '/run/containerd', '/run/podman'];

const INSTALL_HINT =
  'install bubblewrap (Debian/Ubuntu: apt-get install -y bubblewrap; Fedora: dnf install bubblewrap; Arch: pacman -S bubblewrap)';

/** The flags every sandboxed command gets, before its mounts. */
function baseArgs(network: boolean): string[] {
  return [
    '--die-with-parent',
    '--unshare-pid',
    '--unshare-ipc',
    '--unshare-uts',
    ...(network ? [] : ['--unshare-net']),
    '--cap-drop', 'ALL',
    '--ro-bind', '/', '/',
    '--dev', '/dev',
    '--proc', '/proc',
    '--tmpfs', '/tmp',
  ];
}

const probes = new Map<string, SandboxProbe>();

/** The bwrap binary used when a caller names none: ORCHESTRATE_BWRAP, else `bwrap` on PATH. */
export function defaultBwrapPath(env: Readonly<Record<string, string | undefined>> = process.env): string {
  return env.ORCHESTRATE_BWRAP || 'bwrap';
}

/**
 * Whether bwrap can run a command here: tried for real (a missing binary, no user namespaces, a
 * container without the needed privileges all fail differently), once per process and binary.
 */
export function probeSandbox(bwrapPath = defaultBwrapPath()): SandboxProbe {
  const cached = probes.get(bwrapPath);
  if (cached) return cached;
  if (process.platform !== 'linux') {
    const probe = { ok: false, bwrap: bwrapPath, reason: `the sandbox uses Linux namespaces (bubblewrap), which ${process.platform} does not have` };
    probes.set(bwrapPath, probe);
    return probe;
  }
  const r = spawnSync(bwrapPath, [...baseArgs(false), '--', 'true'], { encoding: 'utf8', timeout: 15_000, stdio: ['ignore', 'ignore', 'pipe'] });
  let probe: SandboxProbe;
  if (r.error) {
    const code = (r.error as NodeJS.ErrnoException).code;
    probe = {
      ok: false,
      bwrap: bwrapPath,
      reason: code === 'ENOENT' ? `bubblewrap (${bwrapPath}) is not installed; ${INSTALL_HINT}` : `${bwrapPath} could not be started: ${r.error.message}`,
    };
  } else if (r.status !== 0) {
    const said = (r.stderr ?? '').trim().split('\n').slice(-2).join(' ');
    probe = {
      ok: false,
      bwrap: bwrapPath,
      reason:
        `${bwrapPath} cannot create a sandbox here (${said || `exit ${r.status ?? r.signal}`}). ` +
        'It needs user namespaces (sysctl kernel.unprivileged_userns_clone=1, or user.max_user_namespaces > 0) or a setuid bwrap; ' +
        'in a container, run it with --privileged or a seccomp/AppArmor profile that allows unshare and mount',
    };
  } else probe = { ok: true, bwrap: bwrapPath };
  probes.set(bwrapPath, probe);
  return probe;
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
export function sandboxEnv(base: Readonly<Record<string, string | undefined>>, extra: Readonly<Record<string, string | undefined>> = {}): Record<string, string> {
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
export function unconfinedEnv(base: Readonly<Record<string, string | undefined>>, extra: Readonly<Record<string, string | undefined>> = {}): Record<string, string | undefined> {
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
 * The bwrap arguments that run a command under `plan` (append `--` and the command). Mounts go
 * from the outermost path in, so a workspace inside a hidden folder (a worktree in the run
 * folder) is still reachable and a secret inside the workspace (~/.ssh when the workspace is
 * the home folder) is still hidden.
 */
export function bwrapArgs(plan: SandboxPlan, env: Readonly<Record<string, string | undefined>> = process.env): string[] {
  const mounts: { path: string; kind: 'hide' | 'bind' }[] = [];
  const seen = new Set<string>();
  for (const p of [...defaultHiddenPaths(env), ...(plan.hide ?? [])]) {
    const real = existing(resolve(p));
    if (!real || real === '/' || seen.has(real)) continue;
    seen.add(real);
    mounts.push({ path: real, kind: 'hide' });
  }
  for (const p of plan.writable) {
    const real = existing(resolve(p));
    if (!real || real === '/') continue;
    mounts.push({ path: real, kind: 'bind' });
  }
  // Outer paths first; at the same path the workspace wins (it is bound after the hiding).
  mounts.sort((a, b) => depth(a.path) - depth(b.path) || (a.kind === b.kind ? 0 : a.kind === 'hide' ? -1 : 1));
  const args = baseArgs(plan.network ?? false);
  for (const m of mounts) {
    if (m.kind === 'bind') args.push('--bind', m.path, m.path);
    else if (statSync(m.path).isDirectory()) args.push('--tmpfs', m.path);
    else args.push('--ro-bind', '/dev/null', m.path);
  }
  args.push('--chdir', existing(plan.cwd) ?? plan.cwd);
  return args;
}

/** The program and arguments that run `file args` inside the sandbox. */
export function sandboxedSpawn(bwrapPath: string | undefined, plan: SandboxPlan, file: string, args: string[], env?: Readonly<Record<string, string | undefined>>): { file: string; args: string[] } {
  return { file: bwrapPath ?? defaultBwrapPath(), args: [...bwrapArgs(plan, env), '--', file, ...args] };
}
