// The cache warm-up gate in front of the permit broker: a wide fan-out's first request goes out
// alone, the wave's other first requests wait until it streams; and every way that request can
// end (refused, released without a response, never starting in time, a stopping run, a cancelled
// waiter) lets the wave go on: it can never hold a run up.
import { describe, expect, it } from 'vitest';
import { BudgetLedger } from '../../../src/orchestrator/schedule/budget.js';
import { CacheWarmup, warmsCache } from '../../../src/orchestrator/pacing/cache-warmup.js';
import { PermitBroker, type PermitOutcome } from '../../../src/orchestrator/pacing/permit-broker.js';

const ask = (broker: PermitBroker, instance: string, signal?: AbortSignal, usd = 0) =>
  broker.request({
    model: 'm',
    scopes: ['run', `instance:${instance}`],
    estimate: { usd, tokens: 0 },
    ...(signal ? { signal } : {}),
  });

/** Lets every settled promise callback run (no timers involved). */
const settle = () => new Promise((r) => setImmediate(r));

function tracked(p: Promise<PermitOutcome>): { done: () => boolean; outcome: Promise<PermitOutcome> } {
  let done = false;
  const outcome = p.then((o) => {
    done = true;
    return o;
  });
  return { done: () => done, outcome };
}

function setup(opts: { maxWaitMs?: number; budget?: BudgetLedger } = {}) {
  const opened: string[] = [];
  const warmup = new CacheWarmup({
    maxWaitMs: opts.maxWaitMs ?? 60_000,
    onOpen: (_task, reason) => opened.push(reason),
  });
  const broker = new PermitBroker({ budget: opts.budget ?? new BudgetLedger(), gate: warmup });
  warmup.arm('apply', ['apply-a', 'apply-b', 'apply-c']);
  return { warmup, broker, opened };
}

describe('cache warm-up before a fan-out wave', () => {
  it('holds the wave until the first request starts streaming; the leader and other tasks are not held', async () => {
    const { warmup, broker, opened } = setup();
    const lead = await ask(broker, 'apply-b');
    expect(lead.ok).toBe(true);
    const a = tracked(ask(broker, 'apply-a'));
    const c = tracked(ask(broker, 'apply-c'));
    const leadAgain = await ask(broker, 'apply-b'); // the leader's own next call (a retry) is never held
    const other = await ask(broker, 'review'); // not in the wave
    expect(leadAgain.ok && other.ok).toBe(true);
    await settle();
    expect(a.done() || c.done()).toBe(false);
    expect(warmup.isWarming('apply')).toBe(true);
    expect(broker.waitReason()).toMatch(/prompt cache is warmed/);
    if (lead.ok) broker.started(lead.slotId);
    expect((await a.outcome).ok && (await c.outcome).ok).toBe(true);
    expect(opened).toEqual(['the first request started streaming']);
    expect(broker.waitReason()).toBe('rate limit');
    // Open for good: later first requests of the wave pass at once.
    expect((await ask(broker, 'apply-c')).ok).toBe(true);
    broker.close();
  });

  it('lets the wave go when the first request is refused, or its permit ends without a response', async () => {
    const budget = new BudgetLedger({ usd: 1 });
    const refused = setup({ budget });
    const lead = await ask(refused.broker, 'apply-a', undefined, 5); // over the run budget
    expect(lead.ok).toBe(false);
    expect((await ask(refused.broker, 'apply-b')).ok).toBe(true);
    expect(refused.opened[0]).toMatch(/refused/);

    const failed = setup();
    const first = await ask(failed.broker, 'apply-a');
    const waiting = tracked(ask(failed.broker, 'apply-b'));
    await settle();
    expect(waiting.done()).toBe(false);
    if (first.ok) failed.broker.release(first.slotId); // e.g. a connection error before any response
    expect((await waiting.outcome).ok).toBe(true);
    expect(failed.opened).toEqual(['the first request ended without a response']);
  });

  it('stops waiting after maxWaitMs, when the run stops, and for a cancelled request', async () => {
    const slow = setup({ maxWaitMs: 1 });
    await ask(slow.broker, 'apply-a'); // granted, never starts
    expect((await ask(slow.broker, 'apply-b')).ok).toBe(true);
    expect(slow.opened[0]).toMatch(/did not start within 1 ms/);

    const stopping = setup();
    await ask(stopping.broker, 'apply-a');
    const held = tracked(ask(stopping.broker, 'apply-b'));
    await settle();
    expect(held.done()).toBe(false);
    stopping.broker.drain('the run was interrupted');
    await held.outcome;
    expect(stopping.opened).toEqual(['the run is stopping']);

    const cancelled = setup();
    await ask(cancelled.broker, 'apply-a');
    const ac = new AbortController();
    const gone = tracked(ask(cancelled.broker, 'apply-b', ac.signal));
    await settle();
    expect(gone.done()).toBe(false);
    ac.abort();
    expect(await gone.outcome).toEqual({ ok: false, reason: 'aborted' });
    expect(cancelled.warmup.isWarming('apply')).toBe(true); // the wave itself still waits for its leader
    cancelled.broker.close();
  });

  it('warms only fan-outs at or over the threshold, on the anthropic provider, unless switched off', () => {
    expect(warmsCache(undefined, 'anthropic', 4)).toBe(true);
    expect(warmsCache(undefined, 'anthropic', 3)).toBe(false);
    expect(warmsCache(12, 'anthropic', 11)).toBe(false);
    expect(warmsCache(2, 'anthropic', 2)).toBe(true);
    expect(warmsCache(false, 'anthropic', 100)).toBe(false);
    expect(warmsCache(undefined, 'scripted', 100)).toBe(false);
  });
});
