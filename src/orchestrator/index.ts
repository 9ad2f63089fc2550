// orchestrate-agents/orchestrator: run or resume a recipe from a program, as `orchestrate run` and
// `orchestrate resume` do. The run's record (events, store, fold, control client) is
// orchestrate-agents/run; the recipe language (load, validate, dry run) is the CLI's and stays
// inside. The coordinator's collaborators and the worker-thread side are not part of the surface.
//
//   import { runRecipeFile } from 'orchestrate-agents/orchestrator';
//   const started = await runRecipeFile('plan.yaml');
//   if (started.ok) console.log(started.outcome.status, started.outcome.resultFile);
export {
  runRecipeFile,
  runLoadedRecipe,
  resumeRunDir,
  defaultRunsDir,
  missingApiKey,
  type RunOptions,
  type ResumeOptions,
  type StartResult,
} from './run-recipe.js';
export type { RunOutcome } from './coordinator.js';
export { ORCHESTRATOR_DEFAULTS } from './defaults.js';
