#!/usr/bin/env node
// The orchestrate command line: the only place that reads argv and decides exit codes.
// `main(argv, io)` is what tests call in-process; the guard at the bottom runs it as a program.
import { existsSync, realpathSync } from 'node:fs';
import { resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import yargs, { type Argv } from 'yargs';
import { didYouMean } from '../recipe/suggest.js';
import { packageVersion } from '../util/package-version.js';
import { type CliContext, type CliIo, EXIT, UsageError, exitQuietlyOnClosedPipe, processIo } from './cli-io.js';
import type { CliCommand } from './command.js';
import { flagValueMessage, type KnownNumberFlags } from './flag-values.js';
import { type KnownFlags, unknownFlagsMessage } from './unknown-flags.js';

/**
 * Every command, in help order, loaded only when it runs: a command module brings its layers
 * with it (`agent` the runtime and tools, `run` the orchestrator and display), and loading them
 * all cost every start ~100 ms. To add a command: a file under commands/ and a line here.
 */
export const COMMAND_MODULES: readonly { name: string; load: () => Promise<CliCommand> }[] = [
  { name: 'run', load: async () => (await import('./commands/run.js')).runCommand },
  { name: 'init', load: async () => (await import('./commands/init.js')).initCommand },
  { name: 'validate', load: async () => (await import('./commands/validate.js')).validateCommand },
  { name: 'schema', load: async () => (await import('./commands/schema.js')).schemaCommand },
  { name: 'agent', load: async () => (await import('./commands/agent.js')).agentCommand },
  { name: 'resume', load: async () => (await import('./commands/resume.js')).resumeCommand },
  { name: 'runs', load: async () => (await import('./commands/runs.js')).runsCommand },
  { name: 'show', load: async () => (await import('./commands/show.js')).showCommand },
  { name: 'watch', load: async () => (await import('./commands/watch.js')).watchCommand },
  { name: 'cancel', load: async () => (await import('./commands/cancel.js')).cancelCommand },
  { name: 'steer', load: async () => (await import('./commands/steer.js')).steerCommand },
  { name: 'approve', load: async () => (await import('./commands/approve.js')).approveCommand },
  { name: 'reject', load: async () => (await import('./commands/approve.js')).rejectCommand },
  { name: 'report', load: async () => (await import('./commands/report.js')).reportCommand },
  { name: 'publish', load: async () => (await import('./commands/publish.js')).publishCommand },
  { name: 'status', load: async () => (await import('./commands/status.js')).statusCommand },
  { name: 'worker', load: async () => (await import('./commands/worker.js')).workerCommand },
  { name: 'doctor', load: async () => (await import('./commands/doctor.js')).doctorCommand },
  { name: 'mcp', load: async () => (await import('./commands/mcp.js')).mcpCommand },
  { name: 'serve', load: async () => (await import('./commands/serve.js')).serveCommand },
];

/** Every command module, loaded (help lists them all). */
export function loadCommands(): Promise<CliCommand[]> {
  return Promise.all(COMMAND_MODULES.map((m) => m.load()));
}

/** yargs' own command: prints the shell completion script (see parseAndRun). */
const COMPLETION_COMMAND = 'completion';
/** The flag the completion script calls the program with to ask for the words that fit. */
const COMPLETION_REQUEST = '--get-yargs-completions';

/**
 * The commands this command line needs: the one it names (the default `run` when it names none,
 * as in `orchestrate recipe.yaml`), or all of them when it asks for top-level help or for
 * completions. `completion` needs none: yargs prints its script, and a default command would
 * take the word for a recipe file. Nor does `--version`, which loaded the whole orchestrator.
 */
export async function commandsFor(argv: readonly string[]): Promise<CliCommand[]> {
  // `completion` and a bare `--version` need none (yargs answers both itself).
  if (argv[0] === COMPLETION_COMMAND || (argv.length === 1 && argv[0] === '--version')) return [];
  const named = COMMAND_MODULES.find((m) => m.name === argv[0]);
  if (named) return [await named.load()];
  if (argv.some((a) => a === '--help' || a === '-h' || a === COMPLETION_REQUEST)) return loadCommands();
  return [await COMMAND_MODULES[0]!.load()];
}

/** Example command lines of `orchestrate --help`, as a new user would type them. */
const EXAMPLES: readonly [string, string][] = [
  ['orchestrate init', 'copy the fan-out example recipe here (runs offline as copied)'],
  ['orchestrate recipe.yaml', 'run it; the run folder goes to ./.orchestrate/runs'],
  ['orchestrate recipe.yaml --dry-run', 'validate and show the task DAG with a cost estimate'],
  ['orchestrate recipe.yaml --json=full', 'every run event as a JSON line, message deltas included'],
  ['orchestrate runs', 'list the runs recorded in this folder'],
  ['orchestrate resume <run>', 'continue an interrupted run'],
  ['orchestrate cancel <run> --instance fix.alpha', 'end one instance of a live run (steer sends it a message)'],
  ['orchestrate agent "Summarize README.md"', 'one agent, its answer on stdout (needs ANTHROPIC_API_KEY)'],
  ['orchestrate completion >> ~/.bashrc', 'tab completion of commands and flags (bash; zsh: >> ~/.zshrc)'],
];

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
  return guess
    ? `did you mean "orchestrate ${guess}"?`
    : `commands: ${ctx.commandNames.join(', ')}; or give the path of a recipe file`;
}

