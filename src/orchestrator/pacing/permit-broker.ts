// Coordinator side of permits: every model request of every worker asks here first.
// The broker enforces requests-per-minute per model and per provider (SlidingWindowLimiter), the
// run, task and provider budgets (BudgetLedger reservations), and pauses — not kills — everyone
// while a provider says rate-limited. It also paces by the limits the providers state in their
// response headers (learned-limits.ts: a token bucket per limit, admitting a call only when its
// estimated input and max_tokens fit; a declared rate_limit stays an upper bound). Waiting requests
// are served by priority (calls that unblock the most waiting work first), then first-come
// first-served. An optional gate may hold a request back before it queues (cache-warmup.ts: a
// fan-out's first call goes out alone).
import PQueue from 'p-queue';
import type { RateLimitSnapshot } from '../../ai/rate-limit-headers.js';
import type { BudgetLedger, Spend } from '../schedule/budget.js';
import { type CallEstimate, type LearnedLimitRecord, LearnedLimits, type LimitReservation } from './learned-limits.js';
import { SlidingWindowLimiter } from './rate-limiter.js';
import type { BudgetScope, UsageSummary } from '../../run/usage-summary.js';

export interface PermitRequest {
  model: string;
  /** The provider serving the call (its own rate limit and budget apply; undefined in old workers). */
  provider?: string;
  /** Budget scopes to check, e.g. ["run", "task:apply", "instance:apply-a"]. */
  scopes: string[];
  /** Spend reserved while the call runs; settled by usage(). */
  estimate: Spend;
  /** What the call will take of the provider's limits (input, max_tokens); absent in old workers. */
  call?: CallEstimate;
  /** The short hash of the API key its last response was for (limits are per key). */
  keyHash?: string;
  /** Higher goes first while requests wait (call-priority.ts); default 0. */
  priority?: number;
  signal?: AbortSignal;
}

/** A refusal names the budget that refused (`budget`), or has none when it was not the budget (aborted, drained). */
export type PermitOutcome =
  | { ok: true; slotId: number; waitedMs: number }
  | { ok: false; reason: string; budget?: BudgetScope };

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
  /** Ends the request unanswered: its reason is the outcome (aborted, drained, over budget). */
  refuse: AbortController;
}

interface Grant {
  model: string;
  provider?: string;
  providerSlot?: number;
  scopes: string[];
  limiterSlot?: number;
  reservation: number;
  /** What it took of the learned limits (undefined: none learned yet). */
  limits?: LimitReservation;
  /** A response arrived (its headers were heard). */
  heard?: boolean;
}

export interface PermitBrokerOptions {
  /** Requests per minute per model id; "*" applies to every model without its own entry. */
  rateLimits?: Record<string, number>;
  /**
   * Per provider name (`providers: NAME: {rate_limit}`): `total` requests per minute to the
   * provider, all its models together; `perModel` per model on it (instead of rateLimits').
   */
  providerRateLimits?: Record<string, { total?: number; perModel: Record<string, number> }>;
  budget: BudgetLedger;
  windowMs?: number;
  marginMs?: number;
  now?: () => number;
  gate?: PermitGate;
  /**
   * Pace by the limits providers state in their headers (default true). Per provider (the recipe's
   * `pacing:`): `default` for every provider not named, and for the calls of workers that name none.
   */
  adaptive?: boolean | { default: boolean; providers: Record<string, boolean> };
  /** The window of the learned limits (default 60 s, as the providers state them; benches scale it). */
  learnedWindowMs?: number;
  /** A resumed run's learned limits, and how long since its last event (LearnedLimits.restore). */
  learnedBefore?: { records: readonly LearnedLimitRecord[]; idleMs: number };
  /** Told when a limit is learned or changes (the run folder keeps them for a resume). */
  onLearned?: () => void;
}

const NO_CALL_ESTIMATE: CallEstimate = { uncachedInput: 0, cachedInput: 0, maxOutput: 0 };

/**
 * Requests of one model are served first-come first-served by a p-queue of concurrency 1, one per
 * model, so a rate-limited model never holds another model's requests up. The request at the head
 * of a queue waits there until the model's limiter has a slot and no pause is on; the queue's own
 * pause is the provider's "rate-limited, wait" (pause()). Budget is checked for every waiting
 * request whenever spend changes: one that can no longer fit is refused at once, wherever it waits.
 */
