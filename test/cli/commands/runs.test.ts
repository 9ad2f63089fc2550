import { mkdirSync, mkdtempSync } from 'node:fs';
import { hostname, tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runsCommand } from '../../../src/cli/commands/runs.js';
import { FileRunLease } from '../../../src/run/run-lease.js';
import { RunStore } from '../../../src/run/run-store.js';
import { zeroUsage } from '../../../src/run/run-events.js';
import { invoke } from '../../display/fixtures/invoke-command.js';
import { writeSyntheticRun } from '../../display/fixtures/synthetic-run.js';

describe('orchestrate runs', () => {
  it('lists runs under .orchestrate/runs of the current folder, newest first, with recipe, start, status and cost', async () => {
    const cwd = mkdtempSync(join(tmpdir(), 'cli-runs-'));
    const runsDir = join(cwd, '.orchestrate', 'runs');
    writeSyntheticRun(runsDir, '20260101-120000-aaaa');
    const later = RunStore.create(runsDir, '20260102-090000-bbbb');
    later.append({ type: 'run_start', recipe: 'other.yaml', name: 'other', recipeHash: 'h', inputs: {}, plan: [] });
    const r = await invoke(runsCommand, ['runs'], { cwd });
    expect(r.code).toBe(0);
    const lines = r.out.trimEnd().split('\n');
    expect(lines[0]).toMatch(/^RUN\s+RECIPE\s+STARTED\s+STATUS\s+COST$/);
    expect(lines[1]).toMatch(
      /^20260102-090000-bbbb\s+other \(other\.yaml\)\s+\d{4}-\d\d-\d\d \d\d:\d\d\s+interrupted\s+\$0\.0000$/,
    );
    expect(lines[2]).toMatch(
      /^20260101-120000-aaaa\s+rename-logger \(recipes\/rename-logger\.yaml\)\s+.*failed\s+\$0\.\d{4}$/,
    );
    // biome-ignore lint/suspicious/noControlCharactersInRegex: ESC (\x1b) starts every ANSI colour sequence
    expect(r.out).not.toMatch(/\x1b/);
  });

  it('--run-dir looks elsewhere; an empty folder says so and how to look elsewhere', async () => {
    const cwd = mkdtempSync(join(tmpdir(), 'cli-runs-'));
    writeSyntheticRun(join(cwd, 'elsewhere'), 'r-1');
    expect((await invoke(runsCommand, ['runs', '--run-dir', 'elsewhere'], { cwd })).out).toMatch(/^RUN/);
    const empty = await invoke(runsCommand, ['runs'], { cwd });
    expect(empty.code).toBe(0);
    expect(empty.out).toMatch(/^no runs in .*\.orchestrate\/runs\n {2}hint: .*--run-dir/);
  });

  it("no runs where it looked: the hint says where they are (one run's folder, the .orchestrate folder, a subfolder)", async () => {
    const cwd = mkdtempSync(join(tmpdir(), 'cli-runs-'));
    const runs = join(cwd, '.orchestrate', 'runs');
    writeSyntheticRun(runs, 'r-3');
    const oneRun = await invoke(runsCommand, ['runs', '--run-dir', join(runs, 'r-3')], { cwd });
    expect(oneRun.out).toContain(
      `hint: ${join(runs, 'r-3')} is the folder of one run, not a folder of runs: orchestrate runs --run-dir ${runs}, or orchestrate show ${join(runs, 'r-3')}`,
    );
    const above = await invoke(runsCommand, ['runs', '--run-dir', '.orchestrate'], { cwd });
    expect(above.out).toContain(`hint: the runs are in ${runs}: orchestrate runs --run-dir ${runs}`);
    const sub = join(cwd, 'src', 'deep');
    mkdirSync(sub, { recursive: true });
    const fromSub = await invoke(runsCommand, ['runs'], { cwd: sub });
    expect(fromSub.out).toContain(
      `hint: there is no such folder; runs started in ${cwd} are in ${runs}: orchestrate runs --run-dir ${runs}`,
    );
    expect(fromSub.code).toBe(0);
  });

  it('--json prints the listing as JSON', async () => {
    const cwd = mkdtempSync(join(tmpdir(), 'cli-runs-'));
    writeSyntheticRun(join(cwd, '.orchestrate', 'runs'), 'r-2');
    const r = await invoke(runsCommand, ['runs', '--json'], { cwd });
    expect(JSON.parse(r.out)).toMatchObject([{ runId: 'r-2', name: 'rename-logger', status: 'failed' }]);
  });

  it('a run whose coordinator holds its lease is running, with its pid and host; once released it is not', async () => {
    const cwd = mkdtempSync(join(tmpdir(), 'cli-runs-'));
    const { store } = writeSyntheticRun(join(cwd, '.orchestrate', 'runs'), 'r-4');
    const lease = new FileRunLease(store.dir);
    expect(lease.acquireSync().ok).toBe(true);
    // A resume of the failed run is under way (its log ends with the old session's run_end, then run_resume).
    store.append({ type: 'run_resume', previousStatus: 'failed' });
    const live = await invoke(runsCommand, ['runs'], { cwd });
    expect(live.out).toMatch(new RegExp(`^r-4 .* running \\(pid ${process.pid} on ${hostname()}\\)\\s+\\$`, 'm'));
    expect(JSON.parse((await invoke(runsCommand, ['runs', '--json'], { cwd })).out)).toMatchObject([
      { status: 'running', holder: { pid: process.pid, host: hostname() } },
    ]);
    // The session wrote run_end; its coordinator still holds the lease for a moment: the run has ended (issue 38).
    store.append({ type: 'run_end', status: 'succeeded', usage: zeroUsage(), durationMs: 1 });
    expect((await invoke(runsCommand, ['runs'], { cwd })).out).toMatch(/^r-4 .* succeeded\s+\$/m);
    lease.releaseSync();
    expect((await invoke(runsCommand, ['runs'], { cwd })).out).toMatch(/^r-4 .* succeeded\s+\$/m);
  });

  it('colours the status only on a TTY without NO_COLOR', async () => {
    const cwd = mkdtempSync(join(tmpdir(), 'cli-runs-'));
    writeSyntheticRun(join(cwd, '.orchestrate', 'runs'), 'r-3');
    const ESC = '\x1b';
    expect((await invoke(runsCommand, ['runs'], { cwd, isTTY: true })).out).toContain(`${ESC}[31m`);
    expect((await invoke(runsCommand, ['runs'], { cwd, isTTY: true, env: { NO_COLOR: '1' } })).out).not.toContain(ESC);
    expect((await invoke(runsCommand, ['runs', '--no-color'], { cwd, isTTY: true })).out).not.toContain(ESC);
  });
});
