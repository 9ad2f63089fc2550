// A dry run: the validated recipe, its expanded plan and the cost estimate, as one plain object
// that the CLI prints as a tree or as JSON. No model is called and nothing is written.
import { estimateRecipe, type RecipeEstimate } from './estimate.js';
import type { Budget, LoadedRecipe } from './loaded-recipe.js';
import { buildPlan, type RecipePlan } from './plan.js';
import type { RecipeProblem } from './problems.js';

export interface DryRunReport {
  recipe: {
    name: string;
    file: string;
    description?: string;
    model: string;
    provider: string;
    concurrency: number;
    budget: Budget;
    inputs: Record<string, unknown>;
    /** `mcpServers`: the MCP servers each agent gets (not started by a dry run). */
    agents: {
      name: string;
      model: string;
      provider: string;
      tools: string[];
      implicit: boolean;
      mcpServers?: string[];
    }[];
    taskCount: number;
  };
  plan: RecipePlan;
  estimate: RecipeEstimate;
  /** Plan and budget warnings together. */
  warnings: string[];
  /** Instances whose writes: overlap, and what the run does with them (service/write-overlaps.ts). */
  overlaps?: WriteOverlap[];
}

/** Two instances whose `writes:` overlap: run in parallel and merged by the merge train, or one after another. */
export interface WriteOverlap {
  a: string;
  b: string;
  how: 'parallel' | 'serialized';
}

export interface DryRunOptions {
  env?: Readonly<Record<string, string | undefined>>;
  /** How the recipe file is named in output and problems. */
  displayFile?: string;
}

export type DryRunResult = { ok: true; report: DryRunReport } | { ok: false; problems: RecipeProblem[] };

export function dryRun(recipe: LoadedRecipe, opts: DryRunOptions = {}): DryRunResult {
  const planned = buildPlan(recipe, opts);
  if (!planned.ok) return planned;
  const estimate = estimateRecipe(recipe, planned.plan, opts);
  const report: DryRunReport = {
    recipe: {
      name: recipe.name,
      file: opts.displayFile ?? recipe.file,
      model: recipe.model,
      provider: recipe.provider,
      concurrency: recipe.concurrency,
      budget: recipe.budget,
      inputs: recipe.inputValues,
      agents: Object.values(recipe.agents).map((a) => ({
        name: a.name,
        model: a.model,
        provider: a.provider,
        tools: a.tools,
        implicit: a.implicit,
        ...(a.mcpServers?.length ? { mcpServers: a.mcpServers.map((m) => m.name) } : {}),
      })),
      taskCount: recipe.tasks.length,
    },
    plan: planned.plan,
    estimate,
    warnings: [...planned.plan.warnings, ...estimate.warnings],
  };
  if (recipe.description !== undefined) report.recipe.description = recipe.description;
  return { ok: true, report };
}
