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
import { decidePublishGate } from './publish/publish-gate-rules.js';
import { loadRunRecipe } from './publish/run-recipe-of.js';

export type OfflineAnswer = { ok: true; message: string } | { ok: false; error: string; live?: boolean };

export async function answerApprovalOffline(runDir: string, a: ApprovalAnswer, by: string): Promise<OfflineAnswer> {
  const runId = basename(runDir);
  const taken = takeRunLease(runDir, runId);
  if (!taken.ok) return { ok: false, error: taken.message, ...(taken.holder ? { live: true } : {}) };
  try {
    const fold = foldEvents(readRunLog(join(runDir, 'run.jsonl')).events);
    if (a.gate === 'publish') return answerPublishGate(runDir, runId, fold, a, by);
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

/**
 * A publish gate answered while no coordinator holds the run (the caller holds its lease): waiting,
 * not reached yet, or (approve only) rejected before: a run that ended may still be approved.
 */
function answerPublishGate(
  runDir: string,
  runId: string,
  fold: ReturnType<typeof foldEvents>,
  a: ApprovalAnswer,
  by: string,
): OfflineAnswer {
  const loaded = loadRunRecipe(runDir, process.cwd(), process.env);
  const gated = new Set(fold.publishGates.keys());
  if (loaded.ok) for (const t of loaded.recipe.tasks) if (t.publish?.approve) gated.add(t.id);
  const taskGated = boardOfFold(runId, fold)
    .gates.map((g) => g.task)
    .filter((t, i, all) => all.indexOf(t) === i);
  const d = decidePublishGate({ runId, gated: [...gated], gates: fold.publishGates, taskGated, ended: true }, a);
  if (!d.ok) return { ok: false, error: d.error };
  const decision = decisionOf(a);
  const error = appendAnswers(
    runDir,
    d.tasks.map((task) => ({ gate: 'publish' as const, task, key: task })),
    decision,
    a,
    by,
  );
  if (error) return { ok: false, error };
  const next =
    decision === 'rejected'
      ? 'nothing will be pushed'
      : fold.lastEndStatus === 'succeeded'
        ? `\`orchestrate publish ${runId} --apply\` publishes the changesets`
        : `\`orchestrate resume ${runId}\` publishes the changesets (or \`orchestrate publish ${runId} --apply\`)`;
  return {
    ok: true,
    message: `${decision} the publish gate of ${d.tasks.join(', ')}: recorded in run ${runId} (no coordinator holds it); ${next}`,
  };
}

const decisionOf = (a: ApprovalAnswer) => (a.action === 'approve' ? ('approved' as const) : ('rejected' as const));

/** Appends one approval_given per gate answered, marked offline; the write error, if any. */
function appendAnswers(
  runDir: string,
  gates: readonly { gate?: 'publish'; task: string; key: string }[],
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
