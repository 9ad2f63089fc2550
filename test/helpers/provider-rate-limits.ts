// A provider's rate limits as its documentation describes them, for the fake servers: a token
// bucket per limit (capacity per window, refilled continuously), a request admitted only when it
// fits every bucket (Anthropic: one request, its uncached input, its max_tokens of output, adjusted
// to the real output at the end; OpenAI: one request, all its input plus max_tokens against tokens
// per minute), anything else answered 429. Every response carries the vendor's real header names,
// and a 429 only the headers that vendor really sends (a fake must be as strict as the real thing):
//
//   Anthropic  retry-after in whole seconds, never retry-after-ms (anthropic-sdk-typescript issue
//              #357: a 429 had neither; PR #358 was closed once "Anthropic now always sends
//              retry-after"); anthropic-ratelimit-{requests,input-tokens,output-tokens}-
//              {limit,remaining,reset}, reset an RFC 3339 time at whole seconds (the rate-limit
//              page of the Claude docs, as mirrored on docs.aws.amazon.com/claude-platform/latest/
//              userguide/rate-limits.html). A refused request costs nothing there: the docs say
//              nothing of it, so nothing is modelled.
//   OpenAI     x-ratelimit-{limit,remaining,reset}-{requests,tokens}, reset a Go-style duration
//              ("20ms", "1s", "8.64s", "6m0s": platform rate-limit guide, as quoted in
//              ruby-openai issue #419 and open-webui issue #3743). No retry-after-ms (the SDKs read
//              it as "may not be standard") and no retry-after: a real 429 in openai-node issue
//              #1477 carried neither, and openai-openapi PR #564 (2026) calls Retry-After optional,
//              "without claiming that every 429 includes" it; a client must cope without it, so
//              the fake never sends it. And a refused request is counted: "unsuccessful requests
//              contribute to your per-minute limit, so continuously resending a request won't
//              work" (help.openai.com/en/articles/5955604). The simplest rule that matches: a 429
//              takes its one request from the requests bucket like an admitted request, even below
//              zero (a crowd that keeps resending digs the hole deeper, as a per-minute count of
//              attempts would); it takes no tokens (the request was not run).
//
// Time is scalable (windowMs) so benches and tests need not wait minutes: one "provider second" is
// windowMs / 60 ms. Anthropic states its waits and resets in whole seconds, so the fake rounds them
// UP to whole provider seconds: retry-after is then k * windowMs / 60 / 1000 written as a decimal
// number of seconds ("0.1" at windowMs 6_000). That is the scaling, not the format: with windowMs
// 60_000 it is "1", "2"..., exactly what the real API sends, and the resets are whole-second
// times ("2026-12-06T03:00:01Z"). OpenAI's resets are already stated to the millisecond, so they
// are rounded up to a whole millisecond (coarser than a scaled provider millisecond: never laxer).

export interface EnforcedLimits {
  /** The window the limits are per (the providers' is 60 s). */
  windowMs: number;
  requests: number;
  /** Anthropic: uncached input tokens per window. */
  inputTokens?: number;
  /** Anthropic: output tokens per window. */
  outputTokens?: number;
  /** OpenAI: all tokens per window. */
  tokens?: number;
  /** Starting level of every bucket as a share of its capacity (default 1: full). */
  startShare?: number;
}

type Kind = 'requests' | 'inputTokens' | 'outputTokens' | 'tokens';

class Bucket {
  private level: number;
  private at: number;
  constructor(
    readonly capacity: number,
    private readonly windowMs: number,
    share: number,
    private readonly now: () => number,
  ) {
    this.level = capacity * share;
    this.at = now();
  }
  private refill(): void {
    const t = this.now();
    this.level = Math.min(this.capacity, this.level + ((t - this.at) * this.capacity) / this.windowMs);
    this.at = t;
  }
  remaining(): number {
    this.refill();
    return Math.max(0, Math.floor(this.level));
  }
  /** ms until `amount` fits (exact, unrounded). */
  waitFor(amount: number): number {
    this.refill();
    const missing = Math.min(amount, this.capacity) - this.level;
    return missing <= 0 ? 0 : (missing * this.windowMs) / this.capacity;
  }
  /** Takes `amount`; the level may go below zero (a debt the refill pays back first). */
  take(amount: number): void {
    this.refill();
    this.level -= amount;
  }
  give(amount: number): void {
    this.refill();
    this.level = Math.min(this.capacity, this.level + amount);
  }
  /** ms until full (exact, unrounded). */
  fullIn(): number {
    this.refill();
    return ((this.capacity - this.level) * this.windowMs) / this.capacity;
  }
}

export interface RequestCost {
  /** Input the limit counts (Anthropic: uncached; OpenAI: all). */
  input: number;
  maxTokens: number;
}

export type Admission =
  | { ok: true; headers: Record<string, string>; ticket: { maxTokens: number } }
  | {
      ok: false;
      headers: Record<string, string>;
      /** How long until the request would fit, unrounded (what the fake knows, not what it states). */
      fitsInMs: number;
      binding: Kind;
    };

export class ProviderLimitEnforcer {
  private readonly buckets = new Map<Kind, Bucket>();
  readonly stats = { admitted: 0, refused: 0, inputTokens: 0, outputTokens: 0, firstAt: 0, lastAt: 0 };

  constructor(
    readonly vendor: 'anthropic' | 'openai',
    readonly limits: EnforcedLimits,
    private readonly now: () => number = Date.now,
  ) {}

