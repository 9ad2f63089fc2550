// Carrying an approval answer (approve / reject a task's gate, or the run's publish gate) to a run,
// the operation `orchestrate approve|reject` and the MCP server's approve / reject tools share: a
// live run gets it over its control socket; a run no coordinator holds gets it written into its log
// under the run's lease (orchestrator/control/approval-offline.ts), for the next resume to obey.
import type { ApprovalAnswer } from '../run/run-control.js';
import { liveLeaseHolder } from '../run/run-lease.js';
import { type ControlOutcome, deliverRunControl } from './run-control.js';

export type ApprovalDelivery = ControlOutcome;

export async function deliverApproval(runDir: string, a: ApprovalAnswer): Promise<ApprovalDelivery> {
  // A follow-up round's gate is no coordinator's: `publish --follow-up` reads it from the log, so
  // it is always written there (under the lease; refused while a coordinator or publish holds it).
  if (a.gate !== 'follow_up') {
    const live = await deliverRunControl(runDir, a.action, a);
    if (live.ok) return live;
    if (live.code !== 'not_live' || liveLeaseHolder(runDir)) return live;
  }
  // Nobody runs it: the answer goes into its log (under its lease) for the next resume.
  const { answerApprovalOffline } = await import('../orchestrator/control/approval-offline.js');
  const endGate =
    a.gate === 'follow_up'
      ? (await import('../publish/follow-up-gate.js')).answerFollowUpGateOffline
      : (await import('../publish/publish-gate-offline.js')).answerPublishGateOffline;
  const offline = await answerApprovalOffline(runDir, a, a.by ?? 'unknown', endGate);
  return offline.ok
    ? offline
    : { ok: false, code: offline.live === true ? 'not_live' : 'refused', message: offline.error };
}
