// The sandbox of the bash tool, tried the way a misbehaving model would break out: reading the
// parent's environment, writing outside the workspace, reaching a local port, leaving a setsid
// child behind. Each escape is shown to work unconfined (so the test can fail) and to fail inside.
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { join, resolve } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { createBashTool } from '../../src/tools/bash.js';
import { bwrapArgs, probeSandbox, resolveSandboxMode, sandboxEnv } from '../../src/tools/sandbox.js';
import { skipWithoutBwrap } from '../helpers/bwrap.js';
import { errorOf, runTool, tempDir, textOf } from './harness.js';

const CHILD = resolve(import.meta.dirname, 'fixtures/sandbox-child.ts');
const KEY = 'sk-ant-sandbox-test-0123456789abcdef';

// A hang bound only (a loaded machine is slow to spawn and reap).
async function until(check: () => boolean, ms = 20_000): Promise<boolean> {
  const end = Date.now() + ms;
  while (Date.now() < end) {
    if (check()) return true;
    await new Promise((r) => setTimeout(r, 20));
  }
  return check();
}

/** Host pids whose command line holds `token` (a process started inside a sandbox is visible here). */
function processesWith(token: string): number[] {
  const out: number[] = [];
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const cmd = readFileSync(`/proc/${name}/cmdline`, 'utf8');
      const state = readFileSync(`/proc/${name}/stat`, 'utf8');
      if (cmd.includes(token) && !/^\d+ \(.*\) Z/.test(state)) out.push(Number(name));
    } catch {
      // gone meanwhile
    }
  }
  return out;
}

/**
 * A command that starts a `setsid` child sleeping `token` seconds and returns once the child has
 * left the command's session (it writes its file after setsid()), so nothing but the sandbox
 * decides whether it outlives the command.
 */
const detachedSleeper = (token: string): string =>
  `rm -f escaped.pid; setsid sh -c 'echo $$ > escaped.pid; exec sleep ${token}' </dev/null >/dev/null 2>&1 & while [ ! -s escaped.pid ]; do sleep 0.01; done; echo started`;

/** A unique `sleep` duration: its command line identifies the process on the host. */
const uniqueSleep = (): string =>
  `${1000 + Math.floor(Math.random() * 1000)}.${process.pid}${Math.floor(Math.random() * 1e6)}`;

/** Runs the fixture with the key in its environment; resolves with what the command printed. */
function runInChild(cwd: string, command: string, mode: 'none' | 'workspace'): Promise<string> {
  return new Promise((resolvePromise, reject) => {
    const child = spawn(process.execPath, ['--import', 'tsx', CHILD, cwd, command, mode], {
      stdio: ['ignore', 'pipe', 'inherit'],
      env: { ...process.env, ANTHROPIC_API_KEY: KEY },
    });
    let out = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    child.on('error', reject);
    child.on('close', () => {
      const line = out.split('\n').find((l) => l.startsWith('{'));
      if (!line) reject(new Error(`no result from the child: ${out}`));
      else resolvePromise((JSON.parse(line) as { out: string }).out);
    });
  });
}

const servers: Server[] = [];
afterEach(() => {
  for (const s of servers.splice(0)) s.close();
});

