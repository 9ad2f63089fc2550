// What a caller asks of a run or a resume, as typed data: the recipe (or run), its inputs, the
// overrides and the runs folder. `orchestrate <recipe>` / `resume` build one from their flags, the
// MCP server's run_recipe / resume tools from their arguments (and the web view from its form);
// the same request becomes the recipe's load options here, and the command line of a detached
// run (launch-run.ts) here too, so the two ways of starting a run cannot drift apart.
import type { LoadOptions, ProviderName } from '../recipe/index.js';
import type { ServiceEnv } from './dry-run.js';

/** The overrides a resume may change: the rest of the run stays as it was recorded. */
export interface ResumeOverrides {
  /** Task instances running at once. */
  concurrency?: number;
  /** The run's budget in US dollars (a total: the spend so far counts against it). */
  budgetUsd?: number;
  /** The run's budget in tokens, input + output (a total, like budgetUsd). */
  budgetTokens?: number;
}

/** The overrides of a new run: a resume's, plus the model and provider of every agent. */
export interface RunOverrides extends ResumeOverrides {
  model?: string;
  provider?: ProviderName;
}

/** A new run of a recipe file. */
export interface RunRequest extends RunOverrides {
  /** The recipe file, relative to the caller's working folder or absolute. */
  recipe: string;
  /** Input assignments `key=value`, in order (a list input takes a JSON array). */
  set?: readonly string[];
  /** Folder holding run folders (default `.orchestrate/runs` under the working folder). */
  runsDir?: string;
}

/** A resume of a run that stopped (interrupted, failed, partial or out of budget). */
export interface ResumeRequest extends ResumeOverrides {
  /** A run id, a unique prefix of one, or the path of a run folder. */
  run: string;
  /** Folder holding run folders (default `.orchestrate/runs` under the working folder). */
  runsDir?: string;
  /** Cancelled instances to run again (a resume keeps them cancelled otherwise). */
  retry?: readonly string[];
  /** Load the recipe and its files as they are now instead of the copies captured at the start. */
  reloadRecipe?: boolean;
}

/** The load options of a request, as `loadRecipe` takes them. */
export function loadOptionsOf(request: RunRequest, where: ServiceEnv): LoadOptions {
  return {
    cwd: where.cwd,
    env: where.env,
    set: [...(request.set ?? [])],
    ...(request.model !== undefined ? { model: request.model } : {}),
    ...(request.provider !== undefined ? { provider: request.provider } : {}),
    ...resumeOverridesOf(request),
  };
}

/** Only the overrides a resume may change, with the absent ones left out. */
export function resumeOverridesOf(o: ResumeOverrides): ResumeOverrides {
  return {
    ...(o.concurrency !== undefined ? { concurrency: o.concurrency } : {}),
    ...(o.budgetUsd !== undefined ? { budgetUsd: o.budgetUsd } : {}),
    ...(o.budgetTokens !== undefined ? { budgetTokens: o.budgetTokens } : {}),
  };
}

/** The overrides as the flags of `orchestrate run` / `resume` (cli/commands/run.ts declares them). */
export function overrideFlags(o: RunOverrides): string[] {
  const flags: string[] = [];
  if (o.model !== undefined) flags.push('--model', o.model);
  if (o.provider !== undefined) flags.push('--provider', o.provider);
  if (o.concurrency !== undefined) flags.push('--concurrency', String(o.concurrency));
  if (o.budgetUsd !== undefined) flags.push('--budget-usd', String(o.budgetUsd));
  if (o.budgetTokens !== undefined) flags.push('--budget-tokens', String(o.budgetTokens));
  return flags;
}

/** The arguments of `orchestrate run` for a request whose recipe file and runs folder are absolute. */
export function runCommandArgs(request: RunRequest & { runsDir: string }): string[] {
  return [
    'run',
    request.recipe,
    '--run-dir',
    request.runsDir,
    '--no-color',
    ...(request.set ?? []).flatMap((s) => ['--set', s]),
    ...overrideFlags(request),
  ];
}

/** The arguments of `orchestrate resume` for a request whose run is a run folder's absolute path. */
export function resumeCommandArgs(request: ResumeRequest): string[] {
  return [
    'resume',
    request.run,
    '--no-color',
    ...overrideFlags(request),
    ...(request.retry ?? []).flatMap((k) => ['--retry', k]),
    ...(request.reloadRecipe ? ['--reload-recipe'] : []),
  ];
}
