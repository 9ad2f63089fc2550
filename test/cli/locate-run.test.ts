// A `<run>` that is a path to something other than a run folder (a file, the project folder, the
// runs folder itself) is named for what it is, with where the runs are; before, every one of them
// read "no run "<path>" in .orchestrate/runs", as if the path were a mistyped run id. A run folder
// whose run.jsonl holds no run start (empty, or overwritten) is said to be so; before, show printed
// "run  ·  ·" started in 1970 with exit 0, and cancel offered a resume that resume refused.
import { appendFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
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
  for (const id of ['r-empty', 'r-garbage']) mkdirSync(join(runs, id));
  writeFileSync(join(runs, 'r-empty', 'run.jsonl'), '');
  writeFileSync(join(runs, 'r-garbage', 'run.jsonl'), 'xx{{\nnot json either\n');
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

describe('a run folder whose run.jsonl records no run start', () => {
  it.each(['show', 'show --json', 'report', 'watch', 'cancel', 'approve --task x'])(
    '%s: exit 2 saying the log is empty or unreadable, nothing on stdout',
    async (command) => {
      const [verb = '', ...rest] = command.split(' ');
      const empty = await runCli([verb, 'r-empty', ...rest], { cwd: project });
      expect(empty.stderr).toContain(
        `orchestrate: ${join(runs, 'r-empty')} holds no run record: its run.jsonl is empty`,
      );
      expect(empty.stdout).toBe('');
      expect(empty.code).toBe(2);
      const garbage = await runCli([verb, 'r-garbage', ...rest], { cwd: project });
      expect(garbage.stderr).toContain(
        `${join(runs, 'r-garbage', 'run.jsonl')} has no run_start record in its first lines`,
      );
      expect(hasStackTrace(garbage.stderr)).toBe(false);
      expect(garbage.stdout).toBe('');
      expect(garbage.code).toBe(2);
    },
  );

  it('a torn first line before the run start, or garbage after it, is still a run to show', async () => {
    const good = readFileSync(join(runs, '20260101-120000-aaaa', 'run.jsonl'), 'utf8');
    mkdirSync(join(runs, 'r-torn'));
    writeFileSync(join(runs, 'r-torn', 'run.jsonl'), `{"v":1,"ty\n${good}`);
    appendFileSync(join(runs, 'r-torn', 'run.jsonl'), 'garbage in the middle\n{"v":1');
    const r = await runCli(['show', 'r-torn', '--json'], { cwd: project });
    expect(JSON.parse(r.stdout)).toMatchObject({ name: 'rename-logger' });
    expect(r.code).toBe(0);
  });
});

describe('a run id typed in a subfolder of the project', () => {
  it.each(['show', 'resume'])('%s names the runs folder above that holds it', async (verb) => {
    const sub = join(project, 'src', 'deep');
    mkdirSync(sub, { recursive: true });
    const r = await runCli([verb, '20260101'], { cwd: sub });
    expect(r.stderr).toContain(`no run "20260101" in ${join(sub, '.orchestrate', 'runs')}`);
    expect(r.stderr).toContain(
      `hint: run 20260101 is in ${join(runs, '20260101-120000-aaaa')} (a folder above this one): pass --run-dir ${runs}, or run the command from ${project}`,
    );
    expect(r.code).toBe(2);
    // With --run-dir the user chose where to look: no guessing above it.
    const chosen = await runCli([verb, '20260101', '--run-dir', '.orchestrate/runs'], { cwd: sub });
    expect(chosen.stderr).not.toContain('a folder above');
  });
});
