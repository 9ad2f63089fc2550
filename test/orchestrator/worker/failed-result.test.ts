// A failed worker result keeps its reason's data (issue 43): whose budget refused and what was
// spent travel to the coordinator as fields, so a run budget spent inside an agent stops the run
// without anyone taking "Budget exhausted: ..." apart.
import { describe, expect, it } from 'vitest';
import { failedResult } from '../../../src/orchestrator/worker/agent-host.js';
import { WorkerResultSchema } from '../../../src/orchestrator/protocol.js';

describe('failedResult', () => {
  it('carries the budget scope and the detail of a stop, and the coordinator side accepts them', () => {
    const r = failedResult(undefined, {
      failure: 'budget',
      error: 'Budget exhausted: run budget of 100 tokens is spent',
      budgetScope: 'run',
      detail: 'run budget of 100 tokens is spent',
    });
    expect(r).toMatchObject({
      ok: false,
      failure: 'budget',
      error: 'Budget exhausted: run budget of 100 tokens is spent',
      budgetScope: 'run',
      detail: 'run budget of 100 tokens is spent',
    });
    const parsed = WorkerResultSchema.parse(r);
    expect(parsed.ok === false && parsed.budgetScope).toBe('run');
    expect(parsed.ok === false && parsed.detail).toBe('run budget of 100 tokens is spent');
  });

  it('a failure without reason data has none', () => {
    const r = failedResult(undefined, { failure: 'error', error: 'the agent produced no reply' });
    expect('budgetScope' in r || 'detail' in r).toBe(false);
  });
});