/**
 * A command named after a flag (`orchestrate --json show <run>`) was read as the default command
 * with a recipe called "show", and the error named the run id as an unknown argument. Returns
 * the message with the command line reordered, or undefined when argv starts with its command.
 */
function misplacedCommand(argv: readonly string[], ctx: CliContext): string | undefined {
  const first = argv[0] ?? '';
  if (!first.startsWith('-') || ['--help', '-h', '--version', COMPLETION_REQUEST].includes(first)) return undefined;
  const at = argv.findIndex((a) => ctx.commandNames.includes(a) && !existsSync(resolve(ctx.cwd, a)));
  if (at < 0) return undefined;
  const reordered = [argv[at], ...argv.slice(0, at), ...argv.slice(at + 1)].join(' ');
  return `"${argv[at]}" is a command: name it first, then its flags\n  hint: orchestrate ${reordered}`;
}

/**
 * True for a command line that will run (or resume) a recipe with the default thread policy: its worker
 * threads can start loading while the recipe machinery loads (see startWarmPool).
 */
export function wantsWarmThreads(argv: readonly string[], commandNames: readonly string[]): boolean {
  const first = argv[0] ?? '';
  if (first !== 'run' && first !== 'resume' && (first.startsWith('-') || commandNames.includes(first))) return false;
  // A distributed run (--redis) runs its agents on worker processes, not on threads here.
  return !argv.some((a) => /^(--dry-run|--help|-h|--version|--agents-per-thread|--redis)(=|$)/.test(a));
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
    commandNames: [...COMMAND_MODULES.map((m) => m.name), COMPLETION_COMMAND],
  };
  if (argv.length === 0) {
    ctx.stderr(
      'orchestrate: give a recipe file or a command\n  usage: orchestrate <recipe.yaml> [--dry-run] | orchestrate validate <recipe.yaml> | orchestrate schema\n  hint: no recipe yet? `orchestrate init` copies an example here that runs offline\nRun "orchestrate --help" for usage.\n',
    );
    return EXIT.usage;
  }
  const misplaced = misplacedCommand(argv, ctx);
  if (misplaced !== undefined) {
    ctx.stderr(`orchestrate: ${misplaced}\n`);
    return EXIT.usage;
  }
  const mistyped = mistypedCommand(argv, ctx);
  if (mistyped !== undefined) {
    ctx.stderr(
      `orchestrate: unknown command "${argv[0]}" (and no recipe file of that name)\n  hint: ${mistyped}\nRun "orchestrate --help" for usage.\n`,
    );
    return EXIT.usage;
  }
  const pool =
    options.warmStart && wantsWarmThreads(argv, ctx.commandNames) && !ctx.env.ORCHESTRATE_REDIS_URL
      ? await import('../orchestrator/execution/pool.js')
      : undefined;
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
  const typed = argv;
  argv = argv.flatMap((a) => (a === '--json=full' ? ['--json', '--full-events'] : [a]));
  // `orchestrate completion bash` (as gh and kubectl take it): the one script serves bash and zsh.
  if (argv[0] === COMPLETION_COMMAND && (argv[1] === 'bash' || argv[1] === 'zsh')) argv = [argv[0], ...argv.slice(2)];
  let code: number = EXIT.ok;
  const parser = yargs(argv)
    .scriptName('orchestrate')
    .usage('orchestrate <recipe.yaml> [options]\norchestrate <command> [options]')
    .epilog(
      'Exit codes: 0 ok, 1 a task failed or the run is partial (instances cancelled), 2 bad usage or recipe, 130 interrupted.',
    )
    .wrap(null)
    // Before validation, so `--json=full` on a command without events is named as typed.
    .middleware(() => {
      const message = flagValueMessage(typed, knownFlags(parser));
      if (message !== undefined) throw new UsageError(message);
    }, true);
  // Top-level help only: a command's --help shows that command's own examples.
  if (!COMMAND_MODULES.some((m) => m.name === argv[0])) parser.example(EXAMPLES);
  // A command with subcommands (`mcp serve`) registers them in its builder and needs one named.
  const register = (y: Argv, cmd: CliCommand): Argv =>
    y.command(
      cmd.command as string | string[],
      cmd.describe,
      cmd.subcommands
        ? (sub: Argv) =>
            cmd
              .subcommands!.reduce(register, cmd.builder(sub) as Argv)
              .demandCommand(
                1,
                `Give a subcommand: ${cmd.subcommands!.map((c) => [c.command].flat()[0]!.split(' ')[0]).join(', ')}.`,
              )
        : cmd.builder,
      async (args: Record<string, unknown>) => {
        try {
          code = await cmd.run(args, ctx);
        } catch (e) {
          // A bug, not a user mistake: say so plainly, keep the stack for the report.
          ctx.stderr(`orchestrate: internal error: ${(e as Error).stack ?? String(e)}\n`);
          code = EXIT.taskFailed;
        }
      },
    );
  const commands = await commandsFor(argv);
  for (const cmd of commands) register(parser, cmd);
  parser
    .completion(
      COMPLETION_COMMAND,
      'Print a shell completion script: orchestrate completion >> ~/.bashrc (or ~/.zshrc)',
    )
    .recommendCommands()
    .strict()
    .demandCommand(1, 'Give a recipe file or a command.')
    .help()
    .alias('h', 'help')
    .version(packageVersion())
    .exitProcess(false)
    // With exitProcess(false) a fail() that only prints would still run the handler: throw.
    // An unknown flag is named with the flag that was probably meant, also when it made yargs
    // fail for another reason (a mistyped flag that took the recipe path as its value).
    .fail((msg: string | null, err: Error | undefined) => {
      if (err instanceof UsageError) throw err;
      throw new UsageError(unknownFlagsMessage(argv, knownFlags(parser)) ?? msg ?? err?.message ?? 'bad usage');
    });
  try {
    await parser.parseAsync(argv, {}, (err, _args, output) => {
      if (!err && output) ctx.stdout(`${withoutRepeatedExamples(output)}\n`);
    });
  } catch (e) {
    const message = missingArgumentsMessage(e instanceof Error ? e.message : String(e), typed, commands);
    // The named command's help has its flags; the top-level one only lists the commands.
    const help = COMMAND_MODULES.some((m) => m.name === typed[0])
      ? `orchestrate ${typed[0]} --help`
      : 'orchestrate --help';
    ctx.stderr(`orchestrate: ${message}\nRun "${help}" for usage.\n`);
    return EXIT.usage;
  }
  return code;
}

