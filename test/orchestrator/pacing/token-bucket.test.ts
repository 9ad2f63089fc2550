// The token bucket and the book of learned limits, on an injected clock: continuous refill,
// reservations settled with real usage, what each vendor's limits count, the first call of a model
// going alone until its headers are known, and limits kept per API key.
import { describe, expect, it } from 'vitest';
import type { RateLimitSnapshot } from '../../../src/ai/rate-limit-headers.js';
import { LearnedLimits } from '../../../src/orchestrator/pacing/learned-limits.js';
import { TokenBucket } from '../../../src/orchestrator/pacing/token-bucket.js';

const usage = (input: number, output: number, cacheRead = 0, cacheWrite = 0) => ({
  input,
  output,
  cacheRead,
  cacheWrite,
  totalTokens: input + output + cacheRead + cacheWrite,
  cost: 0,
});

describe('TokenBucket', () => {
  it('refills continuously at capacity per window, never above capacity', () => {
    let t = 0;
    const b = new TokenBucket({ capacity: 600, windowMs: 60_000, level: 0, now: () => t });
    expect(b.level).toBe(0);
    t = 1000;
    expect(b.level).toBeCloseTo(10);
    t = 120_000;
    expect(b.level).toBe(600);
  });

  it('says how long an amount waits; an amount over capacity waits for a full bucket', () => {
    let t = 0;
    const b = new TokenBucket({ capacity: 600, windowMs: 60_000, level: 100, now: () => t });
    expect(b.waitTime(100)).toBe(0);
    expect(b.waitTime(160)).toBe(6000);
    expect(b.waitTime(10_000)).toBe(50_000);
    b.take(100);
    expect(b.waitTime(1)).toBe(100);
    t = 100;
    expect(b.waitTime(1)).toBe(0);
  });

  it('settles a reservation with what was used: the unused part comes back, an overrun is taken', () => {
    const b = new TokenBucket({ capacity: 1000, level: 1000, now: () => 0 });
    b.take(800);
    b.settle(800, 300);
    expect(b.level).toBe(700);
    b.take(400);
    b.settle(400, 900);
    expect(b.level).toBe(-200);
  });

  it('follows what the provider says: a new limit, and never more than it says remains', () => {
    const b = new TokenBucket({ capacity: 1000, level: 900, now: () => 0 });
    b.observe(1000, 950);
    expect(b.level).toBe(900);
    b.observe(1000, 200);
    expect(b.level).toBe(200);
    b.observe(100);
    expect(b.capacity).toBe(100);
    expect(b.level).toBe(100);
    expect(() => new TokenBucket({ capacity: 0 })).toThrow(/positive capacity/);
  });
});

const anthropic = (inputRemaining: number, keyHash = 'k1'): RateLimitSnapshot => ({
  vendor: 'anthropic',
  keyHash,
  limits: {
    requests: { limit: 60, remaining: 59 },
    inputTokens: { limit: 6000, remaining: inputRemaining },
    outputTokens: { limit: 60_000, remaining: 60_000 },
  },
});

