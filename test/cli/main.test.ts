// The command line in-process through main(argv, io), plus the real entry point as a process.
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';
import { COMMAND_MODULES, commandsFor, loadCommands, main, wantsWarmThreads } from '../../src/cli/main.js';
import { takeWarmPool } from '../../src/orchestrator/execution/pool.js';
import { recipeJsonSchema } from '../../src/recipe/index.js';
import { hasStackTrace, runCli } from './run-cli.js';

const ROOT = resolve(import.meta.dirname, '../..');
const VERSION = (JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { version: string }).version;
const run = (argv: string[]) => runCli(argv, { cwd: ROOT });
// A recipe that publishes also gets one line per publish target saying how its branches travel.
const BATCH_PUBLISH =
  '  publish inventory, refactor, review: forge git, remote ./remotes/${{ repo.name }}.git → a local repository (no network)\n';

describe('validate', () => {
  it.each([
    ['recipes/fan-out/recipe.yaml', 2, 2, ''],
    ['recipes/planner-worker/recipe.yaml', 2, 2, ''],
    ['recipes/batch-refactor/recipe.yaml', 4, 3, BATCH_PUBLISH],
  ])('%s: prints ok with the task and agent counts and exits 0', async (file, tasks, agents, publish) => {
    const r = await run(['validate', file]);
    expect(r).toEqual({ code: 0, stdout: `${file}: ok (${tasks} tasks, ${agents} agents)\n${publish}`, stderr: '' });
  });

  it('--json prints the result as data', async () => {
    const r = await run(['validate', 'recipes/fan-out/recipe.yaml', '--json']);
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout)).toEqual({ file: 'recipes/fan-out/recipe.yaml', ok: true, tasks: 2, agents: 2 });
  });

  it('a missing file is a recipe problem with exit 2, not a crash', async () => {
    const r = await run(['validate', 'recipes/nope.yaml']);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('recipes/nope.yaml:1:1: recipe file not found');
    expect(hasStackTrace(r.stderr)).toBe(false);
  });

  it('a mistyped recipe name gets the YAML file beside it that was meant, or the ones there are', async () => {
    const typo = await run(['validate', 'recipes/fan-out/recipe.yml']);
    expect(typo.stderr).toBe(
      'recipes/fan-out/recipe.yml:1:1: recipe file not found\n  hint: did you mean recipes/fan-out/recipe.yaml?\n1 problem found.\n',
    );
    expect(typo.code).toBe(2);
    const other = await run(['recipes/fan-out/zzz.yaml', '--dry-run']);
    expect(other.stderr).toContain('hint: YAML files there: recipes/fan-out/recipe.yaml, recipes/fan-out/script.yaml');
    expect(other.code).toBe(2);
  });

  it('a folder instead of a file says which file to pass', async () => {
    const r = await run(['validate', 'recipes/fan-out']);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('this is a folder, not a recipe file');
    expect(r.stderr).toContain('recipes/fan-out/recipe.yaml');
  });
});

describe('schema', () => {
  it('prints the recipe JSON Schema', async () => {
    const r = await run(['schema']);
    expect(r.code).toBe(0);
    const schema = JSON.parse(r.stdout) as Record<string, unknown>;
    expect(schema).toEqual(recipeJsonSchema());
    expect(schema.$schema).toBe('https://json-schema.org/draft/2020-12/schema');
    expect(Object.keys(schema.properties as object)).toEqual(
      expect.arrayContaining(['name', 'agents', 'tasks', 'inputs', 'budget']),
    );
  });
});

