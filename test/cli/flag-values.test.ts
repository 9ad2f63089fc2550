// On/off flags given a value: yargs read `--dry-run=yes` as off and ran the recipe for real, and
// `--json=1` printed text. Now such a value is a usage error (exit 2) and nothing runs. Number
// flags: one without its value was dropped (the recipe's budget applied), "abc" said "got NaN".
import { cpSync, existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hasStackTrace, runCli } from './run-cli.js';

const FAN_OUT = resolve(import.meta.dirname, '../../recipes/fan-out');

let cwd: string;
beforeAll(() => {
  cwd = mkdtempSync(join(tmpdir(), 'orch-cli-flag-values-'));
  cpSync(FAN_OUT, cwd, { recursive: true });
});
afterAll(() => rmSync(cwd, { recursive: true, force: true }));

const runsDir = () => join(cwd, '.orchestrate', 'runs');
const runCount = () => (existsSync(runsDir()) ? readdirSync(runsDir()).length : 0);

describe('an on/off flag given a value it does not take', () => {
  it.each([
    [['recipe.yaml', '--dry-run=yes'], '--dry-run takes no value (got --dry-run=yes)'],
    [['recipe.yaml', '--json=1'], '--json takes no value (got --json=1)'],
    [['run', 'recipe.yaml', '--no-color=please'], '--no-color takes no value (got --no-color=please)'],
  ])('%j: exit 2 naming the flag, and no run starts', async (argv, message) => {
    const before = runCount();
    const r = await runCli(argv, { cwd });
    expect(r.stderr).toContain(`orchestrate: ${message}`);
    expect(r.stderr).toContain('hint: write --');
    expect(hasStackTrace(r.stderr)).toBe(false);
    expect(r.stdout).toBe('');
    expect(r.code).toBe(2);
    expect(runCount()).toBe(before);
  });

  it('--json=full on a command without run events says it is for runs, not "Unknown argument: full-events"', async () => {
    const r = await runCli(['runs', '--json=full'], { cwd });
    expect(r.stderr).toContain('--json=full (every run event, message deltas included) is for a recipe run and resume');
    expect(r.stderr).toContain('hint: this command takes --json alone');
    expect(r.stderr).not.toContain('full-events');
    expect(r.code).toBe(2);
  });

  it('the values yargs reads as meant still work: --dry-run=true, --json=false, --json=full on a dry run', async () => {
    const dry = await runCli(['recipe.yaml', '--dry-run=true', '--json'], { cwd });
    expect(JSON.parse(dry.stdout)).toMatchObject({ ok: true, dryRun: true });
    expect(dry.code).toBe(0);
    const full = await runCli(['recipe.yaml', '--dry-run', '--json=full'], { cwd });
    expect(JSON.parse(full.stdout)).toMatchObject({ ok: true, dryRun: true });
    const text = await runCli(['recipe.yaml', '--dry-run', '--json=false'], { cwd });
    expect(text.stdout).toContain('Recipe fan-out');
    expect(text.code).toBe(0);
  });
});

describe('a number flag without a number', () => {
  it.each([
    [['recipe.yaml', '--dry-run', '--budget-usd'], '--budget-usd needs a value'],
    [['recipe.yaml', '--concurrency', '--dry-run'], '--concurrency needs a value'],
    [['recipe.yaml', '--dry-run', '--concurrency', 'abc'], '--concurrency takes a number (got "abc")'],
    [['recipe.yaml', '--dry-run', '--budget-usd=ten'], '--budget-usd takes a number (got "ten")'],
  ])('%j: exit 2 naming the flag and what was typed', async (argv, message) => {
    const r = await runCli(argv, { cwd });
    expect(r.stderr).toContain(`orchestrate: ${message}`);
    expect(r.stderr).not.toContain('NaN');
    expect(r.stdout).toBe('');
    expect(r.code).toBe(2);
  });

  it("a negative number is still a value, refused by the flag's own check", async () => {
    const r = await runCli(['recipe.yaml', '--dry-run', '--budget-usd', '-1'], { cwd });
    expect(r.stderr).toContain('--budget-usd must be a number of dollars, 0 or more (got -1)');
    expect(r.code).toBe(2);
    const ok = await runCli(['recipe.yaml', '--dry-run', '--concurrency', '2', '--budget-usd=0.5'], { cwd });
    expect(ok.stdout).toContain('concurrency 2, budget $0.5');
    expect(ok.code).toBe(0);
  });
});

