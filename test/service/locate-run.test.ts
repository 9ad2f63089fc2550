// service/locate-run.ts on real runs folders: the run a user names, or why not as a code, with the
// hint naming what lists every run for the caller's reader (no caller rewrites the message).
import { chmodSync, mkdirSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { listRunsIn } from '../../src/service/list-runs.js';
import { locateRun } from '../../src/service/locate-run.js';
import { writeSyntheticRun } from '../display/fixtures/synthetic-run.js';

function runsFolder(): { cwd: string; runs: string } {
  const cwd = mkdtempSync(join(tmpdir(), 'service-locate-'));
  const runs = join(cwd, 'runs');
  writeSyntheticRun(runs, '20260101-120000-abcd');
  return { cwd, runs };
}

describe('service: locate a run', () => {
  it('finds a run by a unique prefix of its id', () => {
    const { cwd, runs } = runsFolder();
    expect(locateRun(runs, '20260101', cwd)).toEqual({ ok: true, dir: join(runs, '20260101-120000-abcd') });
  });

  it('an unknown run is no_such_run; the hint names the CLI command, or what the caller passes instead', () => {
    const { cwd, runs } = runsFolder();
    const cli = locateRun(runs, 'nope', cwd);
    expect(cli).toMatchObject({ ok: false, code: 'no_such_run' });
    if (cli.ok) return;
    expect(cli.message).toContain('hint: `orchestrate runs` lists them all');
    const mcp = locateRun(runs, 'nope', cwd, 'list_runs');
    if (mcp.ok) throw new Error('found a run that is not there');
    expect(mcp.message).toContain('hint: list_runs lists them all');
    expect(mcp.message).not.toContain('orchestrate runs');
  });

  it.skipIf(process.getuid?.() === 0)('a runs folder it may not read is runs_dir_unreadable', () => {
    const cwd = mkdtempSync(join(tmpdir(), 'service-locate-'));
    const runs = join(cwd, 'runs');
    mkdirSync(runs);
    chmodSync(runs, 0o000);
    try {
      expect(locateRun(runs, 'x', cwd)).toMatchObject({ ok: false, code: 'runs_dir_unreadable' });
    } finally {
      chmodSync(runs, 0o700);
    }
  });
});

describe('service: list runs', () => {
  it('lists the recorded runs, and a missing folder as none', () => {
    const { runs } = runsFolder();
    const listed = listRunsIn(runs);
    expect(listed.ok && listed.runs.map((r) => r.runId)).toEqual(['20260101-120000-abcd']);
    expect(listRunsIn(join(runs, 'nothing-here'))).toEqual({ ok: true, runs: [] });
  });
});
