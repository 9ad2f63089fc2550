// The .gitconfig of the sandbox's private home folder: the user's git identity only, read from
// the global config once per process and home. Kept apart from sandbox.ts (the mounts) because it
// has a blocking and a non-blocking way in: agent threads build it when their first command runs,
// the coordinator awaits sandboxGitConfigAsync so its event loop never waits for `git config`.
import { execFile, spawnSync } from 'node:child_process';
import { existsSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { PrivateTempDir } from './private-temp.js';

/** The home folder whose contents the sandbox replaces: HOME, else the user's. */
export function homeOf(env: Readonly<Record<string, string | undefined>>): string {
  return env.HOME || homedir();
}

const gitConfigs = new Map<string, string>();
const configDir = new PrivateTempDir(undefined, 'orchestrate-sandbox-');

/**
 * The private home's .gitconfig: only the user's git identity (user.name, user.email from the
 * global config), so commits inside the sandbox work; nothing else of the user's config (tokens,
 * credential helpers, aliases, include paths) comes in. Made once per process and home.
 */
export function sandboxGitConfig(env: Readonly<Record<string, string | undefined>> = process.env): string {
  const home = homeOf(env);
  const cached = gitConfigs.get(home);
  if (cached && existsSync(cached)) return cached;
  const { args, options } = identityCommand(home);
  const r = spawnSync('git', args, options);
  return writeSandboxGitConfig(home, parseIdentity(r.status === 0 ? r.stdout : undefined));
}

const gitConfigsPending = new Map<string, Promise<string>>();

/**
 * sandboxGitConfig without blocking the event loop (the coordinator's product git awaits it
 * before building a sandbox's arguments, which then find it made). Same file, same contents.
 */
export function sandboxGitConfigAsync(
  env: Readonly<Record<string, string | undefined>> = process.env,
): Promise<string> {
  const home = homeOf(env);
  const cached = gitConfigs.get(home);
  if (cached && existsSync(cached)) return Promise.resolve(cached);
  let pending = gitConfigsPending.get(home);
  if (!pending) {
    const { args, options } = identityCommand(home);
    pending = new Promise<string | undefined>((done) => {
      execFile('git', args, options, (err, stdout) => done(err ? undefined : stdout));
    }).then(
      (listed) => {
        gitConfigsPending.delete(home);
        const made = gitConfigs.get(home);
        return made && existsSync(made) ? made : writeSandboxGitConfig(home, parseIdentity(listed));
      },
      (err: unknown) => {
        gitConfigsPending.delete(home);
        throw err;
      },
    );
    gitConfigsPending.set(home, pending);
  }
  return pending;
}

/** Writes the private home's .gitconfig holding `name` and `email` (where set) for `home`. */
function writeSandboxGitConfig(home: string, [name, email]: (string | undefined)[]): string {
  const lines: string[] = ['# Made by orchestrate for its sandbox: your git identity only.'];
  const identity = [
    ['name', name],
    ['email', email],
  ].filter((kv): kv is [string, string] => kv[1] !== undefined);
  if (identity.length > 0) lines.push('[user]', ...identity.map(([k, v]) => `\t${k} = ${quoteGitValue(v)}`));
  const file = join(configDir.path, `gitconfig-${gitConfigs.size}`);
  writeFileSync(file, `${lines.join('\n')}\n`, { mode: 0o644 });
  gitConfigs.set(home, file);
  return file;
}

/**
 * How user.name and user.email of the user's global config are read, in one `git config` (the
 * config is only read: git config runs no program).
 */
function identityCommand(home: string) {
  return {
    args: ['config', '--global', '-z', '--get-regexp', '^user\\.(name|email)$'],
    options: {
      cwd: '/',
      encoding: 'utf8' as const,
      timeout: 5000,
      env: { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: home, GIT_CONFIG_NOSYSTEM: '1' },
    },
  };
}

/**
 * [name, email] from `identityCommand`'s output ("key\nvalue\0" entries; undefined: none set):
 * the last value of each, as `git config --get` gives, kept only when set and on one line.
 */
function parseIdentity(listed: string | undefined): [string | undefined, string | undefined] {
  const last: Record<string, string> = {};
  for (const entry of (listed ?? '').split('\0')) {
    const nl = entry.indexOf('\n');
    if (nl > 0) last[entry.slice(0, nl)] = entry.slice(nl + 1);
  }
  const oneLine = (value: string | undefined): string | undefined =>
    value && !/[\n\0]/.test(value) ? value : undefined;
  return [oneLine(last['user.name']), oneLine(last['user.email'])];
}

function quoteGitValue(value: string): string {
  return `"${value.replace(/\\/g, '\\\\').replace(/"/g, '\\"')}"`;
}
