// The `<run>` argument of show and report: a run id, a unique prefix of one, or a run folder,
// looked up under --run-dir (default .orchestrate/runs). Prints why when nothing matches.
import { resolve } from 'node:path';
import { defaultRunsDir } from '../display/find-run.js';
import { locateRun } from '../service/locate-run.js';
import type { CliContext } from './cli-io.js';
import type { CommandArgs } from './command.js';

/** The run folder, or undefined after printing the reason (the caller exits with a usage error). */
export function locateRunArg(args: CommandArgs, ctx: CliContext): string | undefined {
  const runsDir = typeof args['run-dir'] === 'string' ? resolve(ctx.cwd, args['run-dir']) : defaultRunsDir(ctx.cwd);
  const located = locateRun(runsDir, String(args.run), ctx.cwd);
  if (located.ok) return located.dir;
  ctx.stderr(`orchestrate: ${located.message}\n`);
  return undefined;
}
