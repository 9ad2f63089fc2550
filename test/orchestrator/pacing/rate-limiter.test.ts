import { describe, expect, it } from 'vitest';
import { SlidingWindowLimiter } from '../../../src/orchestrator/pacing/rate-limiter.js';
import { seededRandom } from '../../helpers/seeded-random.js';

function clock(start = 0) {
  let t = start;
  return { now: () => t, advance: (ms: number) => (t += ms) };
}

describe('SlidingWindowLimiter', () => {
  it('grants at most `limit` slots inside one window', () => {
    const c = clock();
    const l = new SlidingWindowLimiter({ limit: 3, windowMs: 1000, marginMs: 50, now: c.now });
    const ids = [l.tryAcquire(), l.tryAcquire(), l.tryAcquire()];
    expect(ids.every((x) => x !== undefined)).toBe(true);
    expect(l.tryAcquire()).toBeUndefined();
  });

  it('holds a slot until a full window (plus margin) after its response started', () => {
    const c = clock();
    const l = new SlidingWindowLimiter({ limit: 1, windowMs: 1000, marginMs: 50, now: c.now });
    const id = l.tryAcquire()!;
    c.advance(300); // the request reached the provider late, its response started at t=300
    l.started(id);
    c.advance(1000); // t=1300: a window after the grant, but not after the arrival
    expect(l.tryAcquire()).toBeUndefined();
    expect(l.waitTime()).toBe(50);
    c.advance(50);
    expect(l.tryAcquire()).toBeDefined();
  });

  it('a slot whose response never started is held (wait is Infinity) until started() is called', () => {
    const c = clock();
    const l = new SlidingWindowLimiter({ limit: 1, windowMs: 1000, now: c.now });
    const id = l.tryAcquire()!;
    c.advance(5000);
    expect(l.waitTime()).toBe(Infinity);
    l.started(id, 5000);
    expect(l.waitTime()).toBe(1250);
  });

  it('no rolling window of arrivals ever holds more than the limit, whatever the jitter', () => {
    const c = clock();
    const limit = 5;
    const l = new SlidingWindowLimiter({ limit, windowMs: 1000, marginMs: 0, now: c.now });
    const arrivals: number[] = [];
    const rand = seededRandom(7);
    const pending: { id: number; arriveAt: number }[] = [];
    for (let step = 0; step < 20_000; step++) {
      c.advance(1);
      for (const p of pending.splice(0)) {
        if (p.arriveAt <= c.now()) {
          arrivals.push(p.arriveAt);
          l.started(p.id, p.arriveAt);
        } else pending.push(p);
      }
      const id = l.tryAcquire();
      if (id !== undefined) pending.push({ id, arriveAt: c.now() + Math.floor(rand() * 40) });
    }
    arrivals.sort((a, b) => a - b);
    let worst = 0;
    for (let i = 0, j = 0; i < arrivals.length; i++) {
      while (arrivals[i]! - arrivals[j]! >= 1000) j++;
      worst = Math.max(worst, i - j + 1);
    }
    expect(arrivals.length).toBeGreaterThan(50);
    expect(worst).toBeLessThanOrEqual(limit);
  });
});
