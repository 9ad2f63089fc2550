// Carrying an approval answer (approve / reject a task's gate) to a run, shared by `orchestrate
// approve|reject` and the MCP server's approve / reject tools: a live run gets it over its control
// socket; a run no coordinator holds gets it written into its log under the run's lease
// (orchestrator/approval-offline.ts), for the next resume to obey.
import type { ApprovalAnswer } from '../run/run-control.js';
import { liveLeaseHolder } from '../run/run-lease.js';
import { deliverRunControl } from './run-control-command.js';

/** `refused`: the answer was understood and refused (no such gate, already answered); `notLive`: a holder that does not answer. */
export type ApprovalDelivery = { ok: true; message: string } | { ok: false; message: string; notLive: boolean };

export async function deliverApproval(runDir: string, a: ApprovalAnswer): Promise<ApprovalDelivery> {
  const live = await deliverRunControl(runDir, a.action, a);
  if (live.ok) return live;
  if (!live.notLive || liveLeaseHolder(runDir)) return { ok: false, message: live.message, notLive: live.notLive };
  // Nobody runs it: the answer goes into its log (under its lease) for the next resume.
  const { answerApprovalOffline } = await import('../orchestrator/approval-offline.js');
  const offline = await answerApprovalOffline(runDir, a, a.by ?? 'unknown');
  return offline.ok ? offline : { ok: false, message: offline.error, notLive: offline.live === true };
}
