#!/usr/bin/env node
// The orchestrate command line: the only place that reads argv and decides exit codes.
// `main(argv, io)` is what tests call in-process; the guard at the bottom runs it as a program.
import { existsSync, readFileSync, realpathSync } from 'node:fs';
import { resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import yargs from 'yargs';
import { didYouMean } from '../orchestrator/recipe/suggest.js';
import { type CliContext, type CliIo, EXIT, UsageError, exitQuietlyOnClosedPipe, processIo } from './cli-io.js';
import { type CliCommand } from './command.js';

/**
 * Every command, in help order, loaded only when it runs: a command module brings its layers
 * with it (`agent` the runtime and tools, `run` the orchestrator and display), and loading them
 * all cost every start ~100 ms. To add a command: a file under commands/ and a line here.
 */
export const COMMAND_MODULES: readonly { name: string; load: () => Promise<CliCommand> }[] = [
  { name: 'run', load: async () => (await import('./commands/run.js')).runCommand },
  { name: 'validate', load: async () => (await import('./commands/validate.js')).validateCommand },
  { name: 'schema', load: async () => (await import('./commands/schema.js')).schemaCommand },
  { name: 'agent', load: async () => (await import('./commands/agent.js')).agentCommand },
  { name: 'resume', load: async () => (await import('./commands/resume.js')).resumeCommand },
  { name: 'runs', load: async () => (await import('./commands/runs.js')).runsCommand },
  { name: 'show', load: async () => (await import('./commands/show.js')).showCommand },
  { name: 'report', load: async () => (await import('./commands/report.js')).reportCommand },
  { name: 'doctor', load: async () => (await import('./commands/doctor.js')).doctorCommand },
];

/** Every command module, loaded (help lists them all). */
export function loadCommands(): Promise<CliCommand[]> {
  return Promise.all(COMMAND_MODULES.map((m) => m.load()));
}

/**
 * The commands this command line needs: the one it names (the default `run` when it names none,
 * as in `orchestrate recipe.yaml`), or all of them when it asks for top-level help.
 */
async function commandsFor(argv: readonly string[]): Promise<CliCommand[]> {
  const named = COMMAND_MODULES.find((m) => m.name === argv[0]);
  if (named) return [await named.load()];
  if (argv.some((a) => a === '--help' || a === '-h')) return loadCommands();
  return [await COMMAND_MODULES[0]!.load()];
}

function version(): string {
  try {
    // src/cli/main.ts and dist/cli/main.js are both two levels below package.json.
    const pkg = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version?: string };
    return pkg.version ?? '0.0.0';
  } catch {
    return '0.0.0';
  }
}

/**
 * The default command takes a recipe path, so a mistyped command ("valdiate") would otherwise
 * be read as a missing recipe file. A bare word that is neither a command nor a file is caught
 * here; returns the hint to print, or undefined when the first argument is fine.
 */
function mistypedCommand(argv: readonly string[], ctx: CliContext): string | undefined {
  const first = argv[0] ?? '';
  if (!/^[a-z][a-z-]*$/.test(first) || ctx.commandNames.includes(first)) return undefined;
  if (existsSync(resolve(ctx.cwd, first))) return undefined;
  const guess = didYouMean(first, ctx.commandNames);
  return guess ? `did you mean "orchestrate ${guess}"?` : `commands: ${ctx.commandNames.join(', ')}; or give the path of a recipe file`;
}

/**
 * True for a command line that will run (or resume) a recipe with the default thread policy: its worker
 * threads can start loading while the recipe machinery loads (see startWarmPool).
 */
export function wantsWarmThreads(argv: readonly string[], commandNames: readonly string[]): boolean {
  const first = argv[0] ?? '';
  if (first !== 'run' && first !== 'resume' && (first.startsWith('-') || commandNames.includes(first))) return false;
  return !argv.some((a) => /^(--dry-run|--help|-h|--version|--agents-per-thread)(=|$)/.test(a));
}

export interface MainOptions {
  /** Start worker threads before loading a recipe run (the real program; tests calling main() do not). */
  warmStart?: boolean;
}