describe.skipIf(skipWithoutBwrap('test/tools/sandbox.test.ts'))(
  'the bash sandbox (real bwrap)',
  { timeout: 60_000 },
  () => {
    it('works here: the probe runs bwrap for real', () => {
      const probe = probeSandbox();
      expect(probe.reason).toBeUndefined();
      expect(probe.ok).toBe(true);
      expect(resolveSandboxMode(undefined)).toEqual({ mode: 'workspace' });
    });

    it("hides the parent's environment: /proc/$PPID/environ and /proc/1/environ hold no key", async () => {
      const dir = tempDir();
      const read = "tr '\\0' '\\n' < /proc/$PPID/environ; echo ---; tr '\\0' '\\n' < /proc/1/environ; echo ---; env";
      // Unconfined, the one-liner from the issue reads the key out of the agent's own process.
      expect(await runInChild(dir, read, 'none')).toContain(KEY);
      const inside = await runInChild(dir, read, 'workspace');
      expect(inside).toContain('---');
      expect(inside).not.toContain(KEY);
      expect(inside).not.toContain('ANTHROPIC_API_KEY');
    });

    it('the workspace is writable, the rest of the file system is not (also not for root)', async () => {
      const dir = tempDir();
      // Outside /tmp, so the folder is visible (read-only) inside rather than hidden by the private /tmp.
      const outside = mkdtempSync('/var/tmp/sandbox-outside-');
      try {
        writeFileSync(join(outside, 'existing.txt'), 'readable\n');
        const tool = createBashTool({ cwd: dir });
        expect(textOf(await runTool(tool, { command: 'echo inside > inside.txt && cat inside.txt' }))).toBe('inside');
        expect(readFileSync(join(dir, 'inside.txt'), 'utf8')).toBe('inside\n');
        expect(textOf(await runTool(tool, { command: `cat ${outside}/existing.txt` }))).toBe('readable');
        const err = await errorOf(tool, { command: `echo escaped > ${outside}/escaped.txt` });
        expect(err).toMatch(/Read-only file system/);
        expect(existsSync(join(outside, 'escaped.txt'))).toBe(false);
        // Root keeps no capabilities inside: it cannot remount / read-write to get out.
        await errorOf(tool, { command: `mount -o remount,rw / 2>&1; echo escaped > ${outside}/escaped.txt` });
        expect(existsSync(join(outside, 'escaped.txt'))).toBe(false);
        // Unconfined, the same command writes there (the test can fail).
        const open = createBashTool({ cwd: dir, sandbox: { mode: 'none' } });
        await runTool(open, { command: `echo escaped > ${outside}/escaped.txt` });
        expect(existsSync(join(outside, 'escaped.txt'))).toBe(true);
        tool.dispose();
      } finally {
        rmSync(outside, { recursive: true, force: true });
      }
    });

    it('hides the folders that hold secrets (ORCHESTRATE_HOME, ~/.ssh ...) and any folder it is told to hide', async () => {
      const dir = tempDir();
      const secretHome = mkdtempSync('/var/tmp/sandbox-home-');
      try {
        writeFileSync(join(secretHome, 'secret.txt'), 'top secret\n');
        const tool = createBashTool({ cwd: dir, sandbox: { hide: [secretHome] } });
        expect(await errorOf(tool, { command: `cat ${secretHome}/secret.txt` })).toMatch(/No such file/);
        const args = bwrapArgs({ writable: [dir], cwd: dir }, { HOME: '/root', ORCHESTRATE_HOME: secretHome });
        expect(args.join(' ')).toContain(`--tmpfs ${secretHome}`);
        tool.dispose();
      } finally {
        rmSync(secretHome, { recursive: true, force: true });
      }
    });

    it('a workspace inside a hidden folder stays reachable (a worktree in the run folder)', async () => {
      const runDir = tempDir('run-');
      const ws = join(runDir, 'worktrees', 'a');
      const { mkdirSync } = await import('node:fs');
      mkdirSync(ws, { recursive: true });
      writeFileSync(join(runDir, 'run.jsonl'), 'private\n');
      const tool = createBashTool({ cwd: ws, sandbox: { hide: [runDir] } });
      expect(textOf(await runTool(tool, { command: 'echo ok > f && cat f; ls ../.. ' }))).toBe('ok\nworktrees');
      tool.dispose();
    });

    it('cuts the network: a local TCP port cannot be reached unless network: true', async () => {
      const dir = tempDir();
      let connections = 0;
      const server = createServer((socket) => {
        connections++;
        socket.end();
      });
      servers.push(server);
      await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
      const port = (server.address() as { port: number }).port;
      const connect = `exec 3<>/dev/tcp/127.0.0.1/${port} && echo connected`;
      const tool = createBashTool({ cwd: tempDir() });
      await errorOf(tool, { command: connect });
      expect(connections).toBe(0);
      // With network: true the same command reaches the server (the test can fail).
      const netTool = createBashTool({ cwd: dir, sandbox: { network: true } });
      const accepted = new Promise<void>((r) => server.once('connection', () => r()));
      expect(textOf(await runTool(netTool, { command: connect }))).toBe('connected');
      await accepted;
      expect(connections).toBe(1);
    });

    it('a setsid child does not outlive its command (normal end and timeout)', async () => {
      const dir = tempDir();
      const tool = createBashTool({ cwd: dir });
      const token = uniqueSleep();
      expect(textOf(await runTool(tool, { command: detachedSleeper(token) }))).toBe('started');
      // The command has ended: every process it started is gone with its PID namespace.
      expect(await until(() => processesWith(token).length === 0)).toBe(true);

      const token2 = uniqueSleep();
      const started = join(dir, 'started');
      const msg = await errorOf(tool, {
        command: `setsid sh -c 'touch started; exec sleep ${token2}' </dev/null >/dev/null 2>&1 & sleep 60`,
        timeout: 1,
      });
      expect(msg).toMatch(/timed out/);
      expect(existsSync(started)).toBe(true);
      expect(await until(() => processesWith(token2).length === 0)).toBe(true);
    });

    it('unconfined, the setsid child survives (what the sandbox prevents)', async () => {
      const tool = createBashTool({ cwd: tempDir(), sandbox: { mode: 'none' } });
      const token = uniqueSleep();
      expect(textOf(await runTool(tool, { command: detachedSleeper(token) }))).toBe('started');
      expect(await until(() => processesWith(token).length > 0)).toBe(true);
      for (const pid of processesWith(token)) process.kill(pid, 'SIGKILL');
    });

    it('kill -9 of the process running the tool kills the sandboxed command and its setsid children', async () => {
      const dir = tempDir();
      const token = uniqueSleep();
      const cmd = `setsid sleep ${token} </dev/null >/dev/null 2>&1 & touch started; sleep ${token}`;
      const child = spawn(process.execPath, ['--import', 'tsx', CHILD, dir, cmd, 'workspace'], {
        stdio: ['ignore', 'pipe', 'inherit'],
      });
      expect(await until(() => existsSync(join(dir, 'started')) && processesWith(token).length >= 2, 20_000)).toBe(
        true,
      );
      const gone = new Promise((r) => child.once('exit', r));
      child.kill('SIGKILL');
      await gone;
      expect(await until(() => processesWith(token).length === 0)).toBe(true);
    });

    it('keeps full-output logs in a private folder (700, files 600), visible inside, removed by dispose', async () => {
      const dir = tempDir();
      const tool = createBashTool({ cwd: dir });
      const r = await runTool(tool, { command: 'seq 1 5000' });
      // The model is told where the file is; the session does not record a path that will be gone.
      expect((r.details as { fullOutputPath?: string }).fullOutputPath).toBeUndefined();
      const path = /Full output: (\S+)\]/.exec(textOf(r))?.[1] ?? '';
      expect(path).toMatch(/\.log$/);
      expect(statSync(path).mode & 0o777).toBe(0o600);
      const folder = resolve(path, '..');
      expect(statSync(folder).mode & 0o777).toBe(0o700);
      // The model reads the rest of the output with bash: the log is at the same path inside.
      expect(textOf(await runTool(tool, { command: `head -n 2 ${path}; echo $TMPDIR` }))).toBe(`1\n2\n${folder}`);
      tool.dispose();
      expect(existsSync(folder)).toBe(false);
    });

    it('builds the environment from an allowlist plus what the caller adds, never a provider key', () => {
      const env = sandboxEnv(
        { PATH: '/bin', HOME: '/h', LC_ALL: 'C', SECRET_TOKEN: 'x', ANTHROPIC_API_KEY: KEY },
        { FOO: 'bar', ANTHROPIC_API_KEY: KEY },
      );
      expect(env).toEqual({ PATH: '/bin', HOME: '/h', LC_ALL: 'C', FOO: 'bar' });
    });
  },
);

