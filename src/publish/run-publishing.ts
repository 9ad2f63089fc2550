// What publishing adds to a run, for the layer that composes one (the service layer's run and resume, the
// service): the publish gate that holds the run's end when a `publish:` block has approve:, the
// changesets.json written once the coordinator is done, and the offline answer to a publish gate.
// The core offers these as extension points (CoordinatorOptions.endGate, RunOptions.afterRun,
// answerApprovalOffline's endGate) and imports nothing of publishing.
import type { EndGateRun } from '../orchestrator/coordinator-options.js';
import type { RunOptions } from '../orchestrator/run-recipe.js';
import { writeRunChangesets } from './changeset-plan.js';
import { PublishGates } from './publish-gate.js';

export { answerPublishGateOffline } from './publish-gate-offline.js';

/** The run's publish gate, when a task's publish spec has approve:. */
export function publishEndGate(run: EndGateRun): PublishGates | undefined {
  if (!run.recipe.tasks.some((t) => t.publish?.approve)) return undefined;
  return new PublishGates(
    {
      runId: run.runId,
      runDir: run.runDir,
      recipe: run.recipe,
      env: run.env,
      record: (e) => run.record(e),
      advance: () => run.advance(),
    },
    run.replay,
  );
}

/** The run options that make a run publish: spread into runRecipeFile / runLoadedRecipe / resumeRunDir. */
export function runPublishing(): Pick<RunOptions, 'endGate' | 'afterRun'> {
  return { endGate: publishEndGate, afterRun: (runDir, recipe) => writeRunChangesets(runDir, recipe) };
}
