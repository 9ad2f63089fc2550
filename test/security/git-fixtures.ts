// Shared parts of the git attack tests (issue 26): a decoy provider key in the environment, a
// marker command that would dump the environment where the attacker can read it, temp repos,
// and a search of a folder for the decoy (it must never appear in any file).
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync, lstatSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';

/** A fake key, set in process.env.ANTHROPIC_API_KEY while a test runs: it must not leak. */
export const DECOY_KEY = `sk-ant-decoy-${Math.random().toString(36).slice(2)}`;

const made: string[] = [];

export function tempDir(prefix = 'git-attack-'): string {
  const d = mkdtempSync(join(tmpdir(), prefix));
  made.push(d);
  return d;
}

export function cleanup(): void {
  for (const d of made.splice(0)) rmSync(d, { recursive: true, force: true });
}

export function write(dir: string, rel: string, text: string | Buffer, mode?: number): void {
  const p = join(dir, rel);
  mkdirSync(dirname(p), { recursive: true });
  writeFileSync(p, text, mode === undefined ? undefined : { mode });
}

/** Plain git for the test's own setup (never the product's). */
export function git(cwd: string, ...args: string[]): string {
  return execFileSync('git', args, {
    cwd,
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...process.env, GIT_CONFIG_NOSYSTEM: '1' },
  }).toString();
}

/** A repository in `dir` with the given files committed. */
export function repoWith(dir: string, files: Record<string, string>): string {
  for (const [rel, text] of Object.entries(files)) write(dir, rel, text);
  git(dir, 'init', '-q', '-b', 'main');
  git(dir, 'add', '-A');
  git(
    dir,
    '-c',
    'user.name=t',
    '-c',
    'user.email=t@example.com',
    '-c',
    'commit.gpgSign=false',
    'commit',
    '-qm',
    'init',
  );
  return dir;
}

/**
 * A command (for a config value) that writes its environment to `marker`, then copies its input
 * to its output as a filter would: its script goes into `repo`'s .git folder, where the model can
 * write it. If it ever runs outside the sandbox, `marker` exists and holds the decoy key.
 */
export function dumpEnvTo(repo: string, marker: string): string {
  const script = join(repo, '.git', 'attack.sh');
  mkdirSync(dirname(script), { recursive: true });
  writeFileSync(script, `env > "${marker}"\ncat\n`);
  return `sh ${script}`;
}

/** Every file under `dir` (not following links) whose bytes contain the decoy key. */
export function filesHoldingDecoy(dir: string): string[] {
  const hits: string[] = [];
  const walk = (d: string): void => {
    for (const name of readdirSync(d)) {
      const p = join(d, name);
      const st = lstatSync(p);
      if (st.isDirectory()) walk(p);
      else if (st.isFile() && readFileSync(p).includes(DECOY_KEY)) hits.push(p);
    }
  };
  walk(dir);
  return hits;
}

/** Runs `fn` with the decoy key in the environment (and the previous value put back after). */
export async function withDecoyKey<T>(fn: () => Promise<T>): Promise<T> {
  const before = process.env.ANTHROPIC_API_KEY;
  process.env.ANTHROPIC_API_KEY = DECOY_KEY;
  try {
    return await fn();
  } finally {
    if (before === undefined) delete process.env.ANTHROPIC_API_KEY;
    else process.env.ANTHROPIC_API_KEY = before;
  }
}

/**
 * Runs the tests of `body` twice: with bubblewrap as installed, and with it unavailable
 * (ORCHESTRATE_BWRAP pointing at a missing file), where the environment and config overrides
 * alone must stop the attack.
 */
export const SANDBOX_MODES = [
  { name: 'inside bubblewrap', bwrap: undefined },
  { name: 'without bubblewrap (env and config overrides alone)', bwrap: '/nonexistent/bwrap-for-test' },
] as const;

export function setBwrap(path: string | undefined): () => void {
  const before = process.env.ORCHESTRATE_BWRAP;
  if (path === undefined) delete process.env.ORCHESTRATE_BWRAP;
  else process.env.ORCHESTRATE_BWRAP = path;
  return () => {
    if (before === undefined) delete process.env.ORCHESTRATE_BWRAP;
    else process.env.ORCHESTRATE_BWRAP = before;
  };
}
