// Answering an approval gate of a run no coordinator holds (it was interrupted, or killed while
// it waited): only the holder of a run's lease writes run.jsonl, so this takes the lease for the
// moment of the write (refused when a coordinator is live, or a resume starts first), folds the
// log, decides the answer exactly as a live coordinator would (decideApproval), appends
// approval_given with `offline: true`, and gives the lease back. The next `orchestrate resume`
// folds that answer like any other: an approved instance runs, a rejected one is skipped.
import { basename, join } from 'node:path';
import type { ApprovalAnswer } from '../run/run-control.js';
import { foldEvents } from '../run/run-fold.js';
import { takeRunLease } from '../run/run-lease.js';
import { readRunLog, RunStore } from '../run/run-store.js';
import { answeredMessage, boardOfFold, decideApproval } from './approval-gates.js';

export type OfflineAnswer = { ok: true; message: string } | { ok: false; error: string; live?: boolean };

export async function answerApprovalOffline(runDir: string, a: ApprovalAnswer, by: string): Promise<OfflineAnswer> {
  const runId = basename(runDir);
  const taken = takeRunLease(runDir, runId);
  if (!taken.ok) return { ok: false, error: taken.message, ...(taken.holder ? { live: true } : {}) };
  try {
    const fold = foldEvents(readRunLog(join(runDir, 'run.jsonl')).events);
    const d = decideApproval(boardOfFold(runId, fold), a);
    if (!d.ok) return { ok: false, error: d.error };
    const store = RunStore.open(runDir);
    const decision = a.action === 'approve' ? 'approved' : 'rejected';
    for (const key of d.keys)
      store.append({
        type: 'approval_given',
        task: a.task,
        key,
        decision,
        by,
        via: a.via ?? 'cli',
        ...(a.note ? { note: a.note } : {}),
        offline: true,
      });
    if (store.writeError)
      return { ok: false, error: `cannot write the run log ${store.logFile}: ${store.writeError.message}` };
    return {
      ok: true,
      message: `${answeredMessage(decision, d.keys).replace(/: .*$/, '')}: recorded in run ${runId} (no coordinator holds it); \`orchestrate resume ${runId}\` ${decision === 'approved' ? 'runs it' : 'skips it and the tasks that need it'}`,
    };
  } finally {
    await taken.lease.release();
  }
}
