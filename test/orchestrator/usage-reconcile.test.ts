// The second line of exact accounting: when an instance's result says it used more than its
// usage messages brought in, the coordinator charges the difference to the budget and logs it as
// one more call_usage, so run totals (built from call_usage) and budgets never undercount.
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { AgentLaunch } from '../../src/orchestrator/execution/agent-launch.js';
import { BudgetLedger } from '../../src/orchestrator/schedule/budget.js';
import { MessageRouter } from '../../src/orchestrator/control/message-router.js';
import { PermitBroker } from '../../src/orchestrator/pacing/permit-broker.js';
import { createWorkerPool } from '../../src/orchestrator/execution/pool.js';
import type { RunEventInput } from '../../src/run/run-events.js';
import type { InstanceTask } from '../../src/orchestrator/execution/instance-task.js';
import { SENT, UNSENT } from './fixtures/usage-worker.js';

const pool = createWorkerPool({
  concurrency: 1,
  filename: pathToFileURL(join(import.meta.dirname, 'fixtures/usage-worker.ts')).href,
});
afterAll(() => pool.destroy());

describe('usage reconciliation', () => {
  it('a shortfall between the result total and the usage messages is charged and logged as call_usage', async () => {
    const ledger = new BudgetLedger();
    const emitted: RunEventInput[] = [];
    const launch = new AgentLaunch(
      {
        pool,
        broker: new PermitBroker({ budget: ledger }),
        router: new MessageRouter({ instancesOf: () => [], hasInstance: () => false, isFinished: () => false }),
        emit: (e) => emitted.push(e),
        estimate: () => ({ usd: 0, tokens: 0 }),
        onUsage: () => {},
        onBudgetDenied: () => {},
      },
      { task: 't', key: 't', attempt: 1, scopes: ['run', 'instance:t'] },
      {} as Omit<InstanceTask, 'port'>,
      {},
    );
    const r = await launch.result;
    expect(r.ok).toBe(true);
    const calls = emitted.flatMap((e) => (e.type === 'call_usage' ? [e.usage] : []));
    expect(calls).toHaveLength(2);
    expect(calls[0]).toMatchObject(SENT);
    expect(calls[1]).toMatchObject({
      input: UNSENT.input,
      output: UNSENT.output,
      cacheRead: UNSENT.cacheRead,
      cacheWrite: UNSENT.cacheWrite,
      totalTokens: UNSENT.totalTokens,
    });
    expect(calls[1]!.cost).toBeCloseTo(UNSENT.cost, 12);
    // The budget was charged for both calls.
    expect(ledger.spend('instance:t').tokens).toBe(SENT.totalTokens + UNSENT.totalTokens);
    expect(ledger.spend('run').usd).toBeCloseTo(SENT.cost + UNSENT.cost, 12);
  });
});
