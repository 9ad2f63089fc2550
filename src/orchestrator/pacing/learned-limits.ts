// The provider limits a run has learned from response headers (ai/rate-limit-headers.ts), one token
// bucket per limit, per provider, model and API key (named by a short hash of it, never the key).
// The permit broker asks it how long a call must wait for its estimate to fit every bucket, reserves
// the estimate when it grants, and settles each bucket with the call's real usage at its end.
//
// What a call counts against each limit follows the vendors' documentation:
//   Anthropic  requests: 1; input tokens: uncached input only (cache reads do not count for current
//              models; cache writes do); output tokens: max_tokens at the start, the real output at
//              the end; tokens (combined): both.
//   OpenAI     requests: 1; tokens: all input (cached too) plus max_tokens, then the real total.
// Until a provider and model has answered once, its first call goes alone (a probe): the headers
// of its response say what the limits are before the rest of a fan-out is let through. The probe
// holds the others for at most `probeMaxMs`: a response whose headers are slow to come (a long
// queue at the provider, a model that thinks before it streams) must not serialize the fan-out.
// The limits learned are kept in the run folder (run-files.ts) and restored on resume: no probe
// then, and each bucket starts at what the provider has refilled at least since the run's last event.
import type { RateLimitKind, RateLimitSnapshot } from '../../ai/rate-limit-headers.js';
import type { UsageSummary } from '../../run/usage-summary.js';
import { TokenBucket } from './token-bucket.js';

/** What a call expects to spend, sent with its permit request. */
export interface CallEstimate {
  /** Input tokens the provider will not find in its prompt cache. */
  uncachedInput: number;
  /** Input tokens it will read from the cache. */
  cachedInput: number;
  /** The call's max_tokens. */
  maxOutput: number;
}

/** What one granted call took from which buckets (settled at its end). */
export interface LimitReservation {
  set: string;
  amounts: Partial<Record<RateLimitKind, number>>;
  /** Order of the grant: a response's `remaining` cannot hold calls granted after it. */
  seq: number;
}

interface LimitSet {
  vendor: RateLimitSnapshot['vendor'];
  buckets: Partial<Record<RateLimitKind, TokenBucket>>;
  /** Granted calls whose response has not come back yet, by grant order (see learn()). */
  unheard: Map<number, Partial<Record<RateLimitKind, number>>>;
}

/** Probe state of a provider and model with nothing learned yet. */
type Probe = 'in-flight' | 'no-headers';

const KIND_NAMES: Record<RateLimitKind, string> = {
  requests: 'requests',
  inputTokens: 'input tokens',
  outputTokens: 'output tokens',
  tokens: 'tokens',
};

/** One provider, model and key's learned limits, as the run folder keeps them (learned-limits.json). */
export interface LearnedLimitRecord {
  provider: string;
  model: string;
  keyHash: string;
  vendor: RateLimitSnapshot['vendor'];
  /** Per kind: the limit per window. */
  limits: Partial<Record<RateLimitKind, number>>;
}

export interface LearnedLimitsOptions {
  /** The limits' window (60 s; benches scale it down). */
  windowMs?: number;
  /** How long a first call's unanswered probe holds the other calls back (2 s). */
  probeMaxMs?: number;
  now?: () => number;
  /** Told when a limit is learned for the first time or changes (the run folder's copy is due). */
  onChange?: () => void;
}

export class LearnedLimits {
  private readonly sets = new Map<string, LimitSet>();
  /** provider + model -> the key hash learned last (a call that does not name its key uses it). */
  private readonly latest = new Map<string, string>();
  private readonly probes = new Map<string, { state: Probe; since: number }>();
  private readonly now: () => number;
  private readonly windowMs: number;
  private readonly probeMaxMs: number;
  private readonly onChange: (() => void) | undefined;
  private seq = 0;

  constructor(opts: LearnedLimitsOptions = {}) {
    this.now = opts.now ?? Date.now;
    this.windowMs = opts.windowMs ?? 60_000;
    this.probeMaxMs = opts.probeMaxMs ?? 2_000;
    this.onChange = opts.onChange;
  }

  /**
   * A resumed run's limits, as an earlier coordinator learned them. `idleMs` since its last event,
   * the provider has refilled each bucket by at least that much of its rate (only what our calls
   * took can be missing), so a bucket starts there: full after a window. A response's headers
   * correct it as usual. Limits learned here already win.
   */
  restore(records: readonly LearnedLimitRecord[], idleMs: number): void {
    const share = Math.min(1, Math.max(0, idleMs) / this.windowMs);
    for (const r of records) {
      const pm = `${r.provider}\n${r.model}`;
      const key = `${pm}\n${r.keyHash}`;
      if (this.sets.has(key)) continue;
      const buckets: LimitSet['buckets'] = {};
      for (const [kind, limit] of Object.entries(r.limits) as [RateLimitKind, number][])
        if (limit > 0)
          buckets[kind] = new TokenBucket({
            capacity: limit,
            level: limit * share,
            windowMs: this.windowMs,
            now: this.now,
          });
      this.sets.set(key, { vendor: r.vendor, buckets, unheard: new Map() });
      if (!this.latest.has(pm)) this.latest.set(pm, r.keyHash);
    }
  }

