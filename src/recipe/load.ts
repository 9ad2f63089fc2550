// The one entry point the CLI and the coordinator use: validate a recipe file, apply inputs and
// command-line overrides, and return a LoadedRecipe or every problem found.
import { getModel, listModels } from '../ai/models.js';
import { BUILTIN_PROVIDERS, findProvider } from '../ai/provider-config.js';
import { renderText } from './expressions.js';
import { inputSpecs, resolveInputs } from './inputs.js';
import type { LoadedRecipe, RecipeOverrides } from './loaded-recipe.js';
import { modelKey, normalizeRecipe } from './normalize.js';
import { type RecipeProblem, sortProblems } from './problems.js';
import { suggestionHint } from './suggest.js';
import { validateRecipeFile } from './validate.js';
import { loadUserHooks } from './recipe-hooks.js';
import { HooksConfigError } from '../runtime/command-hooks.js';
import { type InputFiles, withInputFiles } from '../util/input-files.js';

export interface LoadOptions extends RecipeOverrides {
  /** Relative recipe paths and problem paths are relative to this folder. */
  cwd?: string;
  /** Environment for ORCHESTRATE_MODEL and `${{ env.X }}` (default: process.env). */
  env?: Readonly<Record<string, string | undefined>>;
  /** `key=value` input assignments from --set, in order. */
  set?: readonly string[];
  /** Skip the check that required inputs have values (for `validate`, which has no --set). */
  allowMissingInputs?: boolean;
  /**
   * Where the recipe, its agent files, scripts, .mcp.json and hook settings are read from
   * (default: the file system); a resume passes the copies its run captured (run/run-inputs.ts).
   */
  files?: InputFiles;
}

/** `warnings` do not stop the run (an agent file's ignored tool, ...); show them to the user. */
export type LoadResult =
  | { ok: true; recipe: LoadedRecipe; warnings: RecipeProblem[] }
  | { ok: false; problems: RecipeProblem[] };

export function loadRecipe(path: string, opts: LoadOptions = {}): LoadResult {
  return withInputFiles(opts.files, () => loadRecipeNow(path, opts));
}

