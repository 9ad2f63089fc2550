// A token bucket the way providers describe their per-minute limits: `capacity` per window, refilled
// continuously (capacity / window per ms), never above capacity. A call takes its estimate when it
// is admitted (a reservation) and is settled with what it really used when it ends, so the bucket
// may go below zero when a call used more than estimated: later calls then wait longer, as the
// provider would make them. Because the refill is continuous, waiting calls are let through as the
// tokens come back, not all at once when a window resets.

export interface TokenBucketOptions {
  /** Tokens (or requests) per window. */
  capacity: number;
  /** Window length in ms (default 60 s: the providers' limits are per minute). */
  windowMs?: number;
  /** Starting level (default: full). */
  level?: number;
  now?: () => number;
}

export class TokenBucket {
  private cap: number;
  readonly windowMs: number;
  private current: number;
  private at: number;
  private readonly now: () => number;

  constructor(opts: TokenBucketOptions) {
    if (!(opts.capacity > 0)) throw new Error(`a token bucket needs a positive capacity, got ${opts.capacity}`);
    this.cap = opts.capacity;
    this.windowMs = opts.windowMs ?? 60_000;
    this.now = opts.now ?? Date.now;
    this.current = Math.min(opts.level ?? opts.capacity, opts.capacity);
    this.at = this.now();
  }

  get capacity(): number {
    return this.cap;
  }

  /** Tokens per ms. */
  private get rate(): number {
    return this.cap / this.windowMs;
  }

  private refill(): void {
    const t = this.now();
    if (t > this.at) this.current = Math.min(this.cap, this.current + (t - this.at) * this.rate);
    this.at = Math.max(this.at, t);
  }

  /** What is in the bucket now (negative after calls that used more than they reserved). */
  get level(): number {
    this.refill();
    return this.current;
  }

  /**
   * Milliseconds until `amount` fits (0 = now). An amount above the capacity waits for a full
   * bucket: it could never fit, and the provider decides what to do with it.
   */
  waitTime(amount: number): number {
    const need = Math.min(Math.max(0, amount), this.cap);
    const missing = need - this.level;
    return missing <= 0 ? 0 : Math.ceil(missing / this.rate);
  }

  /** Takes `amount` (a reservation); the level may go below zero. */
  take(amount: number): void {
    this.refill();
    this.current -= Math.max(0, amount);
  }

  /** A call that reserved `reserved` really used `used`: the difference goes back (or is taken). */
  settle(reserved: number, used: number): void {
    this.refill();
    this.current = Math.min(this.cap, this.current + reserved - used);
  }

  /**
   * The provider stated its limit and what it had left: the capacity follows the limit, and the
   * level never stays above what the provider said remains (it knows of spend we do not: other
   * runs, other users of the key). A lower level of ours stands: it already holds the calls granted
   * since that response left the provider.
   */
  observe(limit: number, remaining?: number): void {
    this.refill();
    if (limit > 0) this.cap = limit;
    this.current = Math.min(this.current, this.cap, remaining ?? Number.POSITIVE_INFINITY);
  }
}
