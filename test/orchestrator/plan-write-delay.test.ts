// plan.md's rewrites stay linear in a run's instances: each rewrite renders all N of them, and a
// run of N instances lasts about N times as long, so the delay between rewrites grows with N past
// planInstancesPerInterval. Counted: the instances rendered per second of the run are bounded,
// whatever N (with the fixed 200 ms they grew with N: 5 per ms at 1,000, 50 per ms at 10,000).
import { describe, expect, it } from 'vitest';
import { ORCHESTRATOR_DEFAULTS } from '../../src/orchestrator/defaults.js';
import { planWriteDelayMs } from '../../src/orchestrator/run-files.js';

describe('plan.md rewrite delay', () => {
  it('keeps the instances rendered per millisecond bounded for any run size', () => {
    const d = ORCHESTRATOR_DEFAULTS;
    const bound = d.planInstancesPerInterval / d.planWriteIntervalMs;
    for (const n of [1, 10, 100, 1_000, 10_000, 100_000]) expect(n / planWriteDelayMs(n)).toBeLessThanOrEqual(bound);
    // A small run keeps the short interval (plan.md stays fresh).
    expect(planWriteDelayMs(32)).toBe(d.planWriteIntervalMs);
    expect(planWriteDelayMs(1_000)).toBe(d.planWriteIntervalMs * 10);
  });
});
