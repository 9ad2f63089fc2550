// What a refused call (429) leaves in the learned buckets (learned-limits.ts): no tokens either
// way; its request stays counted at OpenAI, which counts refused requests against the requests per
// minute (help.openai.com/en/articles/5955604), and is given back at Anthropic, which documents no
// such rule. A hand-moved clock: nothing here waits.
import { describe, expect, it } from 'vitest';
import type { RateLimitSnapshot } from '../../../src/ai/rate-limit-headers.js';
import { LearnedLimits } from '../../../src/orchestrator/pacing/learned-limits.js';

const call = { uncachedInput: 100, cachedInput: 0, maxOutput: 100 };

/** One request left of 60 a minute (one a second back), tokens plenty. */
function oneRequestLeft(vendor: RateLimitSnapshot['vendor']): LearnedLimits {
  const limits = new LearnedLimits({ now: () => 0, windowMs: 60_000 });
  const plenty = { limit: 1_000_000, remaining: 1_000_000 };
  limits.learn('m', 'p', {
    vendor,
    keyHash: 'k',
    limits:
      vendor === 'openai'
        ? { requests: { limit: 60, remaining: 1 }, tokens: plenty }
        : { requests: { limit: 60, remaining: 1 }, inputTokens: plenty, outputTokens: plenty },
  });
  return limits;
}

describe('a refused call in the learned limits', () => {
  it('OpenAI: its request stays counted, so the next call waits for the requests bucket', () => {
    const limits = oneRequestLeft('openai');
    const r = limits.reserve('m', 'p', call, 'k');
    if (!r) throw new Error('nothing learned');
    // A 429 without headers (nothing to follow): only the settle says what the provider counted.
    limits.settle(r, 'refused');
    expect(limits.waitTime('m', 'p', call, 'k')).toBe(1000);
    // Its tokens came back.
    expect(limits.waitTime('m', 'p', { ...call, uncachedInput: 999_000 }, 'k')).toBe(1000);
  });

  it('Anthropic: the request is given back with the tokens', () => {
    const limits = oneRequestLeft('anthropic');
    const r = limits.reserve('m', 'p', call, 'k');
    if (!r) throw new Error('nothing learned');
    limits.settle(r, 'refused');
    expect(limits.waitTime('m', 'p', call, 'k')).toBe(0);
  });
});
