// Neither end of the permit protocol (the worker link, the coordinator's broker) leaves anything
// on the agent's abort signal once a permit is answered: that signal lives as long as the agent,
// and a listener per model call passed node's limit of 10 after ten turns (a
// MaxListenersExceededWarning printed over the live view).
import { getEventListeners } from 'node:events';
import { MessageChannel } from 'node:worker_threads';
import { describe, expect, it } from 'vitest';
import { BudgetLedger } from '../../src/orchestrator/schedule/budget.js';
import { PermitBroker } from '../../src/orchestrator/pacing/permit-broker.js';
import { WorkerLink } from '../../src/orchestrator/worker/worker-link.js';

describe('worker link permits', () => {
  it('twenty granted permits on one signal leave no abort listener behind', async () => {
    const { port1, port2 } = new MessageChannel();
    const link = new WorkerLink(port1);
    // The coordinator's end: grant every request.
    port2.on('message', (m: { type: string; requestId?: number }) => {
      if (m.type === 'permit_request')
        port2.postMessage({ type: 'permit_grant', requestId: m.requestId, slotId: m.requestId });
    });
    const agent = new AbortController();
    for (let i = 0; i < 20; i++) {
      const answer = await link.request('m', 'turn', agent.signal);
      expect(answer.ok).toBe(true);
    }
    expect(getEventListeners(agent.signal, 'abort')).toHaveLength(0);
    port1.close();
    port2.close();
  });

  it('an abort while waiting still answers "aborted"', async () => {
    const { port1, port2 } = new MessageChannel();
    const link = new WorkerLink(port1);
    const agent = new AbortController();
    const pending = link.request('m', 'turn', agent.signal);
    agent.abort();
    expect(await pending).toEqual({ ok: false, reason: 'aborted' });
    port1.close();
    port2.close();
  });
});

describe('permit broker listeners', () => {
  it('twenty granted permits on one signal leave no abort listener behind', async () => {
    const broker = new PermitBroker({ budget: new BudgetLedger() });
    const agent = new AbortController();
    for (let i = 0; i < 20; i++) {
      const o = await broker.request({
        model: 'm',
        scopes: ['run'],
        estimate: { usd: 0, tokens: 0 },
        signal: agent.signal,
      });
      expect(o.ok).toBe(true);
      if (o.ok) broker.usage(o.slotId, { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, totalTokens: 0, cost: 0 });
    }
    expect(getEventListeners(agent.signal, 'abort')).toHaveLength(0);
    broker.close();
  });
});
