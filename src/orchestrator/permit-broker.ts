// Coordinator side of permits: every model request of every worker asks here first.
// The broker enforces requests-per-minute per model (SlidingWindowLimiter), the run and task
// budgets (BudgetLedger reservations), and pauses — not kills — everyone while a provider says
// rate-limited. Waiting requests are served first-come first-served. An optional gate may hold a
// request back before it queues (cache-warmup.ts: a fan-out's first call goes out alone).
import { BudgetLedger, type Spend } from './budget.js';
import { SlidingWindowLimiter } from './rate-limiter.js';
import type { UsageSummary } from '../run/usage-summary.js';

export interface PermitRequest {
  model: string;
  /** Budget scopes to check, e.g. ["run", "task:apply", "instance:apply-a"]. */
  scopes: string[];
  /** Spend reserved while the call runs; settled by usage(). */
  estimate: Spend;
  signal?: AbortSignal;
}

export type PermitOutcome =
  | { ok: true; slotId: number; waitedMs: number }
  | { ok: false; reason: string; budget: boolean };

/** Holds requests back before they queue, and hears how permits go (see cache-warmup.ts). */
export interface PermitGate {
  /** A promise to wait for before `req` queues, or undefined to queue at once. It must settle. */
  hold(req: PermitRequest): Promise<void> | undefined;
  /** How `req` was answered. */
  outcome(req: PermitRequest, outcome: PermitOutcome): void;
  /** The permit's response started (`started`), or the permit ended without one. */
  settled(slotId: number, started: boolean): void;
  close(): void;
  /** Whether it holds any request back right now. */
  holding?(): boolean;
}

interface Waiter {
  req: PermitRequest;
  since: number;
  resolve: (o: PermitOutcome) => void;
}

interface Grant {
  model: string;
  scopes: string[];
  limiterSlot?: number;
  reservation: number;
}

export interface PermitBrokerOptions {
  /** Requests per minute per model id; "*" applies to every model without its own entry. */
  rateLimits?: Record<string, number>;
  budget: BudgetLedger;
  windowMs?: number;
  marginMs?: number;
  now?: () => number;
  gate?: PermitGate;
}

export class PermitBroker {
  private readonly limiters = new Map<string, SlidingWindowLimiter>();
  private readonly waiters: Waiter[] = [];
  private readonly grants = new Map<number, Grant>();
  private nextGrant = 1;
  private timer: NodeJS.Timeout | undefined;
  private readonly now: () => number;
  readonly budget: BudgetLedger;

  constructor(private readonly opts: PermitBrokerOptions) {
    this.budget = opts.budget;
    this.now = opts.now ?? Date.now;
  }

  private limiterFor(model: string): SlidingWindowLimiter | undefined {
    let l = this.limiters.get(model);
    if (!l) {
      const limit = this.opts.rateLimits?.[model] ?? this.opts.rateLimits?.['*'];
      if (!limit) return undefined;
      l = new SlidingWindowLimiter({ limit, windowMs: this.opts.windowMs, marginMs: this.opts.marginMs, now: this.now });
      this.limiters.set(model, l);
    }
    return l;
  }

  request(req: PermitRequest): Promise<PermitOutcome> {
    const gate = this.opts.gate;
    if (!gate) return this.enqueue(req);
    const held = gate.hold(req);
    const answered = held ? held.then(() => this.enqueue(req)) : this.enqueue(req);
    return answered.then((o) => {
      gate.outcome(req, o);
      return o;
    });
  }

  private enqueue(req: PermitRequest): Promise<PermitOutcome> {
    return new Promise((resolve) => {
      if (req.signal?.aborted) return resolve({ ok: false, reason: 'aborted', budget: false });
      const onAbort = () => {
        const i = this.waiters.indexOf(w);
        if (i >= 0) {
          this.waiters.splice(i, 1);
          resolve({ ok: false, reason: 'aborted', budget: false });
        }
      };
      // An answered waiter drops its listener: the signal lives as long as the agent, and one
      // listener left per model call passed node's limit of 10 (a warning on the terminal).
      const w: Waiter = {
        req,
        since: this.now(),
        resolve: (o) => {
          req.signal?.removeEventListener('abort', onAbort);
          resolve(o);
        },
      };
      req.signal?.addEventListener('abort', onAbort, { once: true });
      this.waiters.push(w);
      this.pump();
    });
  }

