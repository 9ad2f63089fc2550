// The lifeline of bash commands: a command's whole process group dies with the process that
// started it, even when that process is killed with SIGKILL; on a normal exit nothing changes
// (background jobs stay, `wait` does not hang, stdin is /dev/null, shell error lines are right).
import { spawn } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { createBashTool } from '../../src/tools/bash.js';
import { runTool, tempDir } from './harness.js';

const CHILD = resolve(import.meta.dirname, 'fixtures/bash-tool-child.ts');

const alive = (pid: number): boolean => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

async function until(check: () => boolean, ms: number): Promise<boolean> {
  const t0 = Date.now();
  while (!check()) {
    if (Date.now() - t0 > ms) return false;
    await new Promise((r) => setTimeout(r, 20));
  }
  return true;
}

const text = (r: { content: { type: string; text?: string }[] }): string => r.content.map((c) => c.text ?? '').join('');

describe('bash commands are tied to the life of their process', () => {
  it('kill -9 of the process that runs the tool kills the command and its children before they finish', async () => {
    const dir = tempDir();
    const cmd = 'echo $$ > shell.pid; sleep 30 & echo $! > child.pid; sleep 30; echo late > marker';
    // Unconfined (the pids must be this namespace's); sandbox.test.ts covers the sandboxed case.
    const child = spawn(process.execPath, ['--import', 'tsx', CHILD, dir, cmd, 'none'], {
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    let out = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    expect(await until(() => out.includes('running') && existsSync(join(dir, 'child.pid')), 15_000)).toBe(true);
    const shell = Number(readFileSync(join(dir, 'shell.pid'), 'utf8'));
    const bg = Number(readFileSync(join(dir, 'child.pid'), 'utf8'));
    expect(alive(shell) && alive(bg)).toBe(true);
    child.kill('SIGKILL');
    // The whole group is gone within moments, long before the commands would have finished.
    expect(await until(() => !alive(shell) && !alive(bg), 3_000)).toBe(true);
    expect(existsSync(join(dir, 'marker'))).toBe(false);
  });

  it('a normal exit leaves background jobs running, and `wait` does not wait for the lifeline', async () => {
    const dir = tempDir();
    // Unconfined: in the sandbox every process of a command ends with it (sandbox.test.ts).
    const tool = createBashTool({ cwd: dir, sandbox: { mode: 'none' } });
    // `wait` waits for every background job of the shell: the lifeline's sentinel is not one.
    expect(text(await runTool(tool, { command: 'sleep 0.1 & wait; echo waited', timeout: 10 }))).toBe('waited');
    expect(text(await runTool(tool, { command: 'sleep 20 >/dev/null 2>&1 & echo $! > bg.pid; echo started' }))).toBe(
      'started',
    );
    const bg = Number(readFileSync(join(dir, 'bg.pid'), 'utf8'));
    expect(alive(bg)).toBe(true);
    process.kill(bg, 'SIGKILL');
    // A job that only acts after its command has ended shows it was not killed then. (Node
    // destroys a child's stdin before its exit event, so a lifeline on stdin killed every such job.)
    for (let i = 0; i < 5; i++) {
      expect(
        text(
          await runTool(tool, {
            command: `(while [ ! -e go-${i} ]; do sleep 0.05; done; echo outlived > after-${i}) >/dev/null 2>&1 & echo started`,
          }),
        ),
      ).toBe('started');
      writeFileSync(join(dir, `go-${i}`), '');
      expect(await until(() => existsSync(join(dir, `after-${i}`)), 15_000)).toBe(true);
    }
  });

  it('the command still reads /dev/null as stdin, and shell errors keep their line numbers', async () => {
    const tool = createBashTool({ cwd: tempDir() });
    expect(text(await runTool(tool, { command: 'cat; echo "rc=$?"' }))).toBe('rc=0');
    const err = await runTool(tool, { command: 'true\nfi' }).then(
      () => '',
      (e: Error) => e.message,
    );
    expect(err).toMatch(/line 2: syntax error/);
  });
});