describe('usage', () => {
  it('--help lists every registered command and exits 0', async () => {
    const r = await run(['--help']);
    expect(r.code).toBe(0);
    for (const name of ['run <recipe>', 'validate <recipe>', 'schema']) expect(r.stdout).toContain(name);
    expect(r.stdout).toContain('--dry-run');
  });

  it('--version prints the package version', async () => {
    expect(await run(['--version'])).toEqual({ code: 0, stdout: `${VERSION}\n`, stderr: '' });
  });

  it('loads only the command it runs: none for --version, run for a recipe, all for --help', async () => {
    // A command module brings its layers with it (run: the orchestrator), so --version loaded it all.
    expect(await commandsFor(['--version'])).toEqual([]);
    expect((await commandsFor(['recipe.yaml', '--version'])).map((c) => c.command)).toEqual([
      ['$0 <recipe>', 'run <recipe>'],
    ]);
    expect(await commandsFor(['runs'])).toHaveLength(1);
    expect(await commandsFor(['--help'])).toHaveLength(COMMAND_MODULES.length);
  });

  it('commands come from one list, and help shows each of them', async () => {
    const commands = await loadCommands();
    expect(commands.slice(0, 4).map((c) => c.command)).toEqual([
      ['$0 <recipe>', 'run <recipe>'],
      'init [example]',
      'validate <recipe>',
      'schema',
    ]);
    // Each entry's name is the first word of the command it loads (what "did you mean" and lazy loading go by).
    expect(commands.map((c) => (typeof c.command === 'string' ? c.command : c.command[1]!).split(' ')[0])).toEqual(
      COMMAND_MODULES.map((m) => m.name),
    );
    const help = (await run(['--help'])).stdout;
    for (const c of commands) {
      const spec = typeof c.command === 'string' ? c.command : c.command[1]!;
      expect(help).toContain(`orchestrate ${spec.split(' ')[0]}`);
    }
  });

  it.each([
    [[], 'give a recipe file or a command'],
    [['validate'], 'validate needs <recipe>\n  usage: orchestrate validate <recipe>'],
    [['validate', 'recipes/fan-out/recipe.yaml', '--bogus'], 'Unknown argument: bogus'],
    [['schema', 'extra'], 'Unknown argument: extra'],
    [['show'], 'show needs <run>\n  usage: orchestrate show <run>'],
    [['--dry-run'], 'give a recipe file (or a command)\n  usage: orchestrate <recipe.yaml> [options]'],
    [
      ['--json', 'show', 'r1'],
      '"show" is a command: name it first, then its flags\n  hint: orchestrate show --json r1',
    ],
    [['steer', 'r1', '--instance', 'a'], 'steer needs <message..>\n  usage: orchestrate steer <run> <message..>'],
    [['valdiate', 'recipes/fan-out/recipe.yaml'], 'did you mean "orchestrate validate"?'],
    [['frobnicate'], 'unknown command "frobnicate"'],
    [['recipes/fan-out/recipe.yaml', '--dry-run', '--concurrency', 'abc'], '--concurrency takes a number (got "abc")'],
    [['recipes/fan-out/recipe.yaml', '--dry-run', '--concurrency', '-2'], '--concurrency must be a whole number'],
    [['recipes/fan-out/recipe.yaml', '--dry-run', '--concurrency', '1.5'], '--concurrency must be a whole number'],
    [['recipes/fan-out/recipe.yaml', '--dry-run', '--budget-usd', 'lots'], '--budget-usd takes a number (got "lots")'],
    [['recipes/fan-out/recipe.yaml', '--dry-run', '--provider', 'openia'], 'unknown provider'],
  ])('%j is a usage error: exit 2 with a hint and nothing on stdout', async (argv, message) => {
    const r = await run(argv);
    expect(r.code).toBe(2);
    expect(r.stdout).toBe('');
    expect(r.stderr).toContain(message);
    expect(r.stderr).toMatch(/hint:|orchestrate ([a-z]+ )?--help/);
    expect(hasStackTrace(r.stderr)).toBe(false);
  });

  it("a command's usage error points at that command's help, where its flags are", async () => {
    const r = await run(['validate', 'recipes/fan-out/recipe.yaml', '--set', 'x=1']);
    expect(r.stderr).toBe('orchestrate: Unknown argument: set\nRun "orchestrate validate --help" for usage.\n');
    expect(r.code).toBe(2);
    const top = await run(['recipes/fan-out/recipe.yaml', '--bogus']);
    expect(top.stderr).toContain('Run "orchestrate --help" for usage.');
  });

  it('without --dry-run a broken recipe is still refused before anything runs (exit 2)', async () => {
    const r = await run(['test/fixtures/recipes/bad/11-cycle.yaml']);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('11-cycle.yaml:4:13: needs form a cycle: a -> c -> b -> a');
  });

  it('`run <recipe>` and `<recipe>` are the same command', async () => {
    const a = await run(['run', 'recipes/planner-worker/recipe.yaml', '--dry-run', '--json']);
    const b = await run(['recipes/planner-worker/recipe.yaml', '--dry-run', '--json']);
    expect(a.code).toBe(0);
    expect(a.stdout).toBe(b.stdout);
  });
});

