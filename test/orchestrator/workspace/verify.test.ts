import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runCommand, verifyFailurePrompt } from '../../../src/orchestrator/workspace/verify.js';

describe('runCommand', () => {
  const dir = mkdtempSync(join(tmpdir(), 'orch-verify-'));
  writeFileSync(join(dir, 'marker.txt'), 'hello');

  it('runs in the given folder with the given env and passes on exit 0', async () => {
    const r = await runCommand('cat marker.txt && echo " $GREETING"', { cwd: dir, env: { GREETING: 'there' } });
    expect(r.ok).toBe(true);
    expect(r.output).toBe('hello there\n');
  });

  it('fails on a non-zero exit and keeps stderr', async () => {
    const r = await runCommand('echo oops >&2; exit 3', { cwd: dir });
    expect(r).toMatchObject({ ok: false, exitCode: 3, timedOut: false });
    expect(r.output).toMatch(/oops/);
  });

  it('kills the whole process tree on timeout', async () => {
    const t0 = Date.now();
    // Far apart: the commands would sleep 60 s, a loaded machine may take seconds to spawn and kill.
    const r = await runCommand('sleep 60 & sleep 60; echo never', { cwd: dir, timeoutMs: 200 });
    expect(r.ok).toBe(false);
    expect(r.timedOut).toBe(true);
    expect(Date.now() - t0).toBeLessThan(30_000);
    expect(r.output).toMatch(/timed out/);
  }, 90_000);

  it('keeps only the tail of long output and says how much was cut', async () => {
    const r = await runCommand('for i in $(seq 1 2000); do echo line-$i; done', { cwd: dir, maxChars: 200 });
    expect(r.ok).toBe(true);
    expect(r.output).toMatch(/earlier characters of output cut/);
    expect(r.output).toMatch(/line-2000\n$/);
    expect(r.output).not.toMatch(/line-1\n/);
  });

  it('the failure prompt names the command, the exit and the output', async () => {
    const r = await runCommand('echo "expected 2 got 3"; exit 1', { cwd: dir });
    const p = verifyFailurePrompt(r, 1, 3);
    expect(p).toMatch(/`echo "expected 2 got 3"; exit 1` exited with code 1 \(check 1 of 3\)/);
    expect(p).toMatch(/expected 2 got 3/);
  });
});
