// Loading a run's recipe as the run trusts it. At the start the loader reads the live files and
// every file it read is captured (run-inputs.ts). Later (resume, `publish --rebase`, an approval
// answered offline) the recipe is loaded from those copies: a file changed since is named, with a
// short diff, and not used. `--reload-recipe` is the user's explicit way to take the live files: they
// are validated like a new run's and captured again, naming who asked. A run from before inputs
// were captured loads the live files, with a warning saying so.
import { type LoadOptions, type LoadResult, type LoadedRecipe, loadRecipe } from '../recipe/index.js';
import { type InputChange, changedInputs, describeInputChanges } from './input-changes.js';
import {
  capturedInputFiles,
  capturedInputs,
  type InputsManifest,
  readInputsManifest,
  RecordingInputFiles,
  writeCapturedInputs,
} from './run-inputs.js';

/** Where a session's recipe came from; run_resume records it. */
export interface InputsUsed {
  /** captured: the copies taken at the run's start (or the last reload); reloaded: the live files, captured again; uncaptured: a run of an older version. */
  source: 'captured' | 'reloaded' | 'uncaptured';
  /** Who asked for --reload-recipe. */
  reloadedBy?: string;
  /** Files that differ from their captured copy (what the captured source did not use, or what a reload took). */
  changed: InputChange[];
}

export type TrustedLoad =
  | (Extract<LoadResult, { ok: true }> & { inputs: InputsUsed })
  | { ok: false; problems?: Extract<LoadResult, { ok: false }>['problems']; message?: string };

/** Loads the recipe from the live files and captures every file the load read, plus the agents' extensions. */
export function loadAndCaptureRecipe(runDir: string, path: string, load: LoadOptions, reloadedBy?: string): LoadResult {
  const recorder = new RecordingInputFiles();
  const loaded = loadRecipe(path, { ...load, files: recorder });
  if (!loaded.ok) return loaded;
  for (const agent of Object.values(loaded.recipe.agents)) {
    for (const ext of agent.extensions) recorder.add(ext);
    if (agent.script) recorder.add(agent.script);
  }
  writeCapturedInputs(runDir, recorder.seen, reloadedBy);
  return loaded;
}

/**
 * The recipe of the run in `runDir` for a later session: from its captured inputs, or with
 * `reloadBy` from the live files (captured again). `path` is the recipe the run started with.
 */
export function loadTrustedRecipe(
  runDir: string,
  path: string,
  load: LoadOptions,
  opts: { reloadBy?: string } = {},
): TrustedLoad {
  let manifest: InputsManifest | undefined;
  try {
    manifest = readInputsManifest(runDir);
  } catch (err) {
    return {
      ok: false,
      message: `${(err as Error).message}. Add --reload-recipe to validate the recipe's files as they are now and capture them again.`,
    };
  }
  if (!manifest && opts.reloadBy === undefined) {
    const loaded = loadRecipe(path, load);
    return loaded.ok ? { ...loaded, inputs: { source: 'uncaptured', changed: [] } } : loaded;
  }
  const changed = manifest ? changedInputs(runDir, manifest) : [];
  if (opts.reloadBy !== undefined || !manifest) {
    const loaded = loadAndCaptureRecipe(runDir, path, load, opts.reloadBy);
    return loaded.ok ? { ...loaded, inputs: { source: 'reloaded', reloadedBy: opts.reloadBy, changed } } : loaded;
  }
  let loaded: LoadResult;
  try {
    loaded = loadRecipe(path, { ...load, files: capturedInputFiles(runDir, manifest) });
  } catch (err) {
    return { ok: false, message: (err as Error).message };
  }
  if (!loaded.ok) return loaded;
  return {
    ...loaded,
    recipe: withCapturedModules(loaded.recipe, runDir, manifest, changed),
    inputs: { source: 'captured', changed },
  };
}

/**
 * The recipe with the files the run reads by path (extensions, scripts) pointing at their captured
 * copies where the live file changed; an unchanged one keeps its place (an extension's own
 * relative imports keep working).
 */
function withCapturedModules(
  recipe: LoadedRecipe,
  runDir: string,
  manifest: InputsManifest,
  changed: readonly InputChange[],
): LoadedRecipe {
  if (changed.length === 0) return recipe;
  const moved = new Set(changed.map((c) => c.file));
  const copies = new Map(capturedInputs(runDir, manifest).flatMap((f) => (f.copy ? [[f.path, f.copy] as const] : [])));
  const at = (p: string): string => (moved.has(p) ? (copies.get(p) ?? p) : p);
  const agents = Object.fromEntries(
    Object.entries(recipe.agents).map(([name, a]) => [
      name,
      { ...a, extensions: a.extensions.map(at), ...(a.script ? { script: at(a.script) } : {}) },
    ]),
  );
  return { ...recipe, agents, ...(recipe.script ? { script: at(recipe.script) } : {}) };
}

/** The text a user sees for an older run whose inputs were not captured. */
export const UNCAPTURED_WARNING =
  "warning: this run was started by a version that did not capture its inputs; the recipe, its agent files, .mcp.json and hook settings are read as they are now, so check that nothing in the recipe's folder was changed by the run's agents";

/**
 * What a later session tells the user about its inputs (undefined: nothing to tell): changed files
 * it does not use and the command that would use them (`reloadCommand`), a reload, an older run.
 */
export function inputsNotice(
  runId: string,
  inputs: InputsUsed,
  shown: (file: string) => string,
  reloadCommand: string,
): string | undefined {
  if (inputs.source === 'uncaptured') return UNCAPTURED_WARNING;
  const n = inputs.changed.length;
  const files = describeInputChanges(inputs.changed, shown);
  if (inputs.source === 'reloaded')
    return `the recipe and its files are read as they are now and captured again (--reload-recipe${inputs.reloadedBy ? `, asked by ${inputs.reloadedBy}` : ''})${n ? `; changed since the last capture:\n${files}` : ''}`;
  if (n === 0) return undefined;
  return (
    `warning: ${n === 1 ? 'a file' : `${n} files`} the run trusted changed since run ${runId} started; the copies captured then are used, not the changed ${n === 1 ? 'file' : 'files'}:\n${files}\n` +
    `  If you made ${n === 1 ? 'this change' : 'these changes'} yourself, \`${reloadCommand}\` validates and uses the files as they are now.`
  );
}
