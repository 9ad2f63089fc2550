// A publish gate answered while no coordinator holds the run (approval-offline.ts takes the run's
// lease and folds the log, then hands a gate: publish answer here): the run's recipe says which
// tasks have a publish gate, the answer is decided as a live run would (decidePublishGate), and
// approval_given is appended, marked offline.
import {
  appendAnswers,
  decisionOf,
  type OfflineEndGate,
  tasksWithGates,
} from '../orchestrator/control/approval-offline.js';
import { readChangesets } from '../run/changesets.js';
import { decidePublishGate } from './publish-gate-rules.js';
import { loadRunRecipe } from './run-recipe-of.js';

/**
 * A publish gate answered while no coordinator holds the run (the caller holds its lease): waiting,
 * not reached yet, or (approve only) rejected before: a run that ended may still be approved.
 */
export const answerPublishGateOffline: OfflineEndGate = (runDir, runId, fold, a, by) => {
  const loaded = loadRunRecipe(runDir, process.cwd(), process.env);
  const gated = new Set(fold.publishGates.keys());
  if (loaded.ok) for (const t of loaded.recipe.tasks) if (t.publish?.approve) gated.add(t.id);
  const taskGated = tasksWithGates(runId, fold);
  const d = decidePublishGate(
    { runId, gated: [...gated], gates: fold.publishGates, taskGated, ended: true, ...changesetTasks(runDir) },
    a,
  );
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
};

/** The tasks with changesets, once the run wrote changesets.json (unreadable: as if not written). */
function changesetTasks(runDir: string): { withChangesets?: Set<string> } {
  try {
    const file = readChangesets(runDir);
    return file ? { withChangesets: new Set(file.changesets.map((c) => c.task)) } : {};
  } catch {
    return {};
  }
}
