import { describe, expect, it } from 'vitest';
import { BudgetLedger } from '../../../src/orchestrator/schedule/budget.js';

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

  it('reservations released in any order, a released one twice included, leave exactly the cap free again', () => {
    const b = new BudgetLedger({ usd: 0.3 });
    const ids = [0.1, 0.1, 0.1].map((usd) => b.reserve(['run', 'task:a'], { usd, tokens: 0 }));
    expect(ids.every((r) => r.ok)).toBe(true);
    expect(b.reserve(['run'], { usd: 0.01, tokens: 0 }).ok).toBe(false);
    for (const i of [1, 0, 1, 2]) {
      const r = ids[i]!;
      if (r.ok) b.release(r.id);
    }
    // 0.1 + 0.1 + 0.1 - 0.1 - 0.1 - 0.1 is not 0 in floating point; nothing reserved must leave the whole cap.
    const whole = b.reserve(['run'], { usd: 0.3, tokens: 0 });
    expect(whole.ok).toBe(true);
  });

  it('a run without caps reports no limits, one with a task cap does', () => {
    expect(new BudgetLedger().limited).toBe(false);
    const b = new BudgetLedger({});
    b.setLimits('task:x', { tokens: 10 });
    expect(b.limited).toBe(true);
  });
});
