// Answering an approval gate of a run no coordinator holds (it was interrupted, or killed while
// it waited): only the holder of a run's lease writes run.jsonl, so this takes the lease for the
// moment of the write (refused when a coordinator is live, or a resume starts first), folds the
// log, decides the answer exactly as a live coordinator would (decideApproval), appends
// approval_given with `offline: true`, and gives the lease back. The next `orchestrate resume`
// folds that answer like any other: an approved instance runs, a rejected one is skipped.
import { basename, join } from 'node:path';
import type { ApprovalAnswer } from '../../run/run-control.js';
import { foldEvents } from '../../run/run-fold.js';
import { takeRunLease } from '../../run/run-lease.js';
import { readRunLog, RunStore } from '../../run/run-store.js';
import type { RunState } from '../../run/run-fold.js';
import { answeredMessage, boardOfFold, decideApproval, noPublishGateError } from './approval-gates.js';

export type OfflineAnswer = { ok: true; message: string } | { ok: false; error: string; live?: boolean };

/**
 * Answers a publish gate (or a follow-up round's gate) offline (the publish layer's,
 * publish/publish-gate-offline.ts and follow-up-gate.ts), called under the run's lease with the folded log.
 */
export type OfflineEndGate = (
  runDir: string,
  runId: string,
  fold: RunState,
  a: ApprovalAnswer,
  by: string,
) => OfflineAnswer;

export async function answerApprovalOffline(
  runDir: string,
  a: ApprovalAnswer,
  by: string,
  endGate?: OfflineEndGate,
): Promise<OfflineAnswer> {
  const runId = basename(runDir);
  const taken = takeRunLease(runDir, runId);
  if (!taken.ok) return { ok: false, error: taken.message, ...(taken.holder ? { live: true } : {}) };
  try {
    const fold = foldEvents(readRunLog(join(runDir, 'run.jsonl')).events);
    if (a.gate === 'publish' || a.gate === 'follow_up')
      return endGate
        ? endGate(runDir, runId, fold, a, by)
        : { ok: false, error: noPublishGateError(runId, tasksWithGates(runId, fold)) };
    const d = decideApproval(boardOfFold(runId, fold), a);
    if (!d.ok) return { ok: false, error: d.error };
    const decision = decisionOf(a);
    const error = appendAnswers(
      runDir,
      d.keys.map((key) => ({ task: a.task, key })),
      decision,
      a,
      by,
    );
    if (error) return { ok: false, error };
    return {
      ok: true,
      message: `${answeredMessage(decision, d.keys).replace(/: .*$/, '')}: recorded in run ${runId} (no coordinator holds it); \`orchestrate resume ${runId}\` ${decision === 'approved' ? 'runs it' : 'skips it and the tasks that need it'}`,
    };
  } finally {
    await taken.lease.release();
  }
}

/** The tasks whose instances reached an approval gate. */
export function tasksWithGates(runId: string, fold: RunState): string[] {
  return boardOfFold(runId, fold)
    .gates.map((g) => g.task)
    .filter((t, i, all) => all.indexOf(t) === i);
}

export const decisionOf = (a: ApprovalAnswer) =>
  a.action === 'approve' ? ('approved' as const) : ('rejected' as const);

/** Appends one approval_given per gate answered, marked offline; the write error, if any. */
export function appendAnswers(
  runDir: string,
  gates: readonly { gate?: 'publish' | 'follow_up'; task: string; key: string; round?: number }[],
  decision: 'approved' | 'rejected',
  a: ApprovalAnswer,
  by: string,
): string | undefined {
  const store = RunStore.open(runDir);
  for (const g of gates)
    store.append({
      type: 'approval_given',
      ...g,
      decision,
      by,
      via: a.via ?? 'cli',
      ...(a.note ? { note: a.note } : {}),
      offline: true,
    });
  return store.writeError ? `cannot write the run log ${store.logFile}: ${store.writeError.message}` : undefined;
}
