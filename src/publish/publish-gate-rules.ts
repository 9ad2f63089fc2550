// The rules of the publish gate (publish.approve), shared by the live run (publish-gate.ts), the
// offline answer (approval-offline.ts) and `orchestrate publish --apply` (publish-run.ts): what a
// gate says it would publish (its prompt with the changeset preview), which gates an answer
// applies to, and why --apply may not publish yet. Pure: everything comes from the run's fold.
import type { LoadedRecipe } from '../recipe/index.js';
import { renderText } from '../recipe/expressions.js';
import { describeApproval, type ApprovalRecord } from '../run/approval-record.js';
import type { Changeset } from '../run/changesets.js';
import type { ApprovalAnswer } from '../run/run-control.js';
import type { RunState } from '../run/run-fold.js';
import { didYouMean } from '../util/did-you-mean.js';
import { noPublishGateError } from '../orchestrator/control/approval-gates.js';
import { diffstatText } from './changeset-plan.js';

/** One line saying what a gate would publish: how many changesets, their repositories, the diffstat. */
export function changesetPreview(cs: readonly Changeset[]): string {
  const sum = { files: 0, insertions: 0, deletions: 0 };
  for (const c of cs) {
    sum.files += c.diffstat.files;
    sum.insertions += c.diffstat.insertions;
    sum.deletions += c.diffstat.deletions;
  }
  const repos = [...new Set(cs.map((c) => c.repository ?? c.repo))];
  return `${cs.length} changeset${cs.length === 1 ? '' : 's'} in ${repos.join(', ')}: ${diffstatText(sum)}`;
}

/** The gate's prompt rendered (its names: task, run.id, inputs, changesets.*) with the preview after it. */
export function publishGatePrompt(
  template: string,
  task: string,
  runId: string,
  recipe: LoadedRecipe,
  cs: readonly Changeset[],
): string {
  const preview = changesetPreview(cs);
  const sum = cs.reduce(
    (s, c) => ({
      files: s.files + c.diffstat.files,
      insertions: s.insertions + c.diffstat.insertions,
      deletions: s.deletions + c.diffstat.deletions,
    }),
    { files: 0, insertions: 0, deletions: 0 },
  );
  const names = {
    task,
    run: { id: runId },
    changesets: {
      count: cs.length,
      repos: [...new Set(cs.map((c) => c.repository ?? c.repo))].join(', '),
      ...sum,
      text: diffstatText(sum),
    },
  };
  const r = renderText(template, { inputs: recipe.inputValues, env: {}, tasks: {}, names });
  return `${r.ok ? String(r.value) : template} — ${preview}`;
}

/** What an answer to a publish gate is decided from. */
export interface PublishGateBoard {
  runId: string;
  /** Tasks whose publish spec has approve:. */
  gated: readonly string[];
  /** The gates requested or answered so far, by task. */
  gates: ReadonlyMap<string, ApprovalRecord>;
  /** Tasks with an approval gate of their own (approve:), named when the run has no publish gate. */
  taskGated?: readonly string[];
  /** The run has ended (answered offline): a rejected or unreached gate may still be approved. */
  ended?: boolean;
  /**
   * Tasks that have changesets (the run's changesets.json), when it was written: a gate the run
   * never asked because its task changed nothing is not approved by an answer to every gate.
   */
  withChangesets?: ReadonlySet<string>;
}

export type PublishGateDecision = { ok: true; tasks: string[] } | { ok: false; error: string };

/** Which publish gates an answer applies to (a.task: one task, or '*' for every one), or why none. */
export function decidePublishGate(board: PublishGateBoard, a: ApprovalAnswer): PublishGateDecision {
  if (board.gated.length === 0) {
    return { ok: false, error: noPublishGateError(board.runId, board.taskGated) };
  }
  if (a.task !== '*' && !board.gated.includes(a.task)) {
    const near = didYouMean(a.task, board.gated);
    return {
      ok: false,
      error: `task ${a.task} has no publish gate; ${near ? `did you mean "${near}"?` : `publish gates: ${board.gated.join(', ')}`}`,
    };
  }
  const named = a.task === '*' ? [...board.gated] : [a.task];
  const waiting = named.filter((t) => board.gates.get(t)?.state === 'waiting');
  if (waiting.length) return { ok: true, tasks: waiting };
  // A run that ended: its publish gate may be approved afterwards (rejected, or never reached).
  if (board.ended && a.action === 'approve') {
    const open = named.filter((t) => board.gates.get(t)?.state !== 'approved');
    const has = board.withChangesets;
    const worth = a.task === '*' && has ? open.filter((t) => board.gates.has(t) || has.has(t)) : open;
    if (worth.length) return { ok: true, tasks: worth };
    if (open.length) return { ok: true, tasks: open };
  }
  const t = named[0]!;
  const rec = board.gates.get(t);
  return {
    ok: false,
    error: rec
      ? `the publish gate of ${t} was already ${describeApproval(rec)}; nothing to ${a.action}`
      : `run ${board.runId} has not reached the publish gate of ${t} yet (it waits there once every task has settled and the changesets are computed)`,
  };
}

/** Why `publish --apply` may not publish the changesets of `tasks` now (a gate waiting, rejected, not reached); undefined: it may. */
export function publishGateRefusal(
  recipe: LoadedRecipe,
  fold: Pick<RunState, 'publishGates' | 'runId'>,
  tasks: Iterable<string>,
): string | undefined {
  for (const task of new Set(tasks)) {
    if (!recipe.tasks.find((t) => t.id === task)?.publish?.approve) continue;
    const rec = fold.publishGates.get(task);
    const run = fold.runId;
    if (rec?.state === 'approved') continue;
    if (rec?.state === 'waiting')
      return `the publish gate of ${task} is waiting for approval (${rec.prompt}); nothing was pushed. Answer it: orchestrate approve ${run} --publish (or reject)`;
    if (rec?.state === 'rejected')
      return `the publish gate of ${task} was ${describeApproval(rec)}; nothing was pushed. To publish anyway: orchestrate approve ${run} --publish --note "why", then orchestrate publish ${run} --apply`;
    return `run ${run} has not reached the publish gate of ${task} (publish.approve); nothing was pushed. Approve it first: orchestrate approve ${run} --publish`;
  }
  return undefined;
}
