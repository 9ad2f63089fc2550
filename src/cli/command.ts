// The shape every CLI command module exports. main.ts registers them from one list, so adding a
// command is one file under commands/ plus one line in COMMANDS.
import type { Argv } from 'yargs';
import type { CliContext } from './cli-io.js';

/** Parsed arguments as yargs hands them over (kebab-case and camelCase both present). */
export type CommandArgs = Record<string, unknown>;

export interface CliCommand {
  /** yargs command spec(s), e.g. 'validate <recipe>' or ['$0 <recipe>', 'run <recipe>']. */
  command: string | readonly string[];
  describe: string;
  /** Declares positionals and options; `.check()` failures become usage errors (exit 2). */
  builder: (yargs: Argv) => Argv<object>;
  /** Does the work and returns the exit code; never throws for a user mistake. */
  run: (args: CommandArgs, ctx: CliContext) => Promise<number>;
  /**
   * Commands below this one (`orchestrate mcp serve`, `orchestrate mcp list`): main.ts registers
   * them inside this command's builder, and one of them must be named; `run` is then not called.
   */
  subcommands?: readonly CliCommand[];
}