/**
 * yargs says "Not enough non-option arguments: got 0, need at least 1" for `orchestrate show`;
 * name what is missing from the command's own usage line instead ("show needs <run>").
 */
function missingArgumentsMessage(message: string, typed: readonly string[], commands: readonly CliCommand[]): string {
  const counts = /^Not enough non-option arguments: got (\d+), need at least (\d+)$/.exec(message);
  if (!counts) return message;
  // Only flags (`orchestrate --dry-run`): the default command, which takes the recipe.
  if (!COMMAND_MODULES.some((m) => m.name === typed[0]))
    return 'give a recipe file (or a command)\n  usage: orchestrate <recipe.yaml> [options], e.g. orchestrate recipe.yaml --dry-run';
  const spec = commands.flatMap((c) => [c.command].flat()).find((c) => c.split(' ')[0] === typed[0]);
  if (!spec) return message;
  const required = spec.split(' ').filter((w) => w.startsWith('<'));
  const missing = required.slice(Number(counts[1]));
  if (missing.length === 0) return message;
  return `${typed[0]} needs ${missing.join(' ')}\n  usage: orchestrate ${spec}`;
}

/**
 * Top-level help lists its own examples and, after them, those of the default command (run),
 * which repeat `orchestrate recipe.yaml` and `--dry-run`: keep the first line of each command.
 */
export function withoutRepeatedExamples(help: string): string {
  const lines = help.split('\n');
  const start = lines.indexOf('Examples:');
  if (start < 0) return help;
  const seen = new Set<string>();
  return lines
    .filter((line, i) => {
      if (i <= start || !line.startsWith('  ')) return true;
      const command = line.trim().split(/\s{2,}/)[0] ?? '';
      if (seen.has(command)) return false;
      seen.add(command);
      return true;
    })
    .join('\n');
}

/** The flags yargs knows for the command being parsed (getOptions() is public in yargs 18 but missing from @types/yargs 17). */
function knownFlags(parser: Argv): KnownFlags & KnownNumberFlags {
  return (parser as unknown as { getOptions(): KnownFlags & KnownNumberFlags }).getOptions();
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
