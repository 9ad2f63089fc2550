import { describe, expect, it } from 'vitest';
import { BudgetLedger } from '../../src/orchestrator/budget.js';

describe('BudgetLedger', () => {
  it('refuses a reservation that would pass the run cap, counting outstanding reservations', () => {
    const b = new BudgetLedger({ usd: 1 });
    const r1 = b.reserve(['run'], { usd: 0.6, tokens: 0 });
    expect(r1.ok).toBe(true);
    const r2 = b.reserve(['run'], { usd: 0.6, tokens: 0 });
    expect(r2.ok).toBe(false);
    if (!r2.ok) expect(r2.reason).toMatch(/run budget of \$1 is spent/);
  });

  it('settling a reservation with real usage frees the difference', () => {
    const b = new BudgetLedger({ tokens: 1000 });
    const r = b.reserve(['run', 'task:a'], { usd: 0, tokens: 800 });
    expect(r.ok).toBe(true);
    if (r.ok) b.release(r.id);
    b.charge(['run', 'task:a'], { usd: 0, tokens: 300 });
    expect(b.reserve(['run'], { usd: 0, tokens: 700 }).ok).toBe(true);
    expect(b.spend('task:a').tokens).toBe(300);
  });

  it('task scopes have their own caps', () => {
    const b = new BudgetLedger({ usd: 100 });
    b.setLimits('task:x', { usd: 0.5 });
    b.charge(['run', 'task:x'], { usd: 0.5, tokens: 10 });
    expect(b.exhausted('task:x')).toBe(true);
    expect(b.exhausted('run')).toBe(false);
    const v = b.check(['run', 'task:x'], { usd: 0.01, tokens: 0 });
    expect(v.ok).toBe(false);
  });
});