export class PermitBroker {
  private readonly limiters = new Map<string, SlidingWindowLimiter>();
  private readonly queues = new Map<string, PQueue>();
  private readonly pauseTimers = new Map<string, { until: number; timer: NodeJS.Timeout }>();
  /** Every request queued and not yet answered, in arrival order (budget sweeps, waiting count). */
  private readonly waiters = new Set<Waiter>();
  /** Wakes the requests at the heads of the queues to look again (a slot freed, a pause ended). */
  private wakers = new Set<() => void>();
  private readonly grants = new Map<number, Grant>();
  private nextGrant = 1;
  private readonly now: () => number;
  readonly budget: BudgetLedger;
  /** The providers' limits learned from response headers; shared by every thread and remote worker of the run. */
  readonly learned: LearnedLimits | undefined;

  constructor(private readonly opts: PermitBrokerOptions) {
    this.budget = opts.budget;
    this.now = opts.now ?? Date.now;
    if (opts.adaptive !== false) {
      this.learned = new LearnedLimits({ now: this.now, windowMs: opts.learnedWindowMs, onChange: opts.onLearned });
      if (opts.learnedBefore) this.learned.restore(opts.learnedBefore.records, opts.learnedBefore.idleMs);
    }
  }

  /** The learned limits a call on `provider` is paced by: none where its pacing is fixed. */
  private learnedFor(provider: string | undefined): LearnedLimits | undefined {
    const a = this.opts.adaptive;
    if (typeof a !== 'object') return this.learned;
    return (provider !== undefined ? (a.providers[provider] ?? a.default) : a.default) ? this.learned : undefined;
  }

  private limiter(key: string, limit: number | undefined): SlidingWindowLimiter | undefined {
    let l = this.limiters.get(key);
    if (!l) {
      if (!limit) return undefined;
      l = new SlidingWindowLimiter({
        limit,
        windowMs: this.opts.windowMs,
        marginMs: this.opts.marginMs,
        now: this.now,
      });
      this.limiters.set(key, l);
    }
    return l;
  }

  /** The model's limiter: its provider's per-model limit first, then the recipe's rate_limit. */
  private limiterFor(model: string, provider?: string): SlidingWindowLimiter | undefined {
    const own = provider === undefined ? undefined : this.opts.providerRateLimits?.[provider]?.perModel[model];
    if (own !== undefined) return this.limiter(`model:${provider}\n${model}`, own);
    return this.limiter(`model:${model}`, this.opts.rateLimits?.[model] ?? this.opts.rateLimits?.['*']);
  }

  /** The provider's limiter for all its models together, if it has one. */
  private providerLimiterFor(provider: string | undefined): SlidingWindowLimiter | undefined {
    if (provider === undefined) return undefined;
    return this.limiter(`provider:${provider}`, this.opts.providerRateLimits?.[provider]?.total);
  }

  /** A request's budget scopes: its own, and its provider's when that has a budget. */
  scopesOf(req: Pick<PermitRequest, 'scopes' | 'provider'>): string[] {
    const scope = req.provider === undefined ? undefined : providerScope(req.provider);
    return scope !== undefined && this.budget.limitsOf(scope) ? [...req.scopes, scope] : req.scopes;
  }

