// Run and task budgets with reservations.
//
// Spend reported after the fact is not enough to hold a cap when many agents call at once:
// every granted model call reserves an estimate first, and the estimate is settled against the
// real usage when it arrives. A call is refused when spent + reserved would pass the cap.
// Scopes are "run", "task:<id>", "instance:<id>" and "provider:<name>"; a refusal names its kind
// (BudgetScope), so no one has to read it back out of the message.
import type { BudgetScope } from '../../run/usage-summary.js';

export interface BudgetLimits {
  usd?: number;
  tokens?: number;
}

export interface Spend {
  usd: number;
  tokens: number;
}

interface Reservation {
  scope: string;
  usd: number;
  tokens: number;
}

export type BudgetVerdict = { ok: true } | { ok: false; reason: string; scope: BudgetScope };

/** The kind of a ledger scope: "run", "task:<id>", "instance:<id>" or "provider:<name>". */
export function budgetScopeOf(scope: string): BudgetScope {
  return scope.startsWith('task:')
    ? 'task'
    : scope.startsWith('instance:')
      ? 'instance'
      : scope.startsWith('provider:')
        ? 'provider'
        : 'run';
}

export class BudgetLedger {
  private readonly spent = new Map<string, Spend>();
  private readonly limits = new Map<string, BudgetLimits>();
  private readonly reservations = new Map<number, Reservation[]>();
  /** The sum of the open reservations per scope, kept as they come and go: a check costs the same with 200 calls in flight as with one. */
  private readonly reservedBy = new Map<string, Spend & { count: number }>();
  private nextId = 1;

  constructor(runLimits: BudgetLimits = {}) {
    this.limits.set('run', runLimits);
  }

  setLimits(scope: string, limits: BudgetLimits | undefined): void {
    if (limits && (limits.usd !== undefined || limits.tokens !== undefined)) this.limits.set(scope, limits);
  }

  spend(scope: string): Spend {
    return { ...(this.spent.get(scope) ?? { usd: 0, tokens: 0 }) };
  }

  limitsOf(scope: string): BudgetLimits | undefined {
    return this.limits.get(scope);
  }

  private reserved(scope: string): Spend {
    const r = this.reservedBy.get(scope);
    return r ? { usd: r.usd, tokens: r.tokens } : { usd: 0, tokens: 0 };
  }

  /** Whether any scope has a cap (without one no request is ever refused, and nothing needs a sweep). */
  get limited(): boolean {
    for (const lim of this.limits.values()) if (lim.usd !== undefined || lim.tokens !== undefined) return true;
    return false;
  }

  /** Whether `estimate` more spend fits every scope (run first, then the task's). */
  check(scopes: string[], estimate: Spend): BudgetVerdict {
    for (const scope of scopes) {
      const lim = this.limits.get(scope);
      if (!lim || (lim.usd === undefined && lim.tokens === undefined)) continue;
      const s = this.spend(scope);
      const r = this.reserved(scope);
      const label =
        scope === 'run'
          ? 'run budget'
          : scope.startsWith('provider:')
            ? `budget of provider ${scope.slice('provider:'.length)}`
            : `budget of ${scope}`;
      if (lim.usd !== undefined && s.usd + r.usd + estimate.usd > lim.usd + 1e-12)
        return {
          ok: false,
          reason: `${label} of $${lim.usd} is spent ($${s.usd.toFixed(4)} used, $${r.usd.toFixed(4)} reserved)`,
          scope: budgetScopeOf(scope),
        };
      if (lim.tokens !== undefined && s.tokens + r.tokens + estimate.tokens > lim.tokens)
        return {
          ok: false,
          reason: `${label} of ${lim.tokens} tokens is spent (${s.tokens} used, ${r.tokens} reserved)`,
          scope: budgetScopeOf(scope),
        };
    }
    return { ok: true };
  }

  /** Reserves `estimate` in every scope if it fits; returns a reservation id. */
  reserve(
    scopes: string[],
    estimate: Spend,
  ): { ok: true; id: number } | { ok: false; reason: string; scope: BudgetScope } {
    const v = this.check(scopes, estimate);
    if (!v.ok) return v;
    const id = this.nextId++;
    const list = scopes.map((scope) => ({ scope, ...estimate }));
    this.reservations.set(id, list);
    for (const x of list) {
      const r = this.reservedBy.get(x.scope) ?? { usd: 0, tokens: 0, count: 0 };
      r.usd += x.usd;
      r.tokens += x.tokens;
      r.count++;
      this.reservedBy.set(x.scope, r);
    }
    return { ok: true, id };
  }

  /** Drops a reservation (the call finished or never happened). */
  release(id: number): void {
    const list = this.reservations.get(id);
    if (!list) return;
    this.reservations.delete(id);
    for (const x of list) {
      const r = this.reservedBy.get(x.scope);
      if (!r) continue;
      // The last one out leaves an exact zero (no rounding left over from the sums).
      if (--r.count === 0) this.reservedBy.delete(x.scope);
      else {
        r.usd -= x.usd;
        r.tokens -= x.tokens;
      }
    }
  }

  /** Records real spend in every scope. */
  charge(scopes: string[], actual: Spend): void {
    for (const scope of scopes) {
      const s = this.spent.get(scope) ?? { usd: 0, tokens: 0 };
      s.usd += actual.usd;
      s.tokens += actual.tokens;
      this.spent.set(scope, s);
    }
  }

  /** True when a scope's cap is reached by spend alone (nothing more can run there). */
  exhausted(scope: string): boolean {
    const lim = this.limits.get(scope);
    if (!lim) return false;
    const s = this.spend(scope);
    return (lim.usd !== undefined && s.usd >= lim.usd) || (lim.tokens !== undefined && s.tokens >= lim.tokens);
  }
}
