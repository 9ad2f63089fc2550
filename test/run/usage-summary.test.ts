// Estimated token counts (a server that reported none) stay flagged when usage is summed, so
// result.json and the report can say the cost is approximate.
import { describe, expect, it } from 'vitest';
import { addUsageSummary, UsageSummarySchema, zeroUsage } from '../../src/run/usage-summary.js';

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
