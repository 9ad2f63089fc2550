// An agent's token usage and cost, summed over calls and attempts, and the failure classes an
// attempt can end with. Shared by the run event log, the worker protocol and the worker threads,
// which load this without the run event schemas.
import { z } from 'zod';
import { RETRY_FAILURE_CLASSES } from '../recipe/failure-classes.js';

export const UsageSummarySchema = z.object({
  input: z.number(),
  output: z.number(),
  cacheRead: z.number(),
  cacheWrite: z.number(),
  totalTokens: z.number(),
  cost: z.number(),
  turns: z.number().optional(),
  /** $ prompt caching saved against uncached prices (ai/usage.ts cacheSavings); absent when nothing was cached. */
  cacheSaved: z.number().optional(),
  /** Some calls' token counts are estimates (the server reported none): the cost is approximate. */
  estimated: z.boolean().optional(),
});
export type UsageSummary = z.infer<typeof UsageSummarySchema>;

/** Every class an attempt can end with: those a recipe's `retries.on` may name, then the rest. */
export const FAILURE_CLASSES = [
  ...RETRY_FAILURE_CLASSES,
  'budget',
  'aborted',
  'output_invalid',
  // The workspace could not be measured or moved: a snapshot or diff that writes:, the patch or
  // landing depend on failed, or the repository was rewired (a .git file or commondir naming
  // another repository); in a distributed run, it could not travel to a worker or its patch does
  // not apply to the original workspace. Guards fail closed on it.
  'workspace',
  'patch_conflict',
  // A user cancelled the instance (run view, watch, `orchestrate cancel`): never retried by itself.
  'cancelled',
  // Distributed runs: a message for the instance in Redis did not verify with the cluster secret
  // (a forged result or patch); nothing of it was applied. Not retried by default.
  'untrusted',
] as const;
export const FailureClassSchema = z.enum(FAILURE_CLASSES);
export type FailureClass = z.infer<typeof FailureClassSchema>;

/**
 * Whose budget refused a model call: the run's, the task's, one instance's (a task budget per
 * instance), or a provider's (`providers: NAME: {budget}`: only that provider's agents stop).
 */
export const BUDGET_SCOPES = ['run', 'task', 'instance', 'provider'] as const;
export const BudgetScopeSchema = z.enum(BUDGET_SCOPES);
export type BudgetScope = z.infer<typeof BudgetScopeSchema>;

export function zeroUsage(): UsageSummary {
  return { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, totalTokens: 0, cost: 0, turns: 0 };
}

export function addUsageSummary(a: UsageSummary, b: UsageSummary): UsageSummary {
  return {
    input: a.input + b.input,
    output: a.output + b.output,
    cacheRead: a.cacheRead + b.cacheRead,
    cacheWrite: a.cacheWrite + b.cacheWrite,
    totalTokens: a.totalTokens + b.totalTokens,
    cost: a.cost + b.cost,
    turns: (a.turns ?? 0) + (b.turns ?? 0),
    ...(a.cacheSaved !== undefined || b.cacheSaved !== undefined
      ? { cacheSaved: (a.cacheSaved ?? 0) + (b.cacheSaved ?? 0) }
      : {}),
    ...(a.estimated || b.estimated ? { estimated: true } : {}),
  };
}

/**
 * What `reported` counted beyond what `received` already holds, field by field (never negative), or
 * undefined when no token field is missing: a worker's final usage against the usage its calls
 * reported over the port.
 */
export function usageGap(reported: UsageSummary, received: UsageSummary): UsageSummary | undefined {
  const tokens = ['input', 'output', 'cacheRead', 'cacheWrite', 'totalTokens'] as const;
  if (!tokens.some((f) => reported[f] > received[f])) return undefined;
  return {
    input: Math.max(0, reported.input - received.input),
    output: Math.max(0, reported.output - received.output),
    cacheRead: Math.max(0, reported.cacheRead - received.cacheRead),
    cacheWrite: Math.max(0, reported.cacheWrite - received.cacheWrite),
    totalTokens: Math.max(0, reported.totalTokens - received.totalTokens),
    cost: Math.max(0, reported.cost - received.cost),
  };
}

/** What one provider's calls spent: in total, and per model it served. */
export const ProviderSpendSchema = z.object({
  usage: UsageSummarySchema,
  models: z.record(z.string(), UsageSummarySchema),
});
export type ProviderSpend = z.infer<typeof ProviderSpendSchema>;

/** Spend per provider name (anthropic, scripted, or a name under the recipe's providers:). */
export type ProviderUsage = Record<string, ProviderSpend>;

/** Calls logged before call_usage named its provider. */
export const UNRECORDED_PROVIDER = '(not recorded)';

/**
 * Adds one model call (a call_usage event) to the per-provider spend. The fold of run.jsonl and
 * the live coordinator both add every call through here, so result.json, `show` and the report
 * agree; a call counts one turn unless its usage says otherwise.
 */
export function addProviderCall(
  acc: ProviderUsage,
  provider: string | undefined,
  model: string,
  usage: UsageSummary,
): void {
  const u = { ...usage, turns: usage.turns ?? 1 };
  const name = provider ?? UNRECORDED_PROVIDER;
  const p = acc[name] ?? { usage: zeroUsage(), models: {} };
  acc[name] = p;
  p.usage = addUsageSummary(p.usage, u);
  p.models[model] = addUsageSummary(p.models[model] ?? zeroUsage(), u);
}

/** A deep copy (a resumed run goes on from what its log spent). */
export function copyProviderUsage(from: ProviderUsage | undefined): ProviderUsage {
  const out: ProviderUsage = {};
  for (const [name, p] of Object.entries(from ?? {})) out[name] = { usage: { ...p.usage }, models: { ...p.models } };
  return out;
}
