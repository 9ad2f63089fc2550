// Requests-per-minute limiter that holds where the provider counts.
//
// A provider that allows N requests in any rolling window sees our requests when they arrive,
// not when we decide to send them; network jitter moves arrivals by milliseconds. So a slot is
// held from the moment a permit is granted until `windowMs + marginMs` after the *later* of the
// grant and the moment its response started. Whatever the jitter between grant and arrival
// (bounded by when the response starts), no rolling window at the provider holds more than N.
// A provider's "rate-limited, wait" pauses the model's permit queue instead (PermitBroker.pause).

export interface RateLimiterOptions {
  /** Requests allowed per window. */
  limit: number;
  /** Window length (default 60 s). */
  windowMs?: number;
  /** Extra hold after the window, for clock and network skew (default 250 ms). */
  marginMs?: number;
  now?: () => number;
}

interface Slot {
  grantedAt: number;
  /** When the slot stops counting; Infinity while the response has not started. */
  releaseAt: number;
}

export class SlidingWindowLimiter {
  readonly limit: number;
  readonly windowMs: number;
  readonly marginMs: number;
  private readonly now: () => number;
  private readonly slots = new Map<number, Slot>();
  private nextId = 1;

  constructor(opts: RateLimiterOptions) {
    if (!(opts.limit > 0)) throw new Error(`rate limit must be a positive number, got ${opts.limit}`);
    this.limit = opts.limit;
    this.windowMs = opts.windowMs ?? 60_000;
    this.marginMs = opts.marginMs ?? 250;
    this.now = opts.now ?? Date.now;
  }

  private prune(t: number): void {
    for (const [id, s] of this.slots) if (s.releaseAt <= t) this.slots.delete(id);
  }

  /** Milliseconds until a slot is free (0 = now). Infinity means "after an in-flight response starts". */
  waitTime(): number {
    const t = this.now();
    this.prune(t);
    if (this.slots.size < this.limit) return 0;
    let earliest = Infinity;
    for (const s of this.slots.values()) earliest = Math.min(earliest, s.releaseAt);
    return earliest - t;
  }

  /** Takes a slot if one is free now; returns its id, or undefined. */
  tryAcquire(): number | undefined {
    if (this.waitTime() > 0) return undefined;
    const id = this.nextId++;
    this.slots.set(id, { grantedAt: this.now(), releaseAt: Infinity });
    return id;
  }

  /** The response of slot `id` started (or the request failed): the slot counts one window longer. */
  started(id: number, at: number = this.now()): void {
    const s = this.slots.get(id);
    // The first report dates the slot; later ones (usage after start) must not extend it.
    if (!s || s.releaseAt !== Infinity) return;
    s.releaseAt = Math.max(s.grantedAt, at) + this.windowMs + this.marginMs;
  }

  get inUse(): number {
    this.prune(this.now());
    return this.slots.size;
  }
}
