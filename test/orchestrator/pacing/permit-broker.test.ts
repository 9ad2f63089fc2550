import { describe, expect, it } from 'vitest';
import { BudgetLedger } from '../../../src/orchestrator/schedule/budget.js';
import { PermitBroker, providerScope } from '../../../src/orchestrator/pacing/permit-broker.js';

const usage = (cost: number, tokens = 0) => ({
  input: 0,
  output: 0,
  cacheRead: 0,
  cacheWrite: 0,
  totalTokens: tokens,
  cost,
});

describe('PermitBroker', () => {
  it('grants in arrival order and makes later requests wait for a rate-limit slot', async () => {
    let t = 0;
    const broker = new PermitBroker({
      rateLimits: { m: 2 },
      budget: new BudgetLedger(),
      windowMs: 50,
      marginMs: 0,
      now: () => t,
    });
    const a = await broker.request({ model: 'm', scopes: ['run'], estimate: { usd: 0, tokens: 0 } });
    const b = await broker.request({ model: 'm', scopes: ['run'], estimate: { usd: 0, tokens: 0 } });
    expect(a.ok && b.ok).toBe(true);
    let cGranted = false;
    const c = broker.request({ model: 'm', scopes: ['run'], estimate: { usd: 0, tokens: 0 } }).then((o) => {
      cGranted = o.ok;
      return o;
    });
    await new Promise((r) => setTimeout(r, 5));
    expect(cGranted).toBe(false);
    expect(broker.waiting).toBe(1);
    if (a.ok) broker.started(a.slotId, 0);
    t = 50; // one window after a's response started
    if (a.ok) broker.usage(a.slotId, usage(0));
    expect((await c).ok).toBe(true);
    broker.close();
  });

  it("refuses naming the run budget once it is spent, and a task budget as the task's", async () => {
    const budget = new BudgetLedger({ usd: 1 });
    const broker = new PermitBroker({ budget });
    const a = await broker.request({ model: 'm', scopes: ['run'], estimate: { usd: 0.1, tokens: 0 } });
    expect(a.ok).toBe(true);
    if (a.ok) broker.usage(a.slotId, usage(0.95));
    const b = await broker.request({ model: 'm', scopes: ['run'], estimate: { usd: 0.1, tokens: 0 } });
    expect(b).toMatchObject({ ok: false, budget: 'run' });
    if (!b.ok) expect(b.reason).toMatch(/run budget/);
    budget.setLimits('task:t', { tokens: 10 });
    const c = await broker.request({ model: 'm', scopes: ['run', 'task:t'], estimate: { usd: 0, tokens: 20 } });
    expect(c).toMatchObject({ ok: false, budget: 'task' });
  });

  it("a provider's budget refuses only that provider's calls, naming it; other providers go on", async () => {
    const budget = new BudgetLedger({ usd: 10 });
    budget.setLimits(providerScope('local'), { tokens: 100 });
    const broker = new PermitBroker({ budget });
    const zero = { usd: 0, tokens: 10 };
    const a = await broker.request({ model: 'qwen', provider: 'local', scopes: ['run'], estimate: zero });
    expect(a.ok).toBe(true);
    if (a.ok) broker.usage(a.slotId, usage(0, 95));
    expect(budget.spend(providerScope('local')).tokens).toBe(95);
    const b = await broker.request({ model: 'qwen', provider: 'local', scopes: ['run'], estimate: zero });
    expect(b).toMatchObject({ ok: false, budget: 'provider' });
    if (!b.ok) expect(b.reason).toMatch(/^budget of provider local of 100 tokens is spent \(95 used/);
    // Another model of the same provider is refused too; another provider is not.
    const c = await broker.request({ model: 'llama', provider: 'local', scopes: ['run'], estimate: zero });
    expect(c).toMatchObject({ ok: false, budget: 'provider' });
    const d = await broker.request({ model: 'qwen', provider: 'anthropic', scopes: ['run'], estimate: zero });
    expect(d.ok).toBe(true);
    // The run's own scope still counts every call.
    expect(budget.spend('run').tokens).toBe(95);
    broker.close();
  });

  it("a provider's rate limit holds its models together; another provider's requests pass", async () => {
    let t = 0;
    const broker = new PermitBroker({
      providerRateLimits: { local: { total: 2, perModel: {} }, gw: { perModel: { m: 1 } } },
      budget: new BudgetLedger(),
      windowMs: 50,
      marginMs: 0,
      now: () => t,
    });
    const req = (model: string, provider: string) =>
      broker.request({ model, provider, scopes: ['run'], estimate: { usd: 0, tokens: 0 } });
    const a = await req('qwen', 'local');
    const b = await req('llama', 'local');
    expect(a.ok && b.ok).toBe(true);
    let cGranted = false;
    const c = req('mistral', 'local').then((o) => {
      cGranted = o.ok;
      return o;
    });
    // Another provider, and the same model id on a provider with its own per-model limit, pass at once.
    expect((await req('qwen', 'anthropic')).ok).toBe(true);
    expect((await req('m', 'gw')).ok).toBe(true);
    let eGranted = false;
    const e = req('m', 'gw').then((o) => {
      eGranted = o.ok;
      return o;
    });
    await new Promise((r) => setTimeout(r, 5));
    expect(cGranted).toBe(false);
    expect(eGranted).toBe(false);
    if (a.ok) broker.started(a.slotId, 0);
    t = 50;
    if (a.ok) broker.usage(a.slotId, usage(0));
    expect((await c).ok).toBe(true);
    expect(eGranted).toBe(false);
    broker.close();
    expect((await e).ok).toBe(false);
  });

  it('pause() holds every request for the model until the delay has passed', async () => {
    const broker = new PermitBroker({ budget: new BudgetLedger() });
    broker.pause('m', 40);
    const t0 = Date.now();
    const a = await broker.request({ model: 'm', scopes: ['run'], estimate: { usd: 0, tokens: 0 } });
    expect(a.ok).toBe(true);
    expect(Date.now() - t0).toBeGreaterThanOrEqual(35);
    const other = await broker.request({ model: 'other', scopes: ['run'], estimate: { usd: 0, tokens: 0 } });
    expect(other.ok).toBe(true);
  });

  it('pause() also holds a rate-limited model with free slots, and its waiting requests keep their order', async () => {
    const broker = new PermitBroker({ rateLimits: { m: 10 }, budget: new BudgetLedger() });
    broker.pause('m', 40);
    const t0 = Date.now();
    const order: string[] = [];
    const ask = (name: string) =>
      broker.request({ model: 'm', scopes: ['run'], estimate: { usd: 0, tokens: 0 } }).then((o) => {
        order.push(name);
        return o;
      });
    const [a, b] = await Promise.all([ask('a'), ask('b')]);
    expect(a.ok && b.ok).toBe(true);
    expect(Date.now() - t0).toBeGreaterThanOrEqual(35);
    expect(order).toEqual(['a', 'b']);
    broker.close();
  });

  it('a waiter that no longer fits the budget is refused while it waits, not when its turn comes', async () => {
    const t = 0;
    const budget = new BudgetLedger({ usd: 1 });
    const broker = new PermitBroker({ rateLimits: { m: 1 }, budget, windowMs: 60_000, marginMs: 0, now: () => t });
    const a = await broker.request({ model: 'm', scopes: ['run'], estimate: { usd: 0.1, tokens: 0 } });
    expect(a.ok).toBe(true);
    const b = broker.request({ model: 'm', scopes: ['run'], estimate: { usd: 0.1, tokens: 0 } });
    await new Promise((r) => setTimeout(r, 5));
    expect(broker.waiting).toBe(1);
    if (a.ok) broker.usage(a.slotId, usage(0.95)); // the slot stays held for a window: b cannot go yet
    expect(await b).toMatchObject({ ok: false, budget: 'run' });
    expect(broker.waiting).toBe(0);
    broker.close();
  });

  it('drain() refuses every waiting request', async () => {
    const broker = new PermitBroker({ rateLimits: { m: 1 }, budget: new BudgetLedger() });
    await broker.request({ model: 'm', scopes: ['run'], estimate: { usd: 0, tokens: 0 } });
    const waiting = [1, 2].map(() => broker.request({ model: 'm', scopes: ['run'], estimate: { usd: 0, tokens: 0 } }));
    await new Promise((r) => setTimeout(r, 5));
    broker.drain('the run was interrupted');
    expect(await Promise.all(waiting)).toEqual([
      { ok: false, reason: 'the run was interrupted' },
      { ok: false, reason: 'the run was interrupted' },
    ]);
    expect(broker.waiting).toBe(0);
  });

  it('an aborted waiter is removed from the queue', async () => {
    const broker = new PermitBroker({ rateLimits: { m: 1 }, budget: new BudgetLedger() });
    await broker.request({ model: 'm', scopes: ['run'], estimate: { usd: 0, tokens: 0 } });
    const ac = new AbortController();
    const p = broker.request({ model: 'm', scopes: ['run'], estimate: { usd: 0, tokens: 0 }, signal: ac.signal });
    ac.abort();
    expect(await p).toMatchObject({ ok: false, reason: 'aborted' });
    expect(broker.waiting).toBe(0);
  });
});
