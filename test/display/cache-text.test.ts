import { describe, expect, it } from 'vitest';
import { cacheReadShare, cacheText } from '../../src/display/cache-text.js';

const usage = (input: number, cacheRead: number, cacheWrite: number, cacheSaved?: number) => ({
  input,
  output: 10,
  cacheRead,
  cacheWrite,
  totalTokens: input + 10 + cacheRead + cacheWrite,
  cost: 0.01,
  ...(cacheSaved !== undefined ? { cacheSaved } : {}),
});

describe('cache figures as text', () => {
  it('gives the share of all input read from the cache, what was written, and the saving', () => {
    expect(cacheReadShare(usage(1_000, 8_000, 1_000))).toBe(0.8);
    expect(cacheText(usage(1_000, 8_000, 1_000, 0.0207))).toBe(
      'cache: 80% of input read (8,000), 1,000 written, saved $0.0207',
    );
  });

  it('says when caching cost more than it saved, and says nothing when nothing was cached', () => {
    expect(cacheText(usage(100, 0, 4_000, -0.003))).toBe(
      'cache: 0% of input read (0), 4,000 written, cost $0.0030 more than uncached',
    );
    expect(cacheText(usage(5_000, 0, 0))).toBeUndefined();
  });
});
