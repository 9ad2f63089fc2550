// The worker <-> coordinator messages carry typed data: a failure is one of the failure classes
// and a budget refusal names whose budget it was, so nothing reads them back out of message text.
import { describe, expect, it } from 'vitest';
import { parseCoordinatorMessage, WorkerResultSchema } from '../../src/orchestrator/protocol.js';

const usage = { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, totalTokens: 0, cost: 0 };

describe('worker protocol', () => {
  it('a failed result names a failure class, and a budget failure whose budget ran out', () => {
    const ok = WorkerResultSchema.safeParse({
      ok: false,
      failure: 'budget',
      budgetScope: 'task',
      error: 'Budget exhausted: budget of task:t of 10 tokens is spent',
      usage,
    });
    expect(ok.success && !ok.data.ok && ok.data.budgetScope).toBe('task');
    expect(WorkerResultSchema.safeParse({ ok: false, failure: 'out of luck', error: 'x', usage }).success).toBe(false);
    expect(
      WorkerResultSchema.safeParse({ ok: false, failure: 'budget', budgetScope: 'everyone', error: 'x', usage })
        .success,
    ).toBe(false);
  });

  it('a permit refusal carries the budget scope, or none when it was not the budget', () => {
    const denied = parseCoordinatorMessage({
      type: 'permit_deny',
      requestId: 1,
      reason: 'run budget of $1 is spent',
      budget: 'run',
    });
    expect(denied).toEqual({
      ok: true,
      message: { type: 'permit_deny', requestId: 1, reason: 'run budget of $1 is spent', budget: 'run' },
    });
    expect(parseCoordinatorMessage({ type: 'permit_deny', requestId: 2, reason: 'run stopped' }).ok).toBe(true);
    expect(parseCoordinatorMessage({ type: 'permit_deny', requestId: 3, reason: 'x', budget: true }).ok).toBe(false);
  });

  it('an abort carries its failure class and detail as data, never a "class: text" string to split (issue 43)', () => {
    expect(parseCoordinatorMessage({ type: 'abort', failure: 'timeout', detail: 'ran longer than 5s' })).toEqual({
      ok: true,
      message: { type: 'abort', failure: 'timeout', detail: 'ran longer than 5s' },
    });
    expect(parseCoordinatorMessage({ type: 'abort', reason: 'timeout: ran longer than 5s' }).ok).toBe(false);
    expect(parseCoordinatorMessage({ type: 'abort', failure: 'sleepy', detail: 'x' }).ok).toBe(false);
  });
});
