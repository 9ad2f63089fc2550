// A `<run>` that is a path to something other than a run folder (a file, the project folder, the
// runs folder itself) is named for what it is, with where the runs are; before, every one of them
// read "no run "<path>" in .orchestrate/runs", as if the path were a mistyped run id.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { writeSyntheticRun } from '../display/fixtures/synthetic-run.js';
import { hasStackTrace, runCli } from './run-cli.js';

let cwd: string;
let project: string;
let runs: string;
beforeAll(() => {
  cwd = mkdtempSync(join(tmpdir(), 'orch-cli-locate-'));
  project = join(cwd, 'project');
  runs = join(project, '.orchestrate', 'runs');
  writeSyntheticRun(runs, '20260101-120000-aaaa');
  mkdirSync(join(cwd, 'plain'));
  writeFileSync(join(cwd, 'notes.txt'), 'not a run\n');
});
afterAll(() => rmSync(cwd, { recursive: true, force: true }));

const COMMANDS = ['show', 'report', 'watch', 'cancel', 'resume', 'resume --dry-run', 'publish'];

describe('a <run> path that is not a run folder', () => {
  it.each(COMMANDS)('%s <the project folder>: names the runs folder inside it and how to list it', async (command) => {
    const r = await runCli([...command.split(' '), 'project'], { cwd });
    expect(r.stderr).toContain(`orchestrate: ${project} is not a run folder; the runs started there are in ${runs}`);
    expect(r.stderr).toContain(`hint: \`orchestrate runs --run-dir ${runs}\` lists them`);
    expect(hasStackTrace(r.stderr)).toBe(false);
    expect(r.stdout).toBe('');
    expect(r.code).toBe(2);
  });

  it.each(COMMANDS)('%s <the runs folder>: says it holds runs and is not one', async (command) => {
    const r = await runCli([...command.split(' '), 'project/.orchestrate/runs'], { cwd });
    expect(r.stderr).toContain(`orchestrate: ${runs} is a folder of runs, not one run`);
    expect(r.code).toBe(2);
  });

  it('a file, and a folder with no runs anywhere, are named as such', async () => {
    const file = await runCli(['show', 'notes.txt'], { cwd });
    expect(file.stderr).toContain(`orchestrate: ${join(cwd, 'notes.txt')} is a file, not a run folder`);
    expect(file.code).toBe(2);
    const plain = await runCli(['resume', 'plain'], { cwd });
    expect(plain.stderr).toContain(`orchestrate: ${join(cwd, 'plain')} is a folder but not a run folder`);
    expect(plain.code).toBe(2);
  });

  it('a run folder, a run id and a mistyped id still behave as before', async () => {
    const byPath = await runCli(['show', 'project/.orchestrate/runs/20260101-120000-aaaa', '--json'], { cwd });
    expect(JSON.parse(byPath.stdout)).toMatchObject({ runId: '20260101-120000-aaaa' });
    const byId = await runCli(['show', '20260101', '--json'], { cwd: project });
    expect(JSON.parse(byId.stdout)).toMatchObject({ runId: '20260101-120000-aaaa' });
    const typo = await runCli(['show', '2027'], { cwd: project });
    expect(typo.stderr).toContain(`no run "2027" in ${runs}`);
    expect(typo.code).toBe(2);
  });
});
