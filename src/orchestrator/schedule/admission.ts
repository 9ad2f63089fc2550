// Budget admission: whether a ready instance may start without the run's budget being overrun
// by what the instances already running may still spend. Each instance reserves a slice (its
// task's own budget, or the estimate of one model call); the scheduler (scheduler.ts) asks here
// after its own checks (concurrency, max_parallel, write scopes) pass. Also the per-call estimate
// the permit broker reserves before each model call: the last call's size grown a little, or a
// first-call default capped to a share of the run's token budget.
import { lookupModelPrice, type LoadedAgent, type LoadedRecipe, type LoadedTask } from '../../recipe/index.js';
import type { BudgetLedger, Spend } from './budget.js';
import type { CallEstimate } from '../pacing/learned-limits.js';
import type { StopReason } from '../control/control-decisions.js';
import { ORCHESTRATOR_DEFAULTS } from '../defaults.js';
import type { Admission as Verdict, SchedulableInstance } from './scheduler.js';

/** The agent that does a task's work (a pair's worker), if it names one. */
export function agentOf(recipe: LoadedRecipe, t: LoadedTask): LoadedAgent | undefined {
  const name = t.agent ?? t.pair?.worker;
  return name ? recipe.agents[name] : undefined;
}

export interface AdmissionOptions {
  recipe: LoadedRecipe;
  ledger: BudgetLedger;
  /** The task of a task id. */
  taskOf(id: string): LoadedTask;
  /** Why the run stops, if it does: nothing new is admitted then. */
  stopping(): StopReason | undefined;
}

export class Admission {
  /** Tokens of each agent's last call (its next call is estimated from it). */
  private readonly lastCallTokens = new Map<string, number>();

  constructor(private readonly opts: AdmissionOptions) {}

  /** The scheduler's admission check: wait while the budget is reserved by running instances; refuse when nothing runs. */
  admit(s: SchedulableInstance, running: readonly SchedulableInstance[]): Verdict {
    const stopping = this.opts.stopping();
    if (stopping) return { wait: `the run is stopping (${stopping})` };
    const lim = this.opts.recipe.budget;
    if (lim.usd === undefined && lim.tokens === undefined) return undefined;
    const need = this.sliceOf(this.opts.taskOf(s.task));
    // Every running instance may still spend the rest of its slice.
    for (const r of running) {
      const slice = this.sliceOf(this.opts.taskOf(r.task));
      const spent = this.opts.ledger.spend(`instance:${r.id}`);
      need.usd += Math.max(0, slice.usd - spent.usd);
      need.tokens += Math.max(0, slice.tokens - spent.tokens);
    }
    const v = this.opts.ledger.check(['run'], need);
    if (v.ok) return undefined;
    if (running.length > 0) return { wait: `budget reserved by running instances: ${v.reason}` };
    return { refuse: v.reason };
  }

  /**
   * Spend to reserve for the next model call of agent `key` (undefined: a first call) of a task.
   * `call`: what its worker measured of the request; its input is certain to be spent, so the
   * reservation is never less (a budget is not passed by a call whose input alone does not fit).
   */
  callEstimate(key: string | undefined, task: LoadedTask, model?: string, call?: CallEstimate): Spend {
    const recipe = this.opts.recipe;
    const agent = agentOf(recipe, task);
    const last = key ? this.lastCallTokens.get(key) : undefined;
    let tokens =
      last !== undefined
        ? Math.ceil(last * ORCHESTRATOR_DEFAULTS.callEstimateGrowth)
        : ORCHESTRATOR_DEFAULTS.callEstimateTokens;
    const provider = agent?.provider ?? recipe.provider;
    // A first call never reserves more than a small share of the run's token budget, nor of its provider's.
    for (const cap of [recipe.budget.tokens, recipe.providerLimits[provider]?.budget.tokens])
      if (last === undefined && cap !== undefined) tokens = Math.min(tokens, Math.max(1, Math.floor(cap / 20)));
    const price = lookupModelPrice(model ?? agent?.model ?? recipe.model, provider, recipe.models, recipe.providers);
    const input = call ? call.uncachedInput + call.cachedInput : 0;
    const inputUsd = call ? (call.uncachedInput * price.input + call.cachedInput * price.cacheRead) / 1e6 : 0;
    return { tokens: Math.max(tokens, input), usd: Math.max((tokens * price.input) / 1e6, inputUsd) };
  }

  /** A call of agent `key` used `tokens`: its next call is estimated from that. */
  noteCall(key: string, tokens: number): void {
    this.lastCallTokens.set(key, tokens);
  }

  /** What an instance of `t` may spend: its task's budget, or one first call. */
  private sliceOf(t: LoadedTask): Spend {
    if (t.budget.usd !== undefined || t.budget.tokens !== undefined)
      return { usd: t.budget.usd ?? 0, tokens: t.budget.tokens ?? 0 };
    return this.callEstimate(undefined, t);
  }
}
