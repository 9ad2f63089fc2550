// The `<run>` argument of the commands that name a run: a run id, a unique prefix of one, or a run
// folder, looked up under --run-dir (default .orchestrate/runs). Prints why when nothing matches.
import { resolve } from 'node:path';
import { defaultRunsDir } from '../display/find-run.js';
import { locateRun } from '../service/locate-run.js';
import type { CliContext } from './cli-io.js';
import type { CommandArgs } from './command.js';

/** The `<run>` positional of every command that names one run (its value goes to locateRunArg). */
export const RUN_ARG = {
  type: 'string',
  describe: 'Run id, unique prefix of one, or run folder path',
  demandOption: true,
} as const;

/** `--run-dir`: where a command looks for run records. */
export const RUN_DIR_OPTION = {
  type: 'string',
  describe: 'Folder holding run records (default .orchestrate/runs)',
} as const;

/** The folder of run records: --run-dir (relative to the working folder), else the default one. */
export function runsDirArg(args: CommandArgs, ctx: Pick<CliContext, 'cwd'>): string {
  return typeof args['run-dir'] === 'string' ? resolve(ctx.cwd, args['run-dir']) : defaultRunsDir(ctx.cwd);
}

/** The run folder, or undefined after printing the reason (the caller exits with a usage error). */
export function locateRunArg(args: CommandArgs, ctx: CliContext): string | undefined {
  const located = locateRun(runsDirArg(args, ctx), String(args.run), ctx.cwd);
  if (located.ok) return located.dir;
  ctx.stderr(`orchestrate: ${located.message}\n`);
  return undefined;
}