describe('LearnedLimits', () => {
  it('Anthropic: paces on uncached input (cache reads are free) and max_tokens', () => {
    let t = 0;
    const l = new LearnedLimits({ now: () => t });
    l.learn('m', 'anthropic', anthropic(1000));
    const call = { uncachedInput: 800, cachedInput: 50_000, maxOutput: 1000 };
    expect(l.waitTime('m', 'anthropic', call)).toBe(0);
    const r = l.reserve('m', 'anthropic', call)!;
    expect(r.amounts).toEqual({ requests: 1, inputTokens: 800, outputTokens: 1000, tokens: 1800 });
    // 200 left at 100 tokens/s: another 800 waits 6 s.
    expect(l.waitTime('m', 'anthropic', call)).toBe(6000);
    expect(l.binding('m', 'anthropic', call)).toMatch(/input tokens per minute \(6000, learned\)/);
    // It really sent 300 uncached (200 input + 100 written to the cache): 500 come back.
    l.settle(r, usage(200, 50, 50_000, 100));
    expect(l.waitTime('m', 'anthropic', call)).toBe(1000);
    t = 1000;
    expect(l.waitTime('m', 'anthropic', call)).toBe(0);
  });

  it('OpenAI: all input counts, cached too, with max_tokens against tokens per minute', () => {
    const l = new LearnedLimits({ now: () => 0 });
    l.learn('g', 'openai', {
      vendor: 'openai',
      limits: { requests: { limit: 100, remaining: 100 }, tokens: { limit: 10_000, remaining: 10_000 } },
    });
    const r = l.reserve('g', 'openai', { uncachedInput: 1000, cachedInput: 4000, maxOutput: 2000 })!;
    expect(r.amounts).toEqual({ requests: 1, tokens: 7000 });
    l.settle(r, usage(1000, 500, 4000));
    expect(l.waitTime('g', 'openai', { uncachedInput: 0, cachedInput: 0, maxOutput: 4500 })).toBe(0);
    expect(l.waitTime('g', 'openai', { uncachedInput: 0, cachedInput: 0, maxOutput: 4600 })).toBeGreaterThan(0);
  });

  it('the first call of a model goes alone until its response says the limits; a server without them is not paced', () => {
    const l = new LearnedLimits({ now: () => 0 });
    const call = { uncachedInput: 10, cachedInput: 0, maxOutput: 10 };
    expect(l.waitTime('m', 'p', call)).toBe(0);
    expect(l.reserve('m', 'p', call)).toBeUndefined();
    expect(l.waitTime('m', 'p', call)).toBe(2000);
    l.learn('m', 'p', undefined);
    expect(l.waitTime('m', 'p', call)).toBe(0);
    // A probe that ended without any response lets the next call probe.
    l.reserve('m2', 'p', call);
    expect(l.waitTime('m2', 'p', call)).toBe(2000);
    l.probeEnded('m2', 'p');
    expect(l.waitTime('m2', 'p', call)).toBe(0);
  });

  it('a probe whose response is slow to come holds the other calls for probeMaxMs at most, then lets them go', () => {
    let now = 1000;
    const l = new LearnedLimits({ now: () => now, probeMaxMs: 2000 });
    const call = { uncachedInput: 10, cachedInput: 0, maxOutput: 10 };
    l.reserve('m', 'p', call);
    now += 1500;
    expect(l.waitTime('m', 'p', call)).toBe(500);
    now += 500;
    expect(l.waitTime('m', 'p', call)).toBe(0);
    // The rest go out unpaced and do not become probes; the probe's late headers still teach the limits.
    expect(l.reserve('m', 'p', call)).toBeUndefined();
    l.learn('m', 'p', { vendor: 'openai', limits: { requests: { limit: 1, remaining: 0 } } });
    expect(l.waitTime('m', 'p', call)).toBeGreaterThan(0);
  });

  it('follows what remained when a response left, minus the calls granted after it that the provider had not seen', () => {
    const l = new LearnedLimits({ now: () => 0 });
    l.learn('m', 'anthropic', anthropic(6000));
    const call = (n: number) => ({ uncachedInput: n, cachedInput: 0, maxOutput: 0 });
    const a = l.reserve('m', 'anthropic', call(1000))!;
    l.reserve('m', 'anthropic', call(1000));
    // a's response: 3000 left (someone else spent 2000); b, granted after a, was not counted yet.
    l.learn('m', 'anthropic', anthropic(3000), a);
    expect(l.waitTime('m', 'anthropic', call(2000))).toBe(0);
    expect(l.waitTime('m', 'anthropic', call(2001))).toBeGreaterThan(0);
  });

  it('keeps limits per API key hash; a call that names no key is paced by the key learned last', () => {
    const l = new LearnedLimits({ now: () => 0 });
    const call = { uncachedInput: 500, cachedInput: 0, maxOutput: 0 };
    l.learn('m', 'anthropic', anthropic(0, 'key-a'));
    l.learn('m', 'anthropic', anthropic(6000, 'key-b'));
    expect(l.waitTime('m', 'anthropic', call, 'key-a')).toBe(5000);
    expect(l.waitTime('m', 'anthropic', call, 'key-b')).toBe(0);
    expect(l.waitTime('m', 'anthropic', call)).toBe(0);
    expect(l.list().map((e) => `${e.keyHash}:${e.kind}`)).toContain('key-a:inputTokens');
  });
});
