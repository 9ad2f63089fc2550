// Starting `orchestrate` as a process of its own (run-launcher.ts), with the real CLI: a launch that
// ends before it takes its run folder is refused with what that process printed, and only that: a
// resume's log in the run folder (mcp-launch.log) already holds the output of earlier launches.
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { LAUNCH_LOG, RunLauncher } from '../../src/service/run-launcher.js';

const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

describe('RunLauncher', () => {
  it("a launch that fails says what it printed, not an earlier launch's output kept in the same log", async () => {
    const runDir = mkdtempSync(join(tmpdir(), 'run-launcher-'));
    dirs.push(runDir);
    const earlier = 'an earlier resume: 3 done · 5,812 tokens';
    writeFileSync(join(runDir, LAUNCH_LOG), `${earlier}\n`);
    const missing = join(runDir, 'no-such-run');
    const launched = await new RunLauncher().launch({
      args: ['resume', missing],
      cwd: runDir,
      env: { PATH: process.env.PATH, ORCHESTRATE_HOME: join(runDir, 'home') },
      runDir,
    });
    expect(launched.ok).toBe(false);
    const message = launched.ok ? '' : launched.message;
    expect(message).toContain(missing);
    // It was the log's last 4,000 characters: the earlier launch's lines came first.
    expect(message).not.toContain(earlier);
    // The log itself keeps both, in order.
    const log = readFileSync(join(runDir, LAUNCH_LOG), 'utf8');
    expect(log.startsWith(`${earlier}\n`)).toBe(true);
    expect(log).toContain(missing);
  });
});
