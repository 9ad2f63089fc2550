// The permit broker pacing by learned provider limits, on vitest's fake clock (the broker's
// injected clock and its timers move only when the test says): a call is admitted when its
// estimate fits, waits exactly as long as the bucket needs, is settled with its real usage; waiting
// calls go by priority; the first call of a model goes alone until its headers are heard; a
// declared rate_limit stays an upper bound; adaptive: false turns it off.
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import type { RateLimitSnapshot } from '../../src/ai/rate-limit-headers.js';
import { BudgetLedger } from '../../src/orchestrator/schedule/budget.js';
import { type PermitOutcome, PermitBroker, type PermitRequest } from '../../src/orchestrator/pacing/permit-broker.js';

beforeEach(() => {
  vi.useFakeTimers({ now: 0 });
});
afterEach(() => {
  vi.useRealTimers();
});

const zeroSpend = { usd: 0, tokens: 0 };
const used = (input: number, output: number) => ({
  input,
  output,
  cacheRead: 0,
  cacheWrite: 0,
  totalTokens: input + output,
  cost: 0,
});
/** 6000 input tokens per minute (100 per s), `remaining` left; requests and output far away. */
const limits = (remaining: number): RateLimitSnapshot => ({
  vendor: 'anthropic',
  keyHash: 'k',
  limits: {
    requests: { limit: 1000, remaining: 1000 },
    inputTokens: { limit: 6000, remaining },
    outputTokens: { limit: 1_000_000, remaining: 1_000_000 },
  },
});

function req(input: number, extra: Partial<PermitRequest> = {}): PermitRequest {
  return {
    model: 'm',
    provider: 'anthropic',
    scopes: ['run'],
    estimate: zeroSpend,
    call: { uncachedInput: input, cachedInput: 0, maxOutput: 10 },
    ...extra,
  };
}

/** A request whose answer the test can look at without awaiting it. */
function track(broker: PermitBroker, r: PermitRequest, order?: string[], name?: string) {
  const state: { outcome?: PermitOutcome } = {};
  void broker.request(r).then((o) => {
    state.outcome = o;
    if (name) order?.push(name);
  });
  return state;
}

/** A broker that has learned the limits through a first call whose response said `remaining`. */
async function learnedBroker(remaining: number, opts: Partial<ConstructorParameters<typeof PermitBroker>[0]> = {}) {
  const broker = new PermitBroker({ budget: new BudgetLedger(), now: Date.now, ...opts });
  const first = await broker.request(req(0));
  if (!first.ok) throw new Error('first call refused');
  broker.started(first.slotId, Date.now(), { rateLimits: limits(remaining) });
  broker.usage(first.slotId, used(0, 0));
  return broker;
}