function loadRecipeNow(path: string, opts: LoadOptions): LoadResult {
  const validated = validateRecipeFile(path, { cwd: opts.cwd });
  if (!validated.ok) return validated;
  const { document: doc, sourceMap, displayFile, file, dir } = validated.recipe;
  const env = opts.env ?? process.env;
  const problems: RecipeProblem[] = [];
  const at = (p: (string | number)[]) => ({ file: displayFile, ...sourceMap.locate(p) });

  const specs = inputSpecs(doc);
  const { values, issues } = resolveInputs(specs, opts.set ?? []);
  for (const issue of issues) {
    if (opts.allowMissingInputs && issue.missing) continue;
    problems.push({
      code: 'input',
      ...at(issue.name ? ['inputs', issue.name] : doc.inputs ? ['inputs'] : []),
      message: issue.message,
      ...(issue.hint ? { hint: issue.hint } : {}),
    });
  }

  // Recipe env may use inputs and the process env; rendered once for the whole run.
  const renderedEnv: Record<string, string> = {};
  for (const [k, v] of Object.entries(doc.env ?? {})) {
    const r = renderText(String(v), { inputs: values, env, tasks: {} });
    if (r.ok) renderedEnv[k] = String(r.value);
    else if (!opts.allowMissingInputs)
      problems.push({ code: 'expression_reference', ...at(['env', k]), message: `env.${k}: ${r.error}` });
  }

  // The user's hook settings files as this load sees the environment (validation read process.env's).
  try {
    loadUserHooks(dir, env);
  } catch (err) {
    if (!(err instanceof HooksConfigError)) throw err;
    const settingsFile = err.message.slice(0, err.message.indexOf(': '));
    problems.push({
      code: 'bad_hooks',
      file: settingsFile,
      line: 1,
      col: 1,
      message: `settings file with hooks every agent of this recipe would run: ${err.message}`,
      hint: 'fix the file, or move it away',
    });
    return { ok: false, problems: sortProblems([...problems, ...validated.recipe.warnings]) };
  }

  const overrides: RecipeOverrides = {};
  if (opts.model !== undefined) overrides.model = opts.model;
  if (opts.provider !== undefined) overrides.provider = opts.provider;
  if (opts.concurrency !== undefined) overrides.concurrency = opts.concurrency;
  if (opts.budgetUsd !== undefined) overrides.budgetUsd = opts.budgetUsd;
  if (opts.budgetTokens !== undefined) overrides.budgetTokens = opts.budgetTokens;
  const recipe = normalizeRecipe(doc, {
    file,
    dir,
    env,
    overrides,
    inputs: specs,
    inputValues: values,
    renderedEnv,
    locate: (p) => sourceMap.locate(p),
  });

  // --provider NAME must name a provider that exists: built in, a preset, or under the recipe's providers:.
  if (
    opts.provider !== undefined &&
    opts.provider !== 'anthropic' &&
    opts.provider !== 'scripted' &&
    !findProvider(opts.provider) &&
    !Object.hasOwn(doc.providers ?? {}, opts.provider)
  ) {
    const known = [
      'anthropic',
      'scripted',
      ...BUILTIN_PROVIDERS.map((b) => b.name),
      ...Object.keys(doc.providers ?? {}),
    ];
    problems.push({
      code: 'unknown_provider',
      ...at([]),
      message: `--provider ${opts.provider}: unknown provider`,
      hint: `use one of ${known.join(', ')}, or declare it under the recipe's providers: {${opts.provider}: {type: openai-compatible, base_url: ...}}`,
    });
  }
  // --provider scripted turns every agent offline; each needs a script to replay.
  if (opts.provider === 'scripted') {
    for (const agent of Object.values(recipe.agents)) {
      if (agent.script === undefined) {
        problems.push({
          code: 'missing_key',
          ...at(agent.implicit ? [] : ['agents', agent.name]),
          message: `--provider scripted: agent "${agent.name}" has no script to replay`,
          hint: 'add script: <file> to the recipe or to the agent, or run without --provider scripted',
        });
      }
    }
  }
  // A declared model needs room to answer in: limits of 0 would fail every call.
  for (const id of Object.keys(doc.models ?? {})) {
    const spec = recipe.models[modelKey(id)]!;
    for (const [key, n, least] of [
      ['context_window', spec.contextWindow, 1_000],
      ['max_tokens', spec.maxTokens, 1],
    ] as const) {
      if (n < least) {
        problems.push({
          code: 'bad_token_count',
          ...at(['models', id, key]),
          message: `models.${id}.${key} must be at least ${least}`,
          hint: `give the model's real ${key.replace('_', ' ')} from its documentation, or leave it out for the default`,
        });
      }
    }
  }
  // A real provider only serves models it knows; catch a typo before any task starts. Models the
  // recipe declares under `models:` are taken as given.
  const reported = new Set<string>();
  for (const agent of Object.values(recipe.agents)) {
    if (agent.provider !== 'anthropic' || agent.modelSpec || getModel(agent.model.replace(/^anthropic\//, '')))
      continue;
    // A task's own model (`model:` on the task) is reported there.
    if (
      agent.taskOverride &&
      opts.model === undefined &&
      doc.tasks[agent.taskOverride[1] as number]?.model !== undefined
    ) {
      problems.push({
        code: 'unknown_model',
        ...at([...agent.taskOverride, 'model']),
        message: `unknown model "${agent.model}"`,
        hint: `${suggestionHint(
          agent.model,
          listModels().map((m) => m.id),
          'models',
        )} (or declare it under models: with its price)`,
      });
      continue;
    }
    const own = doc.agents?.[agent.name]?.model !== undefined;
    const fromFile = !own && agent.systemFile !== undefined && agent.model !== (doc.model ?? env.ORCHESTRATE_MODEL);
    const source =
      opts.model !== undefined
        ? '--model'
        : own
          ? `agents.${agent.name}.model`
          : fromFile
            ? `agents.${agent.name}.system_file`
            : doc.model !== undefined
              ? 'model'
              : 'ORCHESTRATE_MODEL';
    if (reported.has(source)) continue;
    reported.add(source);
    const path = source === '--model' || source === 'ORCHESTRATE_MODEL' ? [] : source.split('.');
    const hint = suggestionHint(
      agent.model,
      listModels().map((m) => m.id),
      'models',
    );
    const message = fromFile
      ? `agent file of "${agent.name}" names unknown model "${agent.model}"`
      : path.length
        ? `unknown model "${agent.model}"`
        : `${source} names unknown model "${agent.model}"`;
    problems.push({
      code: 'unknown_model',
      ...at(path),
      message,
      hint: `${hint} (or use --provider scripted to run offline). A model newer than this list can be declared with its price in $ per million tokens: models: { ${agent.model}: { price: { input: N, output: N } } }`,
    });
  }
  return problems.length
    ? { ok: false, problems: sortProblems([...problems, ...validated.recipe.warnings]) }
    : { ok: true, recipe, warnings: validated.recipe.warnings };
}
