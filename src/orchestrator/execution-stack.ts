// What runs agents under the recipe's limits, built in one place for every kind of run: the run's
// coordinator, and the re-runs outside it (`publish --rebase`, follow-ups). The budget ledger
// (the run's budget, each provider's own budget with what it spent before), the admission that
// checks an instance's share of it, the permit broker that paces calls (rate limits per model and
// per provider) and, for agents that run on this machine, the worker-thread pool. Built alike, a
// re-run obeys the same limits as the run it belongs to.
import type { LoadedRecipe, LoadedTask } from '../recipe/index.js';
import type { RunState } from '../run/run-fold.js';
import { Admission } from './schedule/admission.js';
import { BudgetLedger } from './schedule/budget.js';
import type { StopReason } from './control/control-decisions.js';
import { PermitBroker, providerScope, type PermitBrokerOptions } from './pacing/permit-broker.js';
import { ThreadPoolExecutor, type ThreadPoolOptions } from './execution/thread-pool-executor.js';

export interface ExecutionStackInput {
  recipe: LoadedRecipe;
  /** The run's log folded (a resume, a re-run of a finished run): each provider's spend counts against its budget. */
  replay?: RunState;
  /** The task of a task id. */
  taskOf(id: string): LoadedTask;
  /** Why the run stops, if it does: nothing new is admitted then. */
  stopping(): StopReason | undefined;
  /** The broker's rate window and call gate (the coordinator's cache warm-up). */
  windowMs?: PermitBrokerOptions['windowMs'];
  gate?: PermitBrokerOptions['gate'];
  /** The limits a resumed run learned before, and who keeps what is learned now (the coordinator's run files). */
  learnedBefore?: PermitBrokerOptions['learnedBefore'];
  onLearned?: PermitBrokerOptions['onLearned'];
}

export interface ExecutionStack {
  ledger: BudgetLedger;
  admission: Admission;
  broker: PermitBroker;
  /** The worker threads agents run on here (not built for an external executor, e.g. `--redis`). */
  threadPool(o: Omit<ThreadPoolOptions, 'pairSlots'> & { pairs: boolean }): ThreadPoolExecutor;
}

export function executionStack(i: ExecutionStackInput): ExecutionStack {
  const { recipe } = i;
  const ledger = new BudgetLedger(recipe.budget);
  const admission = new Admission({ recipe, ledger, taskOf: (id) => i.taskOf(id), stopping: () => i.stopping() });
  const rateLimits: Record<string, number> = { ...recipe.rateLimit.perModel };
  if (recipe.rateLimit.default !== undefined) rateLimits['*'] = recipe.rateLimit.default;
  // providers: NAME: {rate_limit, budget}: a provider's own limits; a resumed run's budget counts what its calls spent.
  const providerRateLimits: Record<string, { total?: number; perModel: Record<string, number> }> = {};
  for (const [name, limits] of Object.entries(recipe.providerLimits)) {
    providerRateLimits[name] = limits.rateLimit;
    ledger.setLimits(providerScope(name), limits.budget);
    const spent = i.replay?.providers[name]?.usage;
    if (spent) ledger.charge([providerScope(name)], { usd: spent.cost, tokens: spent.totalTokens });
  }
  // pacing: fixed (the recipe's, or a provider's own): that provider's headers are not learned from.
  const adaptiveBy: Record<string, boolean> = {};
  for (const [name, limits] of Object.entries(recipe.providerLimits))
    if (limits.pacing) adaptiveBy[name] = limits.pacing === 'adaptive';
  // The scripted model sends no rate-limit headers: a first call held alone to learn them would
  // only hold the other agents back (and log a permit wait for each).
  adaptiveBy.scripted ??= false;
  const broker = new PermitBroker({
    rateLimits,
    providerRateLimits,
    adaptive: { default: recipe.pacing !== 'fixed', providers: adaptiveBy },
    budget: ledger,
    ...(i.windowMs !== undefined ? { windowMs: i.windowMs } : {}),
    ...(i.gate ? { gate: i.gate } : {}),
    ...(i.learnedBefore ? { learnedBefore: i.learnedBefore } : {}),
    ...(i.onLearned ? { onLearned: i.onLearned } : {}),
  });
  const threadPool: ExecutionStack['threadPool'] = ({ pairs, ...o }) =>
    // A pair instance needs a second agent slot: one per instance that may run at once.
    new ThreadPoolExecutor({ ...o, pairSlots: pairs ? o.concurrency : 0 });
  return { ledger, admission, broker, threadPool };
}