describe('adaptive permits', () => {
  it('admits a call when its estimated input fits and holds the next until the bucket has refilled', async () => {
    const broker = await learnedBroker(1000);
    const a = await broker.request(req(800));
    expect(a.ok).toBe(true);
    // 200 left, 100 per s: 800 more waits 6 s.
    const b = track(broker, req(800));
    await vi.advanceTimersByTimeAsync(5999);
    expect(b.outcome).toBeUndefined();
    expect(broker.waitReason(req(800))).toMatch(/input tokens per minute/);
    await vi.advanceTimersByTimeAsync(1);
    expect(b.outcome?.ok).toBe(true);
    broker.close();
  });

  it('settles with the real usage: an estimate larger than the call frees the rest at once', async () => {
    const broker = await learnedBroker(1000);
    const a = await broker.request(req(900));
    const b = track(broker, req(500));
    await vi.advanceTimersByTimeAsync(0);
    expect(b.outcome).toBeUndefined();
    if (a.ok) broker.usage(a.slotId, used(100, 5));
    await vi.advanceTimersByTimeAsync(0);
    expect(b.outcome?.ok).toBe(true);
    broker.close();
  });

  it('waiting calls are granted by priority (critical path, planners), then in arrival order', async () => {
    const broker = await learnedBroker(0);
    const order: string[] = [];
    // Each needs 100 tokens: one per second.
    track(broker, req(100, { priority: 0 }), order, 'head');
    await vi.advanceTimersByTimeAsync(0);
    track(broker, req(100, { priority: 0 }), order, 'low-1');
    track(broker, req(100, { priority: 0 }), order, 'low-2');
    track(broker, req(100, { priority: 9 }), order, 'critical');
    track(broker, req(100, { priority: 3 }), order, 'planner');
    await vi.advanceTimersByTimeAsync(5000);
    // The head was already waiting at the front; the others by priority, equal ones in arrival order.
    expect(order).toEqual(['head', 'critical', 'planner', 'low-1', 'low-2']);
    broker.close();
  });

  it("the first call of a model goes alone; the rest wait for its response's headers", async () => {
    const broker = new PermitBroker({ budget: new BudgetLedger(), now: Date.now });
    const first = await broker.request(req(10));
    const second = track(broker, req(10));
    await vi.advanceTimersByTimeAsync(1_000);
    expect(second.outcome).toBeUndefined();
    expect(broker.waitReason(req(10))).toMatch(/first call/);
    if (first.ok) broker.started(first.slotId, Date.now(), { rateLimits: limits(6000) });
    await vi.advanceTimersByTimeAsync(0);
    expect(second.outcome?.ok).toBe(true);
    broker.close();
  });

  it('a first call whose headers are slow to come holds the rest 2 s at most (a held response must not serialize a fan-out)', async () => {
    const broker = new PermitBroker({ budget: new BudgetLedger(), now: Date.now });
    await broker.request(req(10));
    const second = track(broker, req(10));
    await vi.advanceTimersByTimeAsync(1_999);
    expect(second.outcome).toBeUndefined();
    await vi.advanceTimersByTimeAsync(1);
    expect(second.outcome?.ok).toBe(true);
    broker.close();
  });

  it('a 429 saying nothing remains holds calls until the bucket refills, not until a fixed delay', async () => {
    const broker = await learnedBroker(6000);
    const a = await broker.request(req(100));
    if (!a.ok) throw new Error('refused');
    broker.started(a.slotId, Date.now(), { rateLimits: limits(0) });
    // The refused call's 100 tokens come back (the provider did not count them): 200 more to wait for.
    broker.usage(a.slotId, used(0, 0));
    const b = track(broker, req(300));
    await vi.advanceTimersByTimeAsync(1999);
    expect(b.outcome).toBeUndefined();
    await vi.advanceTimersByTimeAsync(1);
    expect(b.outcome?.ok).toBe(true);
    broker.close();
  });

  it("a refused call's reservation is given back before following the 429's remaining, not on top of it", async () => {
    const broker = await learnedBroker(6000);
    const a = await broker.request(req(1000));
    if (!a.ok) throw new Error('refused');
    // The provider refused it with nothing left: it did not count the call, and neither do we.
    broker.started(a.slotId, Date.now(), { rateLimits: limits(0), refused: true });
    broker.usage(a.slotId, used(0, 0));
    const b = track(broker, req(300));
    await vi.advanceTimersByTimeAsync(2999);
    expect(b.outcome).toBeUndefined();
    await vi.advanceTimersByTimeAsync(1);
    expect(b.outcome?.ok).toBe(true);
    broker.close();
  });

  it('a declared rate_limit stays an upper bound over generous learned limits', async () => {
    const broker = await learnedBroker(6000, { rateLimits: { m: 1 }, windowMs: 1000, marginMs: 0 });
    // The learning call holds the one slot of the declared limit for a second.
    const a = track(broker, req(1));
    await vi.advanceTimersByTimeAsync(1000);
    if (!a.outcome?.ok) throw new Error('not granted after the window');
    broker.started(a.outcome.slotId, Date.now());
    const b = track(broker, req(1));
    await vi.advanceTimersByTimeAsync(999);
    expect(b.outcome).toBeUndefined();
    await vi.advanceTimersByTimeAsync(1);
    expect(b.outcome?.ok).toBe(true);
    broker.close();
  });

  it('adaptive: false paces by declared limits only', async () => {
    const broker = await learnedBroker(0, { adaptive: false });
    expect((await broker.request(req(5000))).ok).toBe(true);
    expect(broker.learned).toBeUndefined();
    broker.close();
  });
});
