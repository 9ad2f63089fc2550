// A provider's rate limits as its documentation describes them, for the fake servers: a token
// bucket per limit (capacity per window, refilled continuously), a request admitted only when it
// fits every bucket (Anthropic: one request, its uncached input, its max_tokens of output, adjusted
// to the real output at the end; OpenAI: one request, all its input plus max_tokens against tokens
// per minute), anything else answered 429 with retry-after. Every response carries the vendor's
// real header names. Time is scalable (windowMs) so benches and tests need not wait minutes.

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
  /** ms until `amount` fits. */
  waitFor(amount: number): number {
    this.refill();
    const missing = Math.min(amount, this.capacity) - this.level;
    return missing <= 0 ? 0 : Math.ceil((missing * this.windowMs) / this.capacity);
  }
  take(amount: number): void {
    this.refill();
    this.level -= amount;
  }
  give(amount: number): void {
    this.refill();
    this.level = Math.min(this.capacity, this.level + amount);
  }
  /** ms until full. */
  fullIn(): number {
    this.refill();
    return Math.ceil(((this.capacity - this.level) * this.windowMs) / this.capacity);
  }
}

export interface RequestCost {
  /** Input the limit counts (Anthropic: uncached; OpenAI: all). */
  input: number;
  maxTokens: number;
}

export type Admission =
  | { ok: true; headers: Record<string, string>; ticket: { maxTokens: number } }
  | { ok: false; headers: Record<string, string>; retryAfterMs: number; binding: Kind };

export class ProviderLimitEnforcer {
  private readonly buckets = new Map<Kind, Bucket>();
  readonly stats = { admitted: 0, refused: 0, inputTokens: 0, outputTokens: 0, firstAt: 0, lastAt: 0 };

  constructor(
    readonly vendor: 'anthropic' | 'openai',
    readonly limits: EnforcedLimits,
    private readonly now: () => number = Date.now,
  ) {}

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

  /** Admits a request (taking its cost) or refuses it with how long to wait. */
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
      return {
        ok: false,
        retryAfterMs: wait,
        binding,
        headers: { ...this.headers(), 'retry-after': String(Math.ceil(wait / 1000)), 'retry-after-ms': String(wait) },
      };
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
        h[`anthropic-ratelimit-${name}-reset`] = new Date(this.now() + b.fullIn()).toISOString();
      } else {
        h[`x-ratelimit-limit-${kind}`] = String(b.capacity);
        h[`x-ratelimit-remaining-${kind}`] = String(b.remaining());
        h[`x-ratelimit-reset-${kind}`] = `${b.fullIn()}ms`;
      }
    }
    return h;
  }
}

/** Tokens of a request body the way the fakes count them (JSON characters / 4, as the estimator does). */
export function bodyTokens(body: unknown): number {
  return Math.ceil(JSON.stringify(body).length / 4);
}
