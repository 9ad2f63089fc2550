// The command line as yargs parses it: repeatable flags that never swallow the prompt, unknown
// flags named with the flag meant, shell completion, examples and help that match the README.
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runAgentCli } from '../runtime/helpers/agent-cli.js';
import { hasStackTrace, runCli } from './run-cli.js';

const ROOT = resolve(import.meta.dirname, '../..');
const run = (argv: string[]) => runCli(argv, { cwd: ROOT });

let home: string;
beforeAll(() => {
  home = mkdtempSync(join(tmpdir(), 'orch-cli-flags-'));
});
afterAll(() => rmSync(home, { recursive: true, force: true }));

describe('repeatable --extension and --skills take one value each: the prompt after them stays the prompt', () => {
  // The real CLI as a process with stdin closed: a swallowed prompt would exit 2 "give a prompt".
  const hello = ['--no-session', '--script', 'recipes/agent/hello.yaml'];
  const env = () => ({ ORCHESTRATE_HOME: home, ANTHROPIC_API_KEY: undefined });

  it('--extension x.ts "prompt"', { timeout: 30_000 }, async () => {
    const r = await runAgentCli([...hello, '--extension', 'recipes/extensions/protected-paths.ts', 'Say hello'], {
      env: env(),
      timeoutMs: 25_000,
    });
    expect(r.stderr).toBe('');
    expect(r.stdout).toBe('Hello from the scripted model.\n');
    expect(r.code).toBe(0);
  });

  it('--extension a --extension b "prompt": both are extensions (the second, missing, is named), the prompt is not', {
    timeout: 30_000,
  }, async () => {
    const r = await runAgentCli(
      [...hello, '--extension', 'recipes/extensions/protected-paths.ts', '--extension', 'missing-ext.ts', 'Say hello'],
      { env: env(), timeoutMs: 25_000 },
    );
    expect(r.stderr).toContain('Cannot load extension');
    expect(r.stderr).toContain('missing-ext.ts');
    expect(r.stderr).not.toContain('Say hello');
    expect(r.code).toBe(2);
  });

  it('--skills A --skills B "prompt"', { timeout: 30_000 }, async () => {
    for (const d of ['s1', 's2']) mkdirSync(join(home, d), { recursive: true });
    const r = await runAgentCli([...hello, '--skills', join(home, 's1'), '--skills', join(home, 's2'), 'Say hello'], {
      env: env(),
      timeoutMs: 25_000,
    });
    expect(r.stdout).toBe('Hello from the scripted model.\n');
    expect(r.code).toBe(0);
  });
});

describe('unknown flags: exit 2 naming the flag meant', () => {
  it.each([
    [['recipes/fan-out/recipe.yaml', '--dryrun'], 'dryrun', '--dry-run'],
    // A mistyped flag before the recipe takes the path as its value; still the flag is the problem.
    [['--dryrun', 'recipes/fan-out/recipe.yaml'], 'dryrun', '--dry-run'],
    [['recipes/fan-out/recipe.yaml', '--nocolor'], 'nocolor', '--no-color'],
    [['recipes/fan-out/recipe.yaml', '--budget-usdd', '3'], 'budget-usdd', '--budget-usd'],
    [['agent', '--extensoin', 'x.ts', 'hi'], 'extensoin', '--extension'],
    // A flag of a run that resume does not take: no guess at an unrelated one.
    [['resume', 'r1', '--list-mcp'], 'list-mcp', undefined],
  ] as const)('%j', async (argv, flag, meant) => {
    const r = await run([...argv]);
    expect(r.code).toBe(2);
    expect(r.stdout).toBe('');
    expect(r.stderr).toContain(`Unknown argument: ${flag}`);
    if (meant) expect(r.stderr).toContain(`did you mean ${meant}?`);
    else expect(r.stderr).not.toContain('did you mean');
    expect(r.stderr).not.toContain('Not enough non-option arguments');
    expect(hasStackTrace(r.stderr)).toBe(false);
  });

  it('no arguments: exit 2, pointing a new user at orchestrate init', async () => {
    const r = await run([]);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('`orchestrate init` copies an example here');
  });

  it('a mistyped command still gets its suggestion', async () => {
    const r = await run(['inti']);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('did you mean "orchestrate init"?');
  });
});

describe('shell completion', () => {
  it('orchestrate completion prints a script that asks the program for completions', async () => {
    const r = await run(['completion']);
    expect(r.code).toBe(0);
    expect(r.stdout).toContain('###-begin-orchestrate-completions-###');
    expect(r.stdout).toContain('orchestrate --get-yargs-completions');
    expect(r.stderr).toBe('');
  });

  it('orchestrate completion bash / zsh print the same script (the shell name, as other tools take it)', async () => {
    const plain = await run(['completion']);
    for (const shell of ['bash', 'zsh']) {
      const named = await run(['completion', shell]);
      expect(named.code).toBe(0);
      expect(named.stdout).toBe(plain.stdout);
    }
    const fish = await run(['completion', 'fish']);
    expect(fish.code).toBe(2);
  });

  it("the completions offer every command, and a command's flags", async () => {
    const commands = await run(['--get-yargs-completions', 'orchestrate', '']);
    expect(commands.code).toBe(0);
    for (const c of ['run', 'init', 'validate', 'agent', 'resume', 'runs', 'show', 'report', 'doctor', 'completion'])
      expect(commands.stdout.split('\n')).toContain(c);
    const flags = await run(['--get-yargs-completions', 'orchestrate', 'agent', '--ext']);
    expect(flags.stdout.split('\n')).toContain('--extension');
  });
});

describe('help matches the README', () => {
  it('top-level help shows examples, init and completion', async () => {
    const r = await run(['--help']);
    expect(r.code).toBe(0);
    expect(r.stdout).toContain('Examples:');
    expect(r.stdout).toContain('orchestrate init');
    expect(r.stdout).toContain('orchestrate completion');
    expect(r.stdout).toContain('--json=full');
    // The default command's examples follow the top-level ones: each command line once.
    const examples = r.stdout.slice(r.stdout.indexOf('Examples:')).split('\n').slice(1);
    const commands = examples.filter((l) => l.startsWith('  ')).map((l) => l.trim().split(/\s{2,}/)[0]);
    expect(commands).toContain('orchestrate recipe.yaml --set feature="a titleCase function" --budget-usd 2');
    expect(new Set(commands).size).toBe(commands.length);
  });

  it('resume --help documents --json=full and --dry-run (what a resume would do)', async () => {
    const r = await run(['resume', '--help']);
    expect(r.code).toBe(0);
    expect(r.stdout).toContain('--json=full');
    expect(r.stdout).toContain('--dry-run');
    expect(r.stdout).toContain('orchestrate resume 20261203 --dry-run');
    expect(r.stdout).toContain('Examples:');
  });

  it('run and agent --help show their examples; the run folder default is the current folder', async () => {
    const runHelp = await run(['run', '--help']);
    expect(runHelp.stdout).toContain('orchestrate recipe.yaml --dry-run');
    expect(runHelp.stdout).toContain('default .orchestrate/runs in the current folder');
    expect(runHelp.stdout).not.toContain('beside the recipe');
    const agentHelp = await run(['agent', '--help']);
    expect(agentHelp.stdout).toContain('--extension guard.ts --skills ./skills "Fix the bug"');
  });
});
