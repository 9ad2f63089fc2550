// `orchestrate <recipe>` / `orchestrate run <recipe>`. The --dry-run path validates, expands the
// DAG and estimates cost without calling a model. Running for real is the coordinator's part
// and is not wired here yet.
import { type Argv } from 'yargs';
import { PROVIDERS, type ProviderName, displayPath, dryRun, loadRecipe } from '../../orchestrator/recipe/index.js';
import { type CliContext, EXIT } from '../cli-io.js';
import { type CliCommand, type CommandArgs } from '../command.js';
import { printProblems, problemsJson } from '../print-problems.js';
import { renderDryRun } from '../render-dry-run.js';

/** Flags shared by every way of running a recipe (design section 5). */
export function runOptions(y: Argv): Argv<object> {
  return y
    .positional('recipe', { type: 'string', describe: 'Recipe YAML file', demandOption: true })
    .option('dry-run', { type: 'boolean', default: false, describe: 'Validate, print the expanded task DAG and a cost estimate; no model calls' })
    .option('json', { type: 'boolean', default: false, describe: 'Machine-readable output on stdout' })
    .option('set', { type: 'string', describe: 'Set an input: --set key=value (repeatable)' })
    .option('model', { type: 'string', describe: 'Model for every agent (overrides the recipe)' })
    .option('provider', { type: 'string', choices: PROVIDERS, describe: 'anthropic, or scripted (offline)' })
    .option('concurrency', { type: 'number', describe: 'Task instances running at once' })
    .option('budget-usd', { type: 'number', describe: 'Run budget in US dollars (overrides the recipe)' })
    .option('run-dir', { type: 'string', describe: 'Folder holding run records (default .orchestrate/runs)' })
    .check((a) => {
      // yargs turns "--concurrency abc" into NaN without complaint.
      const c = a.concurrency;
      if (c !== undefined && !(typeof c === 'number' && Number.isInteger(c) && c >= 1)) throw new Error(`--concurrency must be a whole number of at least 1 (got ${String(c)})`);
      const b = a['budget-usd'];
      if (b !== undefined && !(typeof b === 'number' && Number.isFinite(b) && b >= 0)) throw new Error(`--budget-usd must be a number of dollars, 0 or more (got ${String(b)})`);
      for (const key of ['model', 'run-dir', 'recipe']) {
        if (Array.isArray(a[key])) throw new Error(`--${key} was given more than once`);
      }
      return true;
    });
}

function setList(v: unknown): string[] {
  if (v === undefined) return [];
  return (Array.isArray(v) ? v : [v]).map(String);
}

export async function runRecipe(args: CommandArgs, ctx: CliContext): Promise<number> {
  const path = String(args.recipe);
  const json = args.json === true;
  const loaded = loadRecipe(path, {
    cwd: ctx.cwd,
    env: ctx.env,
    set: setList(args.set),
    ...(typeof args.model === 'string' ? { model: args.model } : {}),
    ...(typeof args.provider === 'string' ? { provider: args.provider as ProviderName } : {}),
    ...(typeof args.concurrency === 'number' ? { concurrency: args.concurrency } : {}),
    ...(typeof args['budget-usd'] === 'number' ? { budgetUsd: args['budget-usd'] } : {}),
  });
  if (!loaded.ok) {
    if (json) ctx.stdout(`${JSON.stringify({ ok: false, problems: problemsJson(loaded.problems) }, null, 2)}\n`);
    else printProblems(loaded.problems, ctx);
    return EXIT.usage;
  }
  const displayFile = displayPath(loaded.recipe.file, ctx.cwd);
  if (args['dry-run'] === true) {
    const result = dryRun(loaded.recipe, { env: ctx.env, displayFile });
    if (!result.ok) {
      if (json) ctx.stdout(`${JSON.stringify({ ok: false, problems: problemsJson(result.problems) }, null, 2)}\n`);
      else printProblems(result.problems, ctx);
      return EXIT.usage;
    }
    if (json) ctx.stdout(`${JSON.stringify({ ok: true, dryRun: true, ...result.report }, null, 2)}\n`);
    else ctx.stdout(renderDryRun(result.report));
    return EXIT.ok;
  }
  ctx.stderr(
    `orchestrate: ${displayFile} is valid, but running recipes is not available in this build yet.\n` +
      `  hint: use --dry-run to see the expanded plan and a cost estimate without calling a model.\n`,
  );
  return EXIT.usage;
}

export const runCommand: CliCommand = {
  command: ['$0 <recipe>', 'run <recipe>'],
  describe: 'Run a recipe (--dry-run: validate, show the plan and a cost estimate)',
  builder: runOptions,
  run: runRecipe,
};
