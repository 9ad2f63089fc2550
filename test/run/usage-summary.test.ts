// Estimated token counts (a server that reported none) stay flagged when usage is summed, so
// result.json and the report can say the cost is approximate.
import { describe, expect, it } from 'vitest';
import { addUsageSummary, UsageSummarySchema, usageGap, zeroUsage } from '../../src/run/usage-summary.js';

describe('addUsageSummary', () => {
  it('keeps the estimated flag of any part, and adds none when no part had it', () => {
    const exact = { ...zeroUsage(), input: 10, totalTokens: 10, cost: 0.1 };
    const estimated = { ...zeroUsage(), input: 5, totalTokens: 5, cost: 0.05, estimated: true };
    expect(addUsageSummary(exact, exact).estimated).toBeUndefined();
    expect(addUsageSummary(exact, estimated)).toMatchObject({ input: 15, estimated: true });
    expect(addUsageSummary(estimated, exact).estimated).toBe(true);
    expect(UsageSummarySchema.parse(addUsageSummary(exact, estimated)).estimated).toBe(true);
  });
});

describe('usageGap', () => {
  it('is what a worker counted beyond what arrived, never negative, and nothing when no token is missing', () => {
    const received = { ...zeroUsage(), input: 100, output: 20, totalTokens: 120, cost: 0.5 };
    expect(usageGap({ ...received }, received)).toBeUndefined();
    // A higher cost alone (a float) is no missing call.
    expect(usageGap({ ...received, cost: 0.6 }, received)).toBeUndefined();
    const reported = { ...zeroUsage(), input: 150, output: 10, totalTokens: 160, cost: 0.7 };
    expect(usageGap(reported, received)).toEqual({
      input: 50,
      output: 0,
      cacheRead: 0,
      cacheWrite: 0,
      totalTokens: 40,
      cost: expect.closeTo(0.2, 10),
    });
  });
});
