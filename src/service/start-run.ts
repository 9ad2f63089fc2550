// A new run of a recipe in this process, in two steps so a caller can look at the recipe between
// them (print its warnings, make a dry run of it instead):
//
//   prepareRun(request: RunRequest, where: ServiceEnv): PreparedRun
//     loads and checks the recipe: { ok: true, recipe, warnings, ... } or
//     { ok: false, code: 'problems', problems } (file:line:col, nothing started)
//   startRun(prepared: PreparedRun & { ok: true }, exec: RunExecution): Promise<RunResult>
//     runs it to its end: { ok: true, outcome } (outcome.status: succeeded, failed, partial,
//     interrupted) or { ok: false, code, ... } (run-execution.ts lists the codes)
//
// `orchestrate <recipe>` calls both, and so does the process a detached run starts
// (launch-run.ts: the MCP server's run_recipe, the web view). Nothing here prints or exits.
import { runLoadedRecipe } from '../orchestrator/run-recipe.js';
import { type LoadedRecipe, type LoadOptions, loadRecipe, type RecipeProblem } from '../recipe/index.js';
import type { ServiceEnv } from './dry-run.js';
import { executeRun, type RunExecution, type RunResult } from './run-execution.js';
import { loadOptionsOf, type RunRequest } from './run-request.js';

export type PreparedRun =
  | {
      ok: true;
      request: RunRequest;
      recipe: LoadedRecipe;
      /** What does not stop the run (an agent file's ignored tool, ...): show them to the user. */
      warnings: readonly RecipeProblem[];
      /** The load options the recipe was loaded with (the run records its overrides). */
      load: LoadOptions;
    }
  | { ok: false; code: 'problems'; problems: readonly RecipeProblem[] };

/** Loads the request's recipe with its inputs and overrides; nothing runs. */
export function prepareRun(request: RunRequest, where: ServiceEnv): PreparedRun {
  const load = loadOptionsOf(request, where);
  const loaded = loadRecipe(request.recipe, load);
  if (!loaded.ok) return { ok: false, code: 'problems', problems: loaded.problems };
  return { ok: true, request, recipe: loaded.recipe, warnings: loaded.warnings, load };
}

/** Runs a prepared recipe to its end (or until `exec.signal` interrupts it). */
export function startRun(prepared: PreparedRun & { ok: true }, exec: RunExecution): Promise<RunResult> {
  const runsDir = prepared.request.runsDir;
  return executeRun(
    (opts) =>
      runLoadedRecipe(prepared.recipe, prepared.load, { ...opts, ...(runsDir !== undefined ? { runsDir } : {}) }),
    exec,
  );
}
