// The recipe of a recorded run, loaded with the run's inputs and command-line overrides:
// `orchestrate publish` renders the changesets with it and `--rebase` runs an instance's agent again
// with it. It is the recipe as the run trusted it at its start (the captured copies,
// run/trusted-recipe.ts): an agent of the run that rewrote the recipe's files cannot redirect a push
// or unconfine the re-run. `reloadBy` (`publish --reload-recipe`) takes the files as they are now,
// e.g. an edited title or body template, validated and captured again.
import { resolve } from 'node:path';
import type { LoadOptions, LoadedRecipe, RecipeProblem } from '../recipe/index.js';
import { foldEvents } from '../run/run-fold.js';
import { readRunLog } from '../run/run-store.js';
import { inputsNotice, loadTrustedRecipe } from '../run/trusted-recipe.js';
import { displayPath } from '../util/display-path.js';

export type RunRecipe =
  | { ok: true; recipe: LoadedRecipe; runId: string; notice?: string }
  | { ok: false; message?: string; problems?: RecipeProblem[] };

export function loadRunRecipe(
  runDir: string,
  cwd: string,
  env: Readonly<Record<string, string | undefined>>,
  opts: { reloadBy?: string } = {},
): RunRecipe {
  const fold = foldEvents(readRunLog(resolve(runDir, 'run.jsonl')).events);
  const start = fold.start;
  if (!start) return { ok: false, message: `${runDir} has no run_start event: it is not a run folder` };
  // The command-line overrides the run was under (model, provider...): a --rebase re-run resolves its model as the run did.
  const recorded = (fold.overrides ?? start.overrides ?? {}) as LoadOptions;
  const loaded = loadTrustedRecipe(
    runDir,
    start.recipe,
    {
      cwd,
      env,
      set: Object.entries(start.inputs).map(([k, v]) => `${k}=${typeof v === 'string' ? v : JSON.stringify(v)}`),
      ...recorded,
    },
    opts,
  );
  if (!loaded.ok) return loaded;
  const notice = inputsNotice(
    start.runId,
    loaded.inputs,
    (f) => displayPath(f, cwd),
    `orchestrate publish ${start.runId} --reload-recipe`,
  );
  return { ok: true, recipe: loaded.recipe, runId: start.runId, ...(notice ? { notice } : {}) };
}
