// What `orchestrate cancel` and `orchestrate steer` share: find the run, carry one action to its
// coordinator over the control socket, and turn the reply into an exit code. 0: the coordinator
// accepted it; 1: it refused (the reason, e.g. an unknown instance with the close matches);
// 2: the run is not live (it finished, or no coordinator holds it), or bad usage.
import { userInfo } from 'node:os';
import { basename, join } from 'node:path';
import type { ControlAction } from '../run/run-control.js';
import { connectRunControl } from '../run/run-control-client.js';
import { describeHolder, liveLeaseHolder } from '../run/run-lease.js';
import { readRunLog } from '../run/run-store.js';
import { EXIT, type CliContext } from './cli-io.js';
import type { CommandArgs } from './command.js';
import { locateRunArg } from './locate-run.js';

/** Who the control event names: the command, its pid and the user, e.g. "cancel (pid 4242, user ana)". */
export function controlBy(command: string, env: Readonly<Record<string, string | undefined>> = process.env): string {
  let user: string | undefined;
  try {
    user = userInfo().username;
  } catch {
    user = env.USER ?? env.LOGNAME;
  }
  return `${command} (pid ${process.pid}${user ? `, user ${user}` : ''})`;
}

/** Why nobody answered for the run: it finished, or no coordinator holds it. */
function notLiveMessage(runDir: string, verb: string, why: string): string {
  const runId = basename(runDir);
  const log = readRunLog(join(runDir, 'run.jsonl')).events;
  const lastEnd = [...log].reverse().find((e) => e.type === 'run_end');
  const lastStart = [...log].reverse().find((e) => e.type === 'run_start' || e.type === 'run_resume');
  if (lastEnd && (!lastStart || lastEnd.ts >= lastStart.ts)) {
    return `run ${runId} is not running (finished ${lastEnd.type === 'run_end' ? lastEnd.status : ''} at ${new Date(lastEnd.ts).toISOString()}); nothing to ${verb}`;
  }
  const holder = liveLeaseHolder(runDir);
  if (holder)
    return `run ${runId} is held by ${describeHolder(holder)}, but its coordinator does not answer on its control socket (${why}); nothing to ${verb}`;
  return `run ${runId} is not running: no coordinator holds it (it stopped without finishing; \`orchestrate resume ${runId}\` continues it); nothing to ${verb}`;
}

export type ControlOutcome = { ok: true; message: string } | { ok: false; notLive: boolean; message: string };

/**
 * Carries `action` to the coordinator of the run in `runDir`: its reply, or (notLive) why nobody
 * answered. Shared with the MCP server's cancel and steer tools.
 */
export async function deliverRunControl(runDir: string, verb: string, action: ControlAction): Promise<ControlOutcome> {
  const reply = await connectRunControl(runDir).send(action);
  if (reply.ok) return reply;
  if (/ is not live: |closed the connection without a reply/.test(reply.error))
    return { ok: false, notLive: true, message: notLiveMessage(runDir, verb, reply.error) };
  return { ok: false, notLive: false, message: reply.error };
}

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
  return outcome.notLive ? EXIT.usage : EXIT.taskFailed;
}