  /** One queue per model on a provider: the same model id on two providers is two queues. */
  private queueFor(model: string, provider?: string): PQueue {
    const key = provider === undefined ? model : `${provider}\n${model}`;
    let q = this.queues.get(key);
    if (!q) {
      q = new PQueue({ concurrency: 1 });
      this.queues.set(key, q);
    }
    return q;
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

  private async enqueue(req: PermitRequest): Promise<PermitOutcome> {
    if (req.signal?.aborted) return ABORTED;
    const w: Waiter = { req, since: this.now(), refuse: new AbortController() };
    // Refused at once when it cannot fit the budget even now (as it would be at the head).
    const verdict = this.budget.check(this.scopesOf(req), req.estimate);
    if (!verdict.ok) return { ok: false, reason: verdict.reason, budget: verdict.scope };
    // The agent's signal lives as long as the agent: its listener goes when the request is answered
    // (one left per model call passed node's limit of 10, a warning on the terminal).
    const onAbort = (): void => w.refuse.abort(ABORTED);
    req.signal?.addEventListener('abort', onAbort, { once: true });
    this.waiters.add(w);
    try {
      return await this.queueFor(req.model, req.provider).add(() => this.grantWhenFree(w), {
        signal: w.refuse.signal,
        priority: req.priority ?? 0,
      });
    } catch (err) {
      if (isOutcome(err)) return err;
      throw err;
    } finally {
      req.signal?.removeEventListener('abort', onAbort);
      this.waiters.delete(w);
    }
  }

  /** Runs at the head of the model's queue: waits for a rate-limit slot, then grants. */
  private async grantWhenFree(w: Waiter): Promise<PermitOutcome> {
    const { req } = w;
    const signal = w.refuse.signal;
    const scopes = this.scopesOf(req);
    for (;;) {
      if (signal.aborted) return signal.reason as PermitOutcome;
      const verdict = this.budget.check(scopes, req.estimate);
      if (!verdict.ok) return { ok: false, reason: verdict.reason, budget: verdict.scope };
      const limiter = this.limiterFor(req.model, req.provider);
      const providerLimiter = this.providerLimiterFor(req.provider);
      const call = req.call ?? NO_CALL_ESTIMATE;
      const wait = this.queueFor(req.model, req.provider).isPaused
        ? Infinity
        : Math.max(
            limiter?.waitTime() ?? 0,
            providerLimiter?.waitTime() ?? 0,
            this.learnedFor(req.provider)?.waitTime(req.model, req.provider, call, req.keyHash) ?? 0,
          );
      if (wait <= 0) {
        const reservation = this.budget.reserve(scopes, req.estimate);
        if (!reservation.ok) return { ok: false, reason: reservation.reason, budget: reservation.scope };
        // Only a worker that sends its estimate reports the headers: only its call may probe.
        const limits = this.learnedFor(req.provider)?.reserve(
          req.model,
          req.provider,
          call,
          req.keyHash,
          req.call !== undefined,
        );
        const limiterSlot = limiter?.tryAcquire();
        const providerSlot = providerLimiter?.tryAcquire();
        const slotId = this.nextGrant++;
        this.grants.set(slotId, {
          model: req.model,
          ...(req.provider !== undefined ? { provider: req.provider } : {}),
          scopes,
          limiterSlot,
          providerSlot,
          reservation: reservation.id,
          ...(limits ? { limits } : {}),
        });
        // Answered: no sweep or drain may refuse it now. Its reservation may leave others over budget.
        this.waiters.delete(w);
        this.wake();
        return { ok: true, slotId, waitedMs: this.now() - w.since };
      }
      // Infinity: until an in-flight response starts or the pause ends, which wake() signals.
      await this.sleep(wait, signal);
    }
  }

  private sleep(ms: number, signal: AbortSignal): Promise<void> {
    return new Promise((resolve) => {
      const done = (): void => {
        if (timer) clearTimeout(timer);
        signal.removeEventListener('abort', done);
        this.wakers.delete(done);
        resolve();
      };
      const timer = Number.isFinite(ms) ? setTimeout(done, Math.max(1, ms)) : undefined;
      timer?.unref?.();
      signal.addEventListener('abort', done, { once: true });
      this.wakers.add(done);
    });
  }

  /** Something changed (a slot, a pause, the spend): heads look again, waiters over budget are refused. */
  private wake(): void {
    // Without a cap anywhere nobody can be over budget: no sweep (it is one check per waiter, per wake).
    if (this.budget.limited)
      for (const w of this.waiters) {
        if (w.refuse.signal.aborted) continue;
        const verdict = this.budget.check(this.scopesOf(w.req), w.req.estimate);
        if (!verdict.ok)
          w.refuse.abort({ ok: false, reason: verdict.reason, budget: verdict.scope } satisfies PermitOutcome);
      }
    const wakers = this.wakers;
    this.wakers = new Set();
    for (const wake of wakers) wake();
  }

  /** Number of requests waiting for a permit. */
  get waiting(): number {
    return this.waiters.size;
  }

  /** Why a request that was not granted at once is waiting (for permit_wait events); `req`: whose. */
  waitReason(req?: Pick<PermitRequest, 'model' | 'provider' | 'call' | 'keyHash'>): string {
    if (this.opts.gate?.holding?.()) return "the prompt cache is warmed by the fan-out's first request";
    const binding =
      req && this.learnedFor(req.provider)?.binding(req.model, req.provider, req.call ?? NO_CALL_ESTIMATE, req.keyHash);
    if (binding) return binding;
    return this.waiters.size > 1 ? `${this.waiters.size} requests waiting for permits` : 'rate limit';
  }

  /**
   * The permitted request's response started (or failed): date its rate-limit slot. `heard`: a
   * response arrived (a reply or an error status), with the limits its headers stated; `refused`:
   * it was a 429 (the provider ran nothing of the call; OpenAI still counts its request).
   */
  started(slotId: number, at?: number, heard?: { rateLimits?: RateLimitSnapshot; refused?: boolean }): void {
    this.opts.gate?.settled(slotId, true);
    const g = this.grants.get(slotId);
    if (g) {
      this.slotsStarted(g, at);
      if (heard) {
        g.heard = true;
        // A refused call (429) used no tokens (at OpenAI its request still counts), and the remaining
        // its headers state holds only what the provider counted: settle the reservation as refused
        // before following what remains, not after.
        const mine = g.limits;
        if (heard.refused && mine) {
          this.learned?.settle(mine, 'refused');
          delete g.limits;
        }
        this.learnedFor(g.provider)?.learn(g.model, g.provider, heard.rateLimits, mine);
      }
    }
    this.wake();
  }

  /** Settles a permit with its real usage. */
  usage(slotId: number, usage: UsageSummary): void {
    const g = this.grants.get(slotId);
    if (!g) return;
    this.opts.gate?.settled(slotId, false);
    this.grants.delete(slotId);
    this.budget.release(g.reservation);
    this.budget.charge(g.scopes, { usd: usage.cost, tokens: usage.totalTokens });
    this.settleLimits(g, usage);
    // A request that never reported its start still frees its slot one window from now.
    this.slotsStarted(g);
    this.wake();
  }

  /** Drops a permit without usage (the call failed before any response). */
  release(slotId: number): void {
    const g = this.grants.get(slotId);
    if (!g) return;
    this.opts.gate?.settled(slotId, false);
    this.grants.delete(slotId);
    this.budget.release(g.reservation);
    this.settleLimits(g, undefined);
    this.slotsStarted(g);
    this.wake();
  }

  /** The learned limits get the call's real usage (its estimate was a reservation); an unanswered probe lets the next call probe. */
  private settleLimits(g: Grant, usage: UsageSummary | undefined): void {
    if (g.limits) this.learned?.settle(g.limits, usage);
    if (!g.heard) this.learnedFor(g.provider)?.probeEnded(g.model, g.provider);
  }

  /** Dates a grant's rate-limit slots (the first report wins; later ones change nothing). */
  private slotsStarted(g: Grant, at?: number): void {
    if (g.limiterSlot !== undefined) this.limiterFor(g.model, g.provider)?.started(g.limiterSlot, at);
    if (g.providerSlot !== undefined) this.providerLimiterFor(g.provider)?.started(g.providerSlot, at);
  }

  /** A provider said rate-limited: hold every request for that model (on that provider) for delayMs. */
  pause(model: string, delayMs: number, provider?: string): void {
    const queue = this.queueFor(model, provider);
    const key = provider === undefined ? model : `${provider}\n${model}`;
    const until = this.now() + delayMs;
    const current = this.pauseTimers.get(key);
    if (current && current.until >= until) return;
    if (current) clearTimeout(current.timer);
    queue.pause();
    const timer = setTimeout(
      () => {
        this.pauseTimers.delete(key);
        queue.start();
        this.wake();
      },
      Math.max(0, delayMs),
    );
    timer.unref?.();
    this.pauseTimers.set(key, { until, timer });
  }

  /** Refuses every waiting request (run stopping). */
  drain(reason: string): void {
    this.opts.gate?.close();
    for (const w of this.waiters) w.refuse.abort({ ok: false, reason } satisfies PermitOutcome);
  }

  close(): void {
    for (const { timer } of this.pauseTimers.values()) clearTimeout(timer);
    this.pauseTimers.clear();
    this.drain('run stopped');
  }
}

const ABORTED: PermitOutcome = { ok: false, reason: 'aborted' };

/** The budget ledger's scope of a provider's own budget (`providers: NAME: {budget}`). */
export function providerScope(provider: string): string {
  return `provider:${provider}`;
}

function isOutcome(x: unknown): x is PermitOutcome {
  return typeof x === 'object' && x !== null && 'ok' in x && 'reason' in x;
}
