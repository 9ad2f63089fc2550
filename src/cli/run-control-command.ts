// What `orchestrate cancel` and `orchestrate steer` share: find the run, carry one action to its
// coordinator (service/run-control.ts), and turn the outcome into an exit code. 0: the coordinator
// accepted it; 1: it refused (the reason, e.g. an unknown instance with the close matches);
// 2: the run is not live (it finished, or no coordinator holds it), or bad usage.
import type { ControlAction } from '../run/run-control.js';
import { controlBy, deliverRunControl } from '../service/run-control.js';
import { EXIT, type CliContext } from './cli-io.js';
import type { CommandArgs } from './command.js';
import { locateRunArg } from './locate-run.js';

/** Sends `action` to the run named by args.run; prints the reply; returns the exit code. */
export async function sendRunControl(
  args: CommandArgs,
  ctx: CliContext,
  verb: string,
  action: (by: string) => ControlAction,
): Promise<number> {
  const runDir = locateRunArg(args, ctx);
  if (runDir === undefined) return EXIT.usage;
  const outcome = await deliverRunControl(runDir, verb, action(controlBy(verb, ctx.env)));
  if (outcome.ok) {
    ctx.stdout(`${outcome.message}\n`);
    return EXIT.ok;
  }
  ctx.stderr(`orchestrate: ${outcome.message}\n`);
  return outcome.code === 'not_live' ? EXIT.usage : EXIT.taskFailed;
}