  /** Number of requests waiting for a permit. */
  get waiting(): number {
    return this.waiters.length;
  }

  /** Why a request that was not granted at once is waiting (for permit_wait events). */
  waitReason(): string {
    if (this.opts.gate?.holding?.()) return 'the prompt cache is warmed by the fan-out\'s first request';
    return this.waiters.length > 1 ? `${this.waiters.length} requests waiting for permits` : 'rate limit';
  }

  /** The permitted request's response started (or failed): date its rate-limit slot. */
  started(slotId: number, at?: number): void {
    this.opts.gate?.settled(slotId, true);
    const g = this.grants.get(slotId);
    if (g?.limiterSlot !== undefined) this.limiterFor(g.model)?.started(g.limiterSlot, at);
    this.pump();
  }

  /** Settles a permit with its real usage. */
  usage(slotId: number, usage: UsageSummary): void {
    const g = this.grants.get(slotId);
    if (!g) return;
    this.opts.gate?.settled(slotId, false);
    this.grants.delete(slotId);
    this.budget.release(g.reservation);
    this.budget.charge(g.scopes, { usd: usage.cost, tokens: usage.totalTokens });
    // A request that never reported its start still frees its slot one window from now.
    if (g.limiterSlot !== undefined) this.limiterFor(g.model)?.started(g.limiterSlot);
    this.pump();
  }

  /** Drops a permit without usage (the call failed before any response). */
  release(slotId: number): void {
    const g = this.grants.get(slotId);
    if (!g) return;
    this.opts.gate?.settled(slotId, false);
    this.grants.delete(slotId);
    this.budget.release(g.reservation);
    if (g.limiterSlot !== undefined) this.limiterFor(g.model)?.started(g.limiterSlot);
    this.pump();
  }

  /** A provider said rate-limited: hold every request for that model for delayMs. */
  pause(model: string, delayMs: number): void {
    const l = this.limiterFor(model);
    if (l) l.pause(delayMs);
    else {
      // No configured limit for this model: create one that only carries the pause.
      const pausable = new SlidingWindowLimiter({ limit: Number.MAX_SAFE_INTEGER, now: this.now });
      pausable.pause(delayMs);
      this.limiters.set(model, pausable);
    }
    this.pump();
  }

  /** Refuses every waiting request (run stopping). */
  drain(reason: string): void {
    this.opts.gate?.close();
    for (const w of this.waiters.splice(0)) w.resolve({ ok: false, reason, budget: false });
  }

  close(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    this.drain('run stopped');
  }

  private pump(): void {
    if (this.timer) {
      clearTimeout(this.timer);
      this.timer = undefined;
    }
    let soonest = Infinity;
    for (let i = 0; i < this.waiters.length; ) {
      const w = this.waiters[i]!;
      const verdict = this.budget.check(w.req.scopes, w.req.estimate);
      if (!verdict.ok) {
        this.waiters.splice(i, 1);
        w.resolve({ ok: false, reason: verdict.reason, budget: true });
        continue;
      }
      const limiter = this.limiterFor(w.req.model);
      const wait = limiter ? limiter.waitTime() : 0;
      if (wait > 0) {
        soonest = Math.min(soonest, wait);
        i++;
        continue;
      }
      const reservation = this.budget.reserve(w.req.scopes, w.req.estimate);
      if (!reservation.ok) {
        this.waiters.splice(i, 1);
        w.resolve({ ok: false, reason: reservation.reason, budget: true });
        continue;
      }
      const limiterSlot = limiter?.tryAcquire();
      const slotId = this.nextGrant++;
      this.grants.set(slotId, { model: w.req.model, scopes: w.req.scopes, limiterSlot, reservation: reservation.id });
      this.waiters.splice(i, 1);
      w.resolve({ ok: true, slotId, waitedMs: this.now() - w.since });
    }
    // Infinity means "until an in-flight response starts", which calls pump() again.
    if (this.waiters.length > 0 && Number.isFinite(soonest)) {
      this.timer = setTimeout(() => this.pump(), Math.max(1, soonest));
      this.timer.unref?.();
    }
  }
}