/** Runs the CLI with `argv` (without node and script) and returns the exit code. Never throws. */
export async function main(argv: string[], io: CliIo = processIo(), options: MainOptions = {}): Promise<number> {
  const ctx: CliContext = {
    stdout: io.stdout,
    stderr: io.stderr,
    cwd: io.cwd ?? process.cwd(),
    env: io.env ?? process.env,
    isTTY: io.isTTY ?? process.stdout.isTTY === true,
    commandNames: COMMAND_MODULES.map((m) => m.name),
  };
  if (argv.length === 0) {
    ctx.stderr('orchestrate: give a recipe file or a command\n  usage: orchestrate <recipe.yaml> [--dry-run] | orchestrate validate <recipe.yaml> | orchestrate schema\nRun "orchestrate --help" for usage.\n');
    return EXIT.usage;
  }
  const mistyped = mistypedCommand(argv, ctx);
  if (mistyped !== undefined) {
    ctx.stderr(`orchestrate: unknown command "${argv[0]}" (and no recipe file of that name)\n  hint: ${mistyped}\nRun "orchestrate --help" for usage.\n`);
    return EXIT.usage;
  }
  const pool = options.warmStart && wantsWarmThreads(argv, ctx.commandNames) ? await import('../orchestrator/pool.js') : undefined;
  pool?.startWarmPool();
  try {
    return await parseAndRun(argv, ctx);
  } finally {
    await pool?.discardWarmPool(); // when the run did not adopt it (a recipe error, a missing key)
  }
}

async function parseAndRun(argv: string[], ctx: CliContext): Promise<number> {
  // `--json=full` (design section 5) is `--json` plus message deltas; yargs reads a boolean flag
  // with a value as false, so spell it out before parsing.
  argv = argv.flatMap((a) => (a === '--json=full' ? ['--json', '--full-events'] : [a]));
  let code: number = EXIT.ok;
  const parser = yargs(argv)
    .scriptName('orchestrate')
    .usage('orchestrate <recipe.yaml> [options]\norchestrate <command> [options]')
    .epilog('Exit codes: 0 ok, 1 a task failed, 2 bad usage or recipe, 130 interrupted.')
    .wrap(null);
  for (const cmd of await commandsFor(argv)) {
    parser.command(cmd.command as string | string[], cmd.describe, cmd.builder, async (args: Record<string, unknown>) => {
      try {
        code = await cmd.run(args, ctx);
      } catch (e) {
        // A bug, not a user mistake: say so plainly, keep the stack for the report.
        ctx.stderr(`orchestrate: internal error: ${(e as Error).stack ?? String(e)}\n`);
        code = EXIT.taskFailed;
      }
    });
  }
  parser
    .strict()
    .demandCommand(1, 'Give a recipe file or a command.')
    .help()
    .alias('h', 'help')
    .version(version())
    .exitProcess(false)
    // With exitProcess(false) a fail() that only prints would still run the handler: throw.
    .fail((msg: string | null, err: Error | undefined) => {
      throw new UsageError(msg ?? err?.message ?? 'bad usage');
    });
  try {
    await parser.parseAsync(argv, {}, (err, _args, output) => {
      if (!err && output) ctx.stdout(`${output}\n`);
    });
  } catch (e) {
    const message = e instanceof Error ? e.message : String(e);
    ctx.stderr(`orchestrate: ${message}\nRun "orchestrate --help" for usage.\n`);
    return EXIT.usage;
  }
  return code;
}

/** True when this module is the program being run (also through npm's bin symlink). */
export function isEntry(argv1: string | undefined, moduleUrl: string): boolean {
  if (!argv1) return false;
  try {
    return realpathSync(argv1) === realpathSync(fileURLToPath(moduleUrl));
  } catch {
    return false;
  }
}

if (isEntry(process.argv[1], import.meta.url)) {
  exitQuietlyOnClosedPipe();
  process.exitCode = await main(process.argv.slice(2), processIo(), { warmStart: true });
}
