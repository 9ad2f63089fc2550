// Carrying one action (cancel, steer, approve, reject, cancel_run) to the live coordinator of a run,
// as data: the operation `orchestrate cancel|steer` and the MCP server's cancel / steer tools share.
// A refused action (an unknown instance, with its close matches) is told apart from a run nobody
// answers for (it finished, or no coordinator holds it) by `code`, so no caller parses the message.
import { userInfo } from 'node:os';
import { basename, join } from 'node:path';
import type { ControlAction } from '../run/run-control.js';
import { connectRunControl } from '../run/run-control-client.js';
import { describeHolder, liveLeaseHolder } from '../run/run-lease.js';
import { readRunLog } from '../run/run-store.js';

/** `refused`: the coordinator understood and refused it; `not_live`: nobody answers for the run. */
export type ControlFailureCode = 'refused' | 'not_live';

export type ControlOutcome = { ok: true; message: string } | { ok: false; code: ControlFailureCode; message: string };

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

/** Carries `action` to the coordinator of the run in `runDir`: its reply, or why nobody answered. */
export async function deliverRunControl(runDir: string, verb: string, action: ControlAction): Promise<ControlOutcome> {
  const reply = await connectRunControl(runDir).send(action);
  if (reply.ok) return reply;
  // Nobody listens on the socket, or the coordinator closed it without answering (its run ending).
  if (reply.code === 'not_live' || reply.code === 'no_reply')
    return { ok: false, code: 'not_live', message: notLiveMessage(runDir, verb, reply.error) };
  return { ok: false, code: 'refused', message: reply.error };
}