describe('the real entry point', () => {
  const exec = promisify(execFile);
  const tmp = mkdtempSync(join(tmpdir(), 'orchestrate-cli-'));
  afterAll(() => rmSync(tmp, { recursive: true, force: true }));

  it('node --import tsx src/cli/main.ts runs main and sets the exit code', async () => {
    const ok = await exec(
      process.execPath,
      ['--import', 'tsx', 'src/cli/main.ts', 'validate', 'recipes/batch-refactor/recipe.yaml'],
      { cwd: ROOT },
    );
    expect(ok.stdout).toBe(`recipes/batch-refactor/recipe.yaml: ok (4 tasks, 3 agents)\n${BATCH_PUBLISH}`);
    const bad = await exec(
      process.execPath,
      ['--import', 'tsx', 'src/cli/main.ts', 'validate', 'test/fixtures/recipes/bad/11-cycle.yaml'],
      { cwd: ROOT },
    ).catch((e: { code: number; stderr: string }) => e);
    expect('code' in bad && bad.code).toBe(2);
    expect((bad as { stderr: string }).stderr).toContain('11-cycle.yaml:4:13: needs form a cycle: a -> c -> b -> a');
  });

  it('runs through a symlink, as npm installs bins', async () => {
    const link = join(tmp, 'orchestrate.ts');
    symlinkSync(join(ROOT, 'src/cli/main.ts'), link);
    const r = await exec(process.execPath, ['--import', 'tsx', link, '--version'], { cwd: ROOT });
    expect(r.stdout).toBe(`${VERSION}\n`);
  });
});

describe('warm start (worker threads start while the recipe machinery loads)', () => {
  it('starts threads only for a recipe run with the default thread policy', () => {
    const names = COMMAND_MODULES.map((m) => m.name);
    expect(wantsWarmThreads(['recipe.yaml'], names)).toBe(true);
    expect(wantsWarmThreads(['run', 'recipe.yaml', '--json'], names)).toBe(true);
    expect(wantsWarmThreads(['resume', '20261202-1200'], names)).toBe(true);
    for (const argv of [
      ['recipe.yaml', '--dry-run'],
      ['recipe.yaml', '--redis', 'redis://127.0.0.1:6379'],
      ['resume', 'r1', '--redis=redis://h:1'],
      ['worker', '--redis', 'redis://h:1'],
      ['recipe.yaml', '--agents-per-thread', '1'],
      ['recipe.yaml', '--agents-per-thread=2'],
      ['resume', 'r1', '--agents-per-thread', '1'],
      ['validate', 'recipe.yaml'],
      ['agent', 'hi'],
      ['--help'],
      ['--version'],
      ['runs'],
    ]) {
      expect(wantsWarmThreads(argv, names), argv.join(' ')).toBe(false);
    }
  });

  it('a run adopts the warm threads; a recipe error discards them; neither leaves a pool behind', async () => {
    const io = {
      stdout: () => undefined,
      stderr: () => undefined,
      cwd: ROOT,
      env: { PATH: process.env.PATH },
      isTTY: false,
    };
    const runs = mkdtempSync(join(tmpdir(), 'orch-warm-'));
    try {
      const ok = await main(['recipes/fan-out/recipe.yaml', '--provider', 'scripted', '--run-dir', runs], io, {
        warmStart: true,
      });
      expect(ok).toBe(0);
      expect(takeWarmPool()).toBeUndefined();
      const bad = await main(['recipes/nope.yaml', '--run-dir', runs], io, { warmStart: true });
      expect(bad).toBe(2);
      expect(takeWarmPool()).toBeUndefined();
    } finally {
      rmSync(runs, { recursive: true, force: true });
    }
  }, 60_000);
});
