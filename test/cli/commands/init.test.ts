// `orchestrate init [example]`: a copy of an example in an empty folder, and the command it
// prints runs there offline (the real CLI, in process), with its run folder in that folder.
import { existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { INIT_EXAMPLES } from '../../../src/cli/commands/init.js';
import { hasStackTrace, runCli } from '../run-cli.js';

const RECIPES = resolve(import.meta.dirname, '../../../recipes');
const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});
function emptyDir(): string {
  const d = mkdtempSync(join(tmpdir(), 'orch-init-'));
  dirs.push(d);
  return d;
}

/** The command `init` printed to run the copy (the indented `orchestrate ...` line), as argv. */
function printedCommand(stdout: string): string[] {
  const line = stdout.split('\n').find((l) => l.startsWith('  orchestrate '));
  if (!line) throw new Error(`no command printed:\n${stdout}`);
  // Shell words: plain words and double-quoted strings (all init prints).
  return [...line.trim().matchAll(/"([^"]*)"|(\S+)/g)].map((m) => m[1] ?? m[2]!).slice(1);
}

/** Files under `dir`, relative. */
function filesUnder(dir: string, under = ''): string[] {
  return readdirSync(join(dir, under), { withFileTypes: true }).flatMap((e) => {
    const rel = under ? `${under}/${e.name}` : e.name;
    return e.isDirectory() ? filesUnder(dir, rel) : [rel];
  });
}

// No API key and a fixed environment: the examples must run offline as copied.
const env = (cwd: string) => ({ PATH: process.env.PATH, ORCHESTRATE_HOME: join(cwd, '.home') });