describe('a one-value flag given twice', () => {
  it.each([
    ['show', 'r1', '--instance', 'a', '--instance', 'b'],
    ['steer', 'r1', '--instance', 'a', '--instance', 'b', 'hello'],
    ['approve', 'r1', '--task', 'a', '--task', 'b'],
    ['report', 'r1', '--run-dir', 'x', '--run-dir', 'y'],
    ['publish', 'r1', '--rebase', 'a', '--rebase', 'b'],
    ['status', 'r1', '--watch', '--interval', '5', '--interval', '9'],
  ])('%s ... : exit 2 naming the flag and both values, before looking for the run', async (...argv) => {
    const r = await runCli(argv, { cwd });
    expect(r.stderr).toMatch(
      /^orchestrate: --(instance|task|run-dir|rebase|interval) was given more than once \((a, b|x, y|5, 9)\); give it once per command\n/,
    );
    expect(r.code).toBe(2);
  });

  it('--redis given twice is refused before anything runs (before, the run went on locally; the worker said "no Redis given")', async () => {
    const before = runCount();
    const twice = ['--redis', 'redis://127.0.0.1:1', '--redis', 'redis://127.0.0.1:2'];
    const run = await runCli(['recipe.yaml', ...twice], { cwd });
    expect(run.stderr).toContain(
      'orchestrate: --redis was given more than once (redis://127.0.0.1:1, redis://127.0.0.1:2); give it once per command',
    );
    expect(run.code).toBe(2);
    expect(runCount()).toBe(before);
    const worker = await runCli(['worker', ...twice], { cwd });
    expect(worker.stderr).toContain('orchestrate: --redis was given more than once');
    expect(worker.code).toBe(2);
    const doctor = await runCli(['doctor', '--run-dir', 'a', '--run-dir', 'b'], { cwd });
    expect(doctor.stderr).toContain('orchestrate: --run-dir was given more than once (a, b)');
    expect(doctor.code).toBe(2);
  });

  it("--provider given twice is refused (before, the recipe's own provider was used without a word)", async () => {
    const r = await runCli(['recipe.yaml', '--dry-run', '--provider', 'anthropic', '--provider', 'scripted'], { cwd });
    expect(r.stderr).toContain('orchestrate: --provider was given more than once');
    expect(r.stdout).toBe('');
    expect(r.code).toBe(2);
  });

  it('resume --run-dir x --run-dir y: exit 2 (before, the default runs folder was searched)', async () => {
    const r = await runCli(['resume', 'r1', '--run-dir', 'x', '--run-dir', 'y'], { cwd });
    expect(r.stderr).toContain('orchestrate: --run-dir was given more than once');
    expect(r.code).toBe(2);
  });
});

describe('--set without key=value', () => {
  it.each([
    [['--set', 'foo'], '--set foo: expected key=value, e.g. --set feature="a titleCase function"'],
    [['--set', '=1'], '--set =1: expected key=value'],
    [['--set'], '--set needs a value'],
  ])("%j is a usage error of the flag, not a problem at the recipe's first line", async (flags, message) => {
    const r = await runCli(['recipe.yaml', '--dry-run', ...flags], { cwd });
    expect(r.stderr).toContain(`orchestrate: ${message}`);
    expect(r.stderr).not.toContain('recipe.yaml:');
    expect(r.code).toBe(2);
  });
});

describe('a recipe given as - (stdin)', () => {
  it.each([[['validate', '-']], [['-', '--dry-run']]])(
    '%j says a recipe is read from its file; before, "this is a folder ... e.g. /recipe.yaml"',
    async (argv) => {
      const r = await runCli(argv, { cwd });
      expect(r.stderr).toContain(
        'orchestrate: a recipe is read from its file, not from stdin (-): give its path; its agent files and script are found beside it',
      );
      expect(r.stderr).not.toContain('/recipe.yaml');
      expect(r.code).toBe(2);
    },
  );
});

describe('a flag that names something, given no value', () => {
  it.each([
    [['show', 'r1', '--instance'], '--instance needs a value\n  hint: write it as --instance KEY'],
    [['cancel', 'r1', '--instance', '--run-dir', 'x'], '--instance needs a value'],
    [['approve', 'r1', '--task'], '--task needs a value\n  hint: write it as --task TASK'],
    [['recipe.yaml', '--dry-run', '--model'], '--model needs a value'],
  ])(
    '%j: exit 2 naming the flag; before, it was read as "" (show: \'"" matches 4 instances\')',
    async (argv, message) => {
      const r = await runCli(argv, { cwd });
      expect(r.stderr).toContain(`orchestrate: ${message}`);
      expect(r.stdout).toBe('');
      expect(r.code).toBe(2);
    },
  );
});