  /** Every provider, model and key's limits, for the run folder (restore() takes them back). */
  records(): LearnedLimitRecord[] {
    return [...this.sets].map(([key, set]) => {
      const [provider, model, keyHash] = key.split('\n') as [string, string, string];
      const limits: LearnedLimitRecord['limits'] = {};
      for (const [kind, bucket] of Object.entries(set.buckets) as [RateLimitKind, TokenBucket][])
        limits[kind] = bucket.capacity;
      return { provider, model, keyHash, vendor: set.vendor, limits };
    });
  }

  /** The set of limits a call of `model` on `provider` with key `keyHash` is paced by, if any is learned. */
  private setKey(model: string, provider: string | undefined, keyHash: string | undefined): string | undefined {
    const pm = `${provider ?? ''}\n${model}`;
    const key = keyHash ?? this.latest.get(pm);
    return key === undefined ? undefined : `${pm}\n${key}`;
  }

  /**
   * A response said what the limits are: the buckets follow (created at what remained). `from`: the
   * call it answered. What remained when the provider answered cannot hold the calls granted after
   * that call and not yet answered (they reach the provider later): they are taken from it, or
   * following it would forget them and let too much through.
   */
  learn(
    model: string,
    provider: string | undefined,
    snapshot: RateLimitSnapshot | undefined,
    from?: LimitReservation,
  ): void {
    const pm = `${provider ?? ''}\n${model}`;
    if (!snapshot) {
      // A provider that sends no limits (a local server) is not paced, and not probed again.
      if (this.probes.get(pm)?.state === 'in-flight') this.probes.set(pm, { state: 'no-headers', since: this.now() });
      return;
    }
    this.probes.delete(pm);
    const keyHash = snapshot.keyHash ?? '';
    this.latest.set(pm, keyHash);
    const key = `${pm}\n${keyHash}`;
    let set = this.sets.get(key);
    if (!set) {
      set = { vendor: snapshot.vendor, buckets: {}, unheard: new Map() };
      this.sets.set(key, set);
    }
    if (from) set.unheard.delete(from.seq);
    const after = from?.seq ?? 0;
    let changed = false;
    for (const [kind, state] of Object.entries(snapshot.limits) as [
      RateLimitKind,
      { limit: number; remaining?: number },
    ][]) {
      const bucket = set.buckets[kind];
      let pending = 0;
      for (const [seq, amounts] of set.unheard) if (seq > after) pending += amounts[kind] ?? 0;
      if (bucket) {
        changed ||= state.limit > 0 && state.limit !== bucket.capacity;
        bucket.observe(state.limit, state.remaining === undefined ? undefined : state.remaining - pending);
      } else {
        changed = true;
        set.buckets[kind] = new TokenBucket({
          capacity: state.limit,
          level: state.remaining ?? state.limit,
          windowMs: this.windowMs,
          now: this.now,
        });
      }
    }
    if (changed) this.onChange?.();
  }

  /**
   * How long a call must wait: 0 when its estimate fits every learned bucket; while the first call
   * of a provider and model has not answered yet, what is left of `probeMaxMs` (learn() or
   * probeEnded() wakes it sooner).
   */
  waitTime(model: string, provider: string | undefined, estimate: CallEstimate, keyHash?: string): number {
    const key = this.setKey(model, provider, keyHash);
    const set = key === undefined ? undefined : this.sets.get(key);
    if (!set) {
      const probe = this.probes.get(`${provider ?? ''}\n${model}`);
      return probe?.state === 'in-flight' ? Math.max(0, probe.since + this.probeMaxMs - this.now()) : 0;
    }
    let wait = 0;
    for (const [kind, amount] of Object.entries(amountsOf(set.vendor, estimate)) as [RateLimitKind, number][]) {
      const bucket = set.buckets[kind];
      if (bucket) wait = Math.max(wait, bucket.waitTime(amount));
    }
    return wait;
  }

