import { existsSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { reportCommand } from '../../../src/cli/commands/report.js';
import { invoke } from '../../display/fixtures/invoke-command.js';
import { writeSyntheticRun } from '../../display/fixtures/synthetic-run.js';

describe('orchestrate report', () => {
  it('writes report.html into the run folder and prints its path', async () => {
    const cwd = mkdtempSync(join(tmpdir(), 'cli-report-'));
    const { store } = writeSyntheticRun(join(cwd, '.orchestrate', 'runs'), '20260101-120000-abcd');
    const r = await invoke(reportCommand, ['report', '20260101-120000-abcd'], { cwd });
    expect(r.code).toBe(0);
    expect(r.out).toBe(`${join(store.dir, 'report.html')}\n`);
    expect(readFileSync(join(store.dir, 'report.html'), 'utf8')).toMatch(/^<!doctype html>/);
  });

  it('an unknown run exits 2, writes nothing and lists the recent runs', async () => {
    const cwd = mkdtempSync(join(tmpdir(), 'cli-report-'));
    const runs = join(cwd, 'runs');
    const { store } = writeSyntheticRun(runs, 'only-run');
    const r = await invoke(reportCommand, ['report', 'missing', '--run-dir', 'runs'], { cwd });
    expect(r.code).toBe(2);
    expect(r.err).toMatch(/no run "missing" in .*runs\n {2}recent runs:\n {4}only-run/);
    expect(existsSync(join(store.dir, 'report.html'))).toBe(false);
  });
});