describe('without the sandbox', () => {
  it('sandbox: none runs commands unconfined and warns nothing', async () => {
    const warnings: string[] = [];
    const tool = createBashTool({ cwd: tempDir(), sandbox: { mode: 'none', warn: (m) => warnings.push(m) } });
    expect(textOf(await runTool(tool, { command: 'echo plain' }))).toBe('plain');
    expect(warnings).toEqual([]);
  });

  it('with bwrap missing, commands still run and one warning is given for the whole run', async () => {
    const warnings: string[] = [];
    const bwrapPath = `/nonexistent/bwrap-${process.pid}`;
    const warn = (m: string): void => void warnings.push(m);
    const a = createBashTool({ cwd: tempDir(), sandbox: { bwrapPath, warn } });
    const b = createBashTool({ cwd: tempDir(), sandbox: { bwrapPath, warn } });
    expect(textOf(await runTool(a, { command: 'echo one' }))).toBe('one');
    expect(textOf(await runTool(a, { command: 'echo two' }))).toBe('two');
    expect(textOf(await runTool(b, { command: 'echo three' }))).toBe('three');
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toMatch(/WITHOUT a sandbox/);
    expect(warnings[0]).toMatch(/not installed/);
    expect(warnings[0]).toMatch(/apt-get install -y bubblewrap/);
    expect(probeSandbox(bwrapPath).ok).toBe(false);
  });
});