describe('orchestrate init', () => {
  it('copies the fan-out example here; the printed command runs it offline with its run folder in this folder', {
    timeout: 60_000,
  }, async () => {
    const cwd = emptyDir();
    const init = await runCli(['init'], { cwd, env: env(cwd) });
    expect(init.stderr).toBe('');
    expect(init.code).toBe(0);
    for (const f of [
      'recipe.yaml',
      'script.yaml',
      'agents/surveyor.md',
      'agents/editor.md',
      'projects/alpha/index.js',
      'recipe.schema.json',
    ])
      expect(existsSync(join(cwd, f)), f).toBe(true);
    // The editor modeline points at the copied schema, not at ../recipe.schema.json.
    expect(readFileSync(join(cwd, 'recipe.yaml'), 'utf8')).toMatch(
      /^# yaml-language-server: \$schema=recipe\.schema\.json$/m,
    );
    const argv = printedCommand(init.stdout);
    expect(argv).toEqual(['recipe.yaml']);

    const run = await runCli(argv, { cwd, env: env(cwd) });
    expect(run.code, run.stderr).toBe(0);
    expect(run.stderr).not.toContain('note:'); // an ordinary folder: no installed-package note
    const runs = readdirSync(join(cwd, '.orchestrate', 'runs'));
    expect(runs).toHaveLength(1);
    expect(run.stdout).toContain(join(cwd, '.orchestrate', 'runs', runs[0]!, 'plan.md'));
    expect(readFileSync(join(cwd, '.orchestrate', 'runs', runs[0]!, 'result.json'), 'utf8')).toContain('"succeeded"');

    // runs and show find it the same way, from the same folder.
    const listed = await runCli(['runs'], { cwd, env: env(cwd) });
    expect(listed.stdout).toContain(runs[0]);
    expect((await runCli(['show', runs[0]!], { cwd, env: env(cwd) })).code).toBe(0);
  });

  it('a recipe in another folder (as in an installed package) records its run in the current folder, not beside the recipe', {
    timeout: 60_000,
  }, async () => {
    const pkg = emptyDir();
    const cwd = emptyDir();
    expect((await runCli(['init'], { cwd: pkg, env: env(pkg) })).code).toBe(0);
    const run = await runCli([join(pkg, 'recipe.yaml')], { cwd, env: env(cwd) });
    expect(run.code, run.stderr).toBe(0);
    expect(existsSync(join(pkg, '.orchestrate'))).toBe(false);
    const runs = readdirSync(join(cwd, '.orchestrate', 'runs'));
    expect(runs).toHaveLength(1);
    // runs, show and the error of a missing run look in the same place and say where.
    expect((await runCli(['runs'], { cwd, env: env(cwd) })).stdout).toContain(runs[0]);
    const missing = await runCli(['show', 'nope'], { cwd, env: env(cwd) });
    expect(missing.code).toBe(2);
    expect(missing.stderr).toContain(`no run "nope" in ${join(cwd, '.orchestrate', 'runs')}`);
  });

  it('a recipe inside an installed package gets a note saying how to copy it here (and still runs, recorded here)', {
    timeout: 60_000,
  }, async () => {
    const root = emptyDir();
    const pkg = join(root, 'lib', 'node_modules', 'orchestrate-agents', 'recipes', 'fan-out');
    mkdirSync(pkg, { recursive: true });
    expect((await runCli(['init'], { cwd: pkg, env: env(pkg) })).code).toBe(0);
    const cwd = emptyDir();
    const run = await runCli([join(pkg, 'recipe.yaml')], { cwd, env: env(cwd) });
    expect(run.code, run.stderr).toBe(0);
    expect(run.stderr).toContain(`this recipe's folder ${pkg} is inside an installed package`);
    expect(run.stderr).toContain('orchestrate init fan-out');
    expect(existsSync(join(pkg, '.orchestrate'))).toBe(false);
    expect(readdirSync(join(cwd, '.orchestrate', 'runs'))).toHaveLength(1);
  });

  it('init agent copies the scripts; the printed agent command answers offline', { timeout: 60_000 }, async () => {
    const cwd = emptyDir();
    const init = await runCli(['init', 'agent'], { cwd, env: env(cwd) });
    expect(init.code).toBe(0);
    expect(filesUnder(cwd).sort()).toEqual(['hello.yaml', 'tool-round.yaml']);
    const argv = printedCommand(init.stdout);
    expect(argv).toEqual(['agent', '--script', 'hello.yaml', 'Say hello']);
    const r = await runCli([...argv, '--no-session'], { cwd, env: env(cwd) });
    expect(r.stdout).toBe('Hello from the scripted model.\n');
    expect(r.code).toBe(0);
  });

  it.each(INIT_EXAMPLES.filter((e) => existsSync(join(RECIPES, e.name, 'recipe.yaml'))).map((e) => e.name))(
    'the %s copy is a valid recipe where it was copied',
    async (name) => {
      const cwd = emptyDir();
      expect((await runCli(['init', name], { cwd, env: env(cwd) })).code).toBe(0);
      const v = await runCli(['validate', 'recipe.yaml'], { cwd, env: env(cwd) });
      expect(v.stdout).toMatch(/^recipe\.yaml: ok/);
      expect(v.code).toBe(0);
      // Leftovers of runs in the repository are never part of a copy.
      expect(filesUnder(cwd).filter((f) => /(^|\/)(\.orchestrate|work)\//.test(f))).toEqual([]);
    },
  );

  it('refuses to overwrite: exit 2 naming the files, nothing copied, the existing file untouched', async () => {
    const cwd = emptyDir();
    writeFileSync(join(cwd, 'recipe.yaml'), 'mine\n');
    const r = await runCli(['init'], { cwd, env: env(cwd) });
    expect(r.code).toBe(2);
    expect(r.stdout).toBe('');
    expect(r.stderr).toContain('would be overwritten: recipe.yaml');
    expect(r.stderr).toContain('nothing was copied');
    expect(hasStackTrace(r.stderr)).toBe(false);
    expect(readFileSync(join(cwd, 'recipe.yaml'), 'utf8')).toBe('mine\n');
    expect(filesUnder(cwd)).toEqual(['recipe.yaml']);
  });

  it('a file where a folder of the copy goes is named (exit 2, nothing copied); before, a stack trace', async () => {
    const cwd = emptyDir();
    writeFileSync(join(cwd, 'agents'), 'mine\n');
    const r = await runCli(['init'], { cwd, env: env(cwd) });
    expect(r.stderr).toContain('would be overwritten: agents (a file, where the folder agents/ goes)');
    expect(hasStackTrace(r.stderr)).toBe(false);
    expect(r.code).toBe(2);
    expect(filesUnder(cwd)).toEqual(['agents']);
  });

  it.skipIf(!existsSync('/sys/kernel'))(
    'a folder that cannot be written says where and why (exit 1); before, an internal error stack trace',
    async () => {
      // sysfs: nobody may create files there, root included.
      const r = await runCli(['init'], { cwd: '/sys/kernel', env: env(emptyDir()) });
      expect(r.stderr).toMatch(
        /^orchestrate init: could not copy the fan-out example into \/sys\/kernel: .*\n {2}hint: run it in a folder you can write to\n$/,
      );
      expect(r.code).toBe(1);
    },
  );

  it('an unknown example is a usage error that names the examples and the likely one', async () => {
    const cwd = emptyDir();
    const r = await runCli(['init', 'fanout'], { cwd, env: env(cwd) });
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('no example "fanout"');
    expect(r.stderr).toContain('did you mean "orchestrate init fan-out"?');
    expect(r.stderr).toContain(INIT_EXAMPLES.map((e) => e.name).join(', '));
    expect(filesUnder(cwd)).toEqual([]);
  });
});
