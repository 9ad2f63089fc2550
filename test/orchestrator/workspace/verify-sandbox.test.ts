// verify and run: commands run code the agent wrote: in the sandbox they see no provider key
// (not in their environment, not in any /proc/<pid>/environ they can reach), cannot write outside
// the workspace, and leave nothing running. Without bwrap they still run, without the key.
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { runCommand } from '../../../src/orchestrator/workspace/verify.js';
import { skipWithoutBwrap } from '../../helpers/bwrap.js';
import { cleanupTempDirs, tempProject } from '../helpers/run-fixtures.js';

afterAll(() => cleanupTempDirs());

const CHILD = resolve(import.meta.dirname, '../fixtures/verify-child.ts');
const KEY = 'sk-ant-verify-test-abcdef0123456789';
const READ_KEYS = "env; echo ---; tr '\\0' '\\n' < /proc/$PPID/environ; echo ---; tr '\\0' '\\n' < /proc/1/environ";

/** Runs one verify command in a process that has the key in its environment from the start. */
function verifyInChild(
  cwd: string,
  command: string,
  mode: 'none' | 'workspace',
): Promise<{ ok: boolean; output: string }> {
  return new Promise((res, rej) => {
    const child = spawn(process.execPath, ['--import', 'tsx', CHILD, cwd, command, mode], {
      stdio: ['ignore', 'pipe', 'inherit'],
      env: { ...process.env, ANTHROPIC_API_KEY: KEY },
    });
    let out = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    child.on('error', rej);
    child.on('close', () => {
      const line = out.split('\n').find((l) => l.startsWith('{'));
      if (line) res(JSON.parse(line) as { ok: boolean; output: string });
      else rej(new Error(`no result: ${out}`));
    });
  });
}

describe.skipIf(skipWithoutBwrap('test/orchestrator/verify-sandbox.test.ts'))(
  'verify commands in the sandbox (real bwrap)',
  () => {
    it('a verify command sees no key: not in env, not in the environ of its parent or of PID 1', async () => {
      const dir = tempProject({ 'a.txt': 'a\n' });
      // Unconfined, the key is one `tr` away in the parent's environ (so the test can fail).
      expect((await verifyInChild(dir, READ_KEYS, 'none')).output).toContain(KEY);
      const r = await verifyInChild(dir, READ_KEYS, 'workspace');
      expect(r.ok).toBe(true);
      expect(r.output).toContain('---');
      expect(r.output).not.toContain(KEY);
    });

    it('writes only inside its cwd; a local port is out of reach', async () => {
      const dir = tempProject({ 'a.txt': 'a\n' });
      const outside = mkdtempSync('/var/tmp/verify-outside-');
      try {
        const r = await runCommand(`echo ok > inside.txt && echo bad > ${outside}/bad.txt`, { cwd: dir });
        expect(r.ok).toBe(false);
        expect(r.output).toMatch(/Read-only file system/);
        expect(existsSync(join(dir, 'inside.txt'))).toBe(true);
        expect(existsSync(join(outside, 'bad.txt'))).toBe(false);
      } finally {
        rmSync(outside, { recursive: true, force: true });
      }
    });
  },
);

describe('verify without the sandbox', () => {
  it('with bwrap missing it runs unconfined, warns once, and still gets no key from the environment', async () => {
    const dir = tempProject({ 'a.txt': 'a\n' });
    const warnings: string[] = [];
    const before = process.env.ANTHROPIC_API_KEY;
    process.env.ANTHROPIC_API_KEY = KEY;
    try {
      const sandbox = {
        bwrapPath: `/nonexistent/bwrap-verify-${process.pid}`,
        warn: (m: string) => void warnings.push(m),
      };
      const a = await runCommand('env; echo one > one.txt', { cwd: dir, sandbox });
      const b = await runCommand('echo two', { cwd: dir, sandbox });
      expect(a.ok && b.ok).toBe(true);
      expect(a.output).not.toContain(KEY);
      expect(existsSync(join(dir, 'one.txt'))).toBe(true);
      expect(warnings).toHaveLength(1);
      expect(warnings[0]).toMatch(/WITHOUT a sandbox/);
      // sandbox: none runs as before, without a warning
      const c = await runCommand('echo three', {
        cwd: dir,
        sandbox: { mode: 'none', warn: (m) => void warnings.push(m) },
      });
      expect(c.output.trim()).toBe('three');
      expect(warnings).toHaveLength(1);
    } finally {
      if (before === undefined) delete process.env.ANTHROPIC_API_KEY;
      else process.env.ANTHROPIC_API_KEY = before;
    }
  });
});