  /** One second of the provider's clock, scaled with the window (1000 ms at the real 60 s window). */
  get providerSecondMs(): number {
    return this.limits.windowMs / 60;
  }

  /** The buckets start at the first request (startShare full), not when the server was made. */
  private start(): void {
    if (this.buckets.size > 0) return;
    const { limits, now } = this;
    const share = limits.startShare ?? 1;
    const add = (kind: Kind, capacity: number | undefined): void => {
      if (capacity) this.buckets.set(kind, new Bucket(capacity, limits.windowMs, share, now));
    };
    add('requests', limits.requests);
    if (this.vendor === 'anthropic') {
      add('inputTokens', limits.inputTokens);
      add('outputTokens', limits.outputTokens);
    } else add('tokens', limits.tokens);
  }

  private amounts(c: RequestCost): [Kind, number][] {
    return this.vendor === 'anthropic'
      ? [
          ['requests', 1],
          ['inputTokens', c.input],
          ['outputTokens', c.maxTokens],
        ]
      : [
          ['requests', 1],
          ['tokens', c.input + c.maxTokens],
        ];
  }

  /** Admits a request (taking its cost) or refuses it with the headers the vendor sends on a 429. */
  admit(c: RequestCost): Admission {
    this.start();
    let wait = 0;
    let binding: Kind = 'requests';
    for (const [kind, amount] of this.amounts(c)) {
      const w = this.buckets.get(kind)?.waitFor(amount) ?? 0;
      if (w > wait) {
        wait = w;
        binding = kind;
      }
    }
    if (wait > 0) {
      this.stats.refused++;
      // OpenAI counts the refused request against the requests per minute (see the header).
      if (this.vendor === 'openai') this.buckets.get('requests')?.take(1);
      const headers = this.headers();
      if (this.vendor === 'anthropic') headers['retry-after'] = this.wholeProviderSeconds(wait);
      return { ok: false, fitsInMs: wait, binding, headers };
    }
    for (const [kind, amount] of this.amounts(c)) this.buckets.get(kind)?.take(amount);
    const t = this.now();
    if (this.stats.admitted === 0) this.stats.firstAt = t;
    this.stats.admitted++;
    this.stats.inputTokens += c.input;
    return { ok: true, headers: this.headers(), ticket: { maxTokens: c.maxTokens } };
  }

  /** The admitted request ended with `output` tokens: max_tokens was reserved, the rest comes back. */
  finish(ticket: { maxTokens: number }, output: number): void {
    const back = ticket.maxTokens - output;
    this.buckets.get(this.vendor === 'anthropic' ? 'outputTokens' : 'tokens')?.give(back);
    this.stats.outputTokens += output;
    this.stats.lastAt = this.now();
  }

  /** The vendor's rate-limit headers for the buckets' state now. */
  headers(): Record<string, string> {
    const h: Record<string, string> = {};
    for (const [kind, b] of this.buckets) {
      if (this.vendor === 'anthropic') {
        const name = {
          requests: 'requests',
          inputTokens: 'input-tokens',
          outputTokens: 'output-tokens',
          tokens: 'tokens',
        }[kind];
        h[`anthropic-ratelimit-${name}-limit`] = String(b.capacity);
        h[`anthropic-ratelimit-${name}-remaining`] = String(b.remaining());
        h[`anthropic-ratelimit-${name}-reset`] = this.resetTime(b.fullIn());
      } else {
        h[`x-ratelimit-limit-${kind}`] = String(b.capacity);
        h[`x-ratelimit-remaining-${kind}`] = String(b.remaining());
        h[`x-ratelimit-reset-${kind}`] = goDuration(Math.ceil(b.fullIn()));
      }
    }
    return h;
  }

  /** A wait as Anthropic's retry-after: whole provider seconds, rounded up, in (scaled) seconds. */
  private wholeProviderSeconds(ms: number): string {
    const k = Math.max(1, Math.ceil(ms / this.providerSecondMs - 1e-9));
    // k * windowMs / 60 / 1000, computed in that order so the real window gives integers.
    return String((k * this.limits.windowMs) / 60 / 1000);
  }

  /** When a bucket is full, as Anthropic states it: RFC 3339 at a whole (provider) second, rounded up. */
  private resetTime(inMs: number): string {
    const second = this.providerSecondMs;
    const at = Math.ceil(Math.ceil((this.now() + inMs) / second - 1e-9) * second);
    // Whole real seconds (the real window) are written without a fraction, as the API does.
    return new Date(at).toISOString().replace('.000Z', 'Z');
  }
}

/** A duration the way OpenAI writes it (Go's time.Duration): "20ms", "1s", "8.64s", "6m0s", "1h2m3s". */
export function goDuration(ms: number): string {
  if (ms === 0) return '0s';
  if (ms < 1000) return `${ms}ms`;
  const h = Math.floor(ms / 3_600_000);
  const m = Math.floor((ms % 3_600_000) / 60_000);
  const s = (ms % 60_000) / 1000;
  const sec = `${Number(s.toFixed(3))}s`;
  if (h > 0) return `${h}h${m}m${sec}`;
  if (m > 0) return `${m}m${sec}`;
  return sec;
}

/** Tokens of a request body the way the fakes count them (JSON characters / 4, as the estimator does). */
export function bodyTokens(body: unknown): number {
  return Math.ceil(JSON.stringify(body).length / 4);
}
