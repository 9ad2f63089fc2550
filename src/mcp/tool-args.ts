// What several tools share: their common arguments (zod, so every tool describes them alike),
// where a run is looked up, and how recipe arguments become the CLI's load options and flags.
import { resolve } from 'node:path';
import { z } from 'zod';
import { defaultRunsDir } from '../display/find-run.js';
import { formatProblem, PROVIDERS, type LoadOptions, type ProviderName, type RecipeProblem } from '../recipe/index.js';
import { BUILTIN_PROVIDERS } from '../ai/provider-config.js';
import { locateRun as locateRunIn } from '../service/locate-run.js';
import { loadOptionsOf as loadOptionsOfRequest, type RunOverrides, type RunRequest } from '../service/run-request.js';
import { ToolError, type ServerContext } from './tool-table.js';

const PROVIDER_NAME_PATTERN = /^[A-Za-z0-9_][A-Za-z0-9_.:-]*$/;

export const runArg = z
  .string()
  .min(1)
  .describe('The run: its id (as run_recipe returned it), a unique prefix of one, or the path of its run folder');
export const runDirArg = z
  .string()
  .min(1)
  .optional()
  .describe(
    "Folder holding run records (default: the server's --run-dir, else .orchestrate/runs in the server's working folder)",
  );
export const instanceArg = z
  .string()
  .min(1)
  .describe('Instance key as run_status lists it (e.g. fix.alpha, or build@planner for a member of a pair)');

export const recipeArgs = {
  recipe: z
    .string()
    .min(1)
    .describe("Path of the recipe YAML file (relative to the server's working folder, or absolute)"),
  inputs: z
    .record(z.string(), z.union([z.string(), z.number(), z.boolean(), z.array(z.string())]))
    .optional()
    .describe('Values of the recipe\'s inputs, e.g. {"feature": "a titleCase function"} (the CLI\'s --set key=value)'),
};

export const overrideArgs = {
  model: z.string().min(1).optional().describe('Model for every agent (overrides the recipe)'),
  // Any provider the recipe can name (built in, a preset, or under its providers:); the recipe's
  // load says which names exist, exactly as for the CLI's --provider. The pattern only keeps a
  // value from reading as a flag of the `orchestrate run` it becomes.
  provider: z
    .string()
    .regex(PROVIDER_NAME_PATTERN, 'a provider name: letters, digits, _ . : -, not starting with -')
    .optional()
    .describe(
      `${PROVIDERS.join(', ')} (offline: every agent replays its script file), an OpenAI-compatible preset (${BUILTIN_PROVIDERS.map((p) => p.name).join(', ')}), or a name under the recipe's providers:`,
    ),
  concurrency: z.number().int().min(1).optional().describe('Task instances running at once'),
  budget_usd: z.number().min(0).optional().describe("Run budget in US dollars (replaces the recipe's budget.usd)"),
  budget_tokens: z
    .number()
    .int()
    .min(0)
    .optional()
    .describe("Run budget in tokens, input + output (replaces the recipe's budget.tokens)"),
};

type Inputs = Record<string, string | number | boolean | string[]> | undefined;
type Overrides = {
  model?: string;
  provider?: ProviderName;
  concurrency?: number;
  budget_usd?: number;
  budget_tokens?: number;
};

/** Inputs as the CLI's `--set key=value` assignments (a list as JSON, which a list input accepts). */
export function setAssignments(inputs: Inputs): string[] {
  return Object.entries(inputs ?? {}).map(([k, v]) => `${k}=${Array.isArray(v) ? JSON.stringify(v) : String(v)}`);
}

/** A tool's override arguments (snake_case) as the service's overrides, absent ones left out. */
export function overridesOf(args: Overrides): RunOverrides {
  return {
    ...(args.model !== undefined ? { model: args.model } : {}),
    ...(args.provider !== undefined ? { provider: args.provider } : {}),
    ...(args.concurrency !== undefined ? { concurrency: args.concurrency } : {}),
    ...(args.budget_usd !== undefined ? { budgetUsd: args.budget_usd } : {}),
    ...(args.budget_tokens !== undefined ? { budgetTokens: args.budget_tokens } : {}),
  };
}

/** A tool's recipe arguments as the service's run request (recipe path as given, relative to the server's folder). */
export function runRequestOf(args: { recipe: string; inputs?: Inputs } & Overrides): RunRequest {
  return { recipe: args.recipe, set: setAssignments(args.inputs), ...overridesOf(args) };
}

/** The load options of a tool's recipe arguments, as a run of them would load the recipe. */
export function loadOptionsOf(args: { recipe: string; inputs?: Inputs } & Overrides, ctx: ServerContext): LoadOptions {
  return loadOptionsOfRequest(runRequestOf(args), ctx);
}

/** The runs folder a tool works in (absolute). */
export function runsDirOf(ctx: ServerContext, runDir: string | undefined): string {
  if (runDir !== undefined) return resolve(ctx.cwd, runDir);
  return ctx.runsDir ?? defaultRunsDir(ctx.cwd);
}

/** The run folder a tool argument names; a ToolError that lists recent runs when none matches. */
export function locateRun(ctx: ServerContext, run: string, runDir: string | undefined): string {
  const found = locateRunIn(runsDirOf(ctx, runDir), run, ctx.cwd, 'list_runs');
  if (!found.ok) throw new ToolError(found.message);
  return found.dir;
}

/** Recipe problems as the CLI prints them: file:line:col: message, with hints. */
export function problemsText(problems: readonly RecipeProblem[]): string {
  const errors = problems.filter((p) => p.severity !== 'warning').length;
  return `${problems.map((p) => formatProblem(p)).join('\n')}\n${errors === 1 ? '1 problem' : `${errors} problems`} found.`;
}