  /** Which learned limit holds a call back now (for permit_wait), or undefined. */
  binding(model: string, provider: string | undefined, estimate: CallEstimate, keyHash?: string): string | undefined {
    const key = this.setKey(model, provider, keyHash);
    const set = key === undefined ? undefined : this.sets.get(key);
    if (!set)
      return this.waitTime(model, provider, estimate, keyHash) > 0
        ? "the provider's first call, whose answer tells its rate limits"
        : undefined;
    for (const [kind, amount] of Object.entries(amountsOf(set.vendor, estimate)) as [RateLimitKind, number][]) {
      const bucket = set.buckets[kind];
      if (bucket && bucket.waitTime(amount) > 0)
        return `the provider's ${KIND_NAMES[kind]} per minute (${Math.round(bucket.capacity)}, learned)`;
    }
    return undefined;
  }

  /**
   * Takes a granted call's estimate from every learned bucket. With nothing learned yet, a call
   * that may `probe` (its worker reports the headers) becomes the model's probe.
   */
  reserve(
    model: string,
    provider: string | undefined,
    estimate: CallEstimate,
    keyHash?: string,
    probe = true,
  ): LimitReservation | undefined {
    const key = this.setKey(model, provider, keyHash);
    const set = key === undefined ? undefined : this.sets.get(key);
    if (!set) {
      const pm = `${provider ?? ''}\n${model}`;
      if (probe && !this.probes.has(pm)) this.probes.set(pm, { state: 'in-flight', since: this.now() });
      return undefined;
    }
    const amounts = amountsOf(set.vendor, estimate);
    for (const [kind, amount] of Object.entries(amounts) as [RateLimitKind, number][]) set.buckets[kind]?.take(amount);
    const seq = ++this.seq;
    set.unheard.set(seq, amounts);
    return { set: key!, amounts, seq };
  }

  /** The probe of a model ended without a response (failed, released): the next call probes again. */
  probeEnded(model: string, provider: string | undefined): void {
    const pm = `${provider ?? ''}\n${model}`;
    if (this.probes.get(pm)?.state === 'in-flight') this.probes.delete(pm);
  }

  /**
   * The call ended: each bucket gets back what was reserved and loses what was really used;
   * 'refused' (a 429): no tokens were used, and the request counts only where the provider counts
   * refused requests (OpenAI: "unsuccessful requests contribute to your per-minute limit").
   */
  settle(r: LimitReservation, usage: UsageSummary | undefined | 'refused'): void {
    const set = this.sets.get(r.set);
    if (!set) return;
    set.unheard.delete(r.seq);
    const used = usedOf(set.vendor, usage);
    for (const [kind, reserved] of Object.entries(r.amounts) as [RateLimitKind, number][])
      set.buckets[kind]?.settle(reserved, used[kind] ?? reserved);
  }

  /** Every learned limit, for reports: provider, model, key hash, kind, limit per minute. */
  list(): { provider: string; model: string; keyHash: string; kind: RateLimitKind; limit: number }[] {
    const out: { provider: string; model: string; keyHash: string; kind: RateLimitKind; limit: number }[] = [];
    for (const [key, set] of this.sets) {
      const [provider, model, keyHash] = key.split('\n') as [string, string, string];
      for (const [kind, bucket] of Object.entries(set.buckets) as [RateLimitKind, TokenBucket][])
        out.push({ provider, model, keyHash, kind, limit: bucket.capacity });
    }
    return out;
  }
}

/** What a call reserves of each limit (see the header). */
function amountsOf(vendor: RateLimitSnapshot['vendor'], e: CallEstimate): Partial<Record<RateLimitKind, number>> {
  if (vendor === 'openai') return { requests: 1, tokens: e.uncachedInput + e.cachedInput + e.maxOutput };
  return {
    requests: 1,
    inputTokens: e.uncachedInput,
    outputTokens: e.maxOutput,
    tokens: e.uncachedInput + e.maxOutput,
  };
}

/**
 * What a finished call used of each limit. No usage (the request failed before a reply: a 429, a
 * lost connection) gives the tokens back and keeps the request counted. A refused one (429) keeps
 * it counted at OpenAI only, which counts refused requests (help.openai.com/en/articles/5955604);
 * Anthropic documents no such rule, and the headers of its 429 say what it counted.
 */
function usedOf(
  vendor: RateLimitSnapshot['vendor'],
  u: UsageSummary | undefined | 'refused',
): Partial<Record<RateLimitKind, number>> {
  if (u === 'refused') return { requests: vendor === 'openai' ? 1 : 0, inputTokens: 0, outputTokens: 0, tokens: 0 };
  if (!u || u.totalTokens === 0) return { requests: 1, inputTokens: 0, outputTokens: 0, tokens: 0 };
  if (vendor === 'openai') return { requests: 1, tokens: u.input + u.cacheRead + u.cacheWrite + u.output };
  const input = u.input + u.cacheWrite;
  return { requests: 1, inputTokens: input, outputTokens: u.output, tokens: input + u.output };
}
