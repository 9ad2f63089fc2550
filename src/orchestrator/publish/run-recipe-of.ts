// The recipe of a recorded run as it is now, loaded with the run's inputs and command-line
// overrides: `orchestrate publish` renders the changesets with it, so an edited title or body
// template updates the pull requests, and `--rebase` runs an instance's agent again with it.
import { resolve } from 'node:path';
import { type LoadOptions, type LoadedRecipe, type RecipeProblem, loadRecipe } from '../../recipe/index.js';
import { foldEvents } from '../../run/run-fold.js';
import { readRunLog } from '../../run/run-store.js';

export type RunRecipe =
  | { ok: true; recipe: LoadedRecipe; runId: string }
  | { ok: false; message?: string; problems?: RecipeProblem[] };

export function loadRunRecipe(
  runDir: string,
  cwd: string,
  env: Readonly<Record<string, string | undefined>>,
): RunRecipe {
  const fold = foldEvents(readRunLog(resolve(runDir, 'run.jsonl')).events);
  const start = fold.start;
  if (!start) return { ok: false, message: `${runDir} has no run_start event: it is not a run folder` };
  // The command-line overrides the run was under (model, provider...): a --rebase re-run resolves its model as the run did.
  const recorded = (fold.overrides ?? start.overrides ?? {}) as LoadOptions;
  const loaded = loadRecipe(start.recipe, {
    cwd,
    env,
    set: Object.entries(start.inputs).map(([k, v]) => `${k}=${typeof v === 'string' ? v : JSON.stringify(v)}`),
    ...recorded,
  });
  return loaded.ok ? { ok: true, recipe: loaded.recipe, runId: start.runId } : { ok: false, problems: loaded.problems };
}
