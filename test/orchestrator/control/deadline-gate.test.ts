// The gate skeleton both gates share: records folded from their events, a deadline kept as an
// absolute time (a restored gate keeps its own), an early timer re-armed, and a passed deadline answered at once.
import { describe, expect, it } from 'vitest';
import type { ApprovalRecord } from '../../../src/run/approval-record.js';
import type { RunEventInput } from '../../../src/run/run-events.js';
import { DeadlineGate } from '../../../src/orchestrator/control/deadline-gate.js';

function gate(now: () => number, restored?: [string, ApprovalRecord][]) {
  const log: RunEventInput[] = [];
  let answered: (v: { key: string; decision: string; note: string }) => void = () => {};
  const due = new Promise<{ key: string; decision: string; note: string }>((r) => (answered = r));
  const g = new DeadlineGate(
    { record: (e) => log.push(e), due: (key, decision, note) => answered({ key, decision, note }), now },
    restored,
  );
  return { g, log, due };
}

describe('DeadlineGate', () => {
  it('logs a request, keeps its deadline as an absolute time, and answers with on_timeout once it passes', async () => {
    let t = 1_000;
    const { g, log, due } = gate(() => t);
    const deadline = g.deadlineFor('a', 5_000);
    expect(deadline).toBe(6_000);
    g.log({
      type: 'approval_requested',
      task: 'a',
      key: 'a',
      prompt: 'ok?',
      deadline: deadline!,
      onTimeout: 'approve',
    });
    expect(log).toHaveLength(1);
    expect(g.recordOf('a')).toMatchObject({ state: 'waiting', deadline: 6_000, onTimeout: 'approve' });
    // The clock is already past the deadline: the timer fires at once and answers.
    t = 7_000;
    g.arm('a');
    expect(await due).toEqual({
      key: 'a',
      decision: 'approved',
      note: `no answer by ${new Date(6_000).toISOString()}`,
    });
  });

  it('a restored gate keeps the deadline from its log, not a new one from now', () => {
    const rec = { state: 'waiting', prompt: 'p', deadline: 42, onTimeout: 'reject', requestedAt: 1 } as ApprovalRecord;
    const { g } = gate(() => 10_000, [['x', rec]]);
    expect(g.deadlineFor('x', 5_000)).toBe(42);
    expect(g.deadlineFor('new', undefined)).toBeUndefined();
  });

  it('a timer that fires before the deadline (a clock behind) waits again instead of answering', async () => {
    // The clock reads 0 for the log, the wait and the first firing, then 5: the first firing is early.
    const reads: number[] = [];
    const { g, due } = gate(() => {
      const v = reads.length < 3 ? 0 : 5;
      reads.push(v);
      return v;
    });
    g.log({ type: 'approval_requested', task: 'a', key: 'a', prompt: 'ok?', deadline: 1, onTimeout: 'reject' });
    g.arm('a');
    expect((await due).decision).toBe('rejected');
    // log, wait, early firing (re-arm), the re-arm's wait, the second firing: an early timer never answers.
    expect(reads).toEqual([0, 0, 0, 5, 5]);
  });

  it('an answered gate is disarmed: its deadline answers nothing', async () => {
    const { g, due } = gate(() => 100);
    g.log({ type: 'approval_requested', task: 'a', key: 'a', prompt: 'ok?', deadline: 50, onTimeout: 'reject' });
    g.arm('a');
    g.disarm('a');
    g.log({ type: 'approval_requested', task: 'b', key: 'b', prompt: 'ok?', deadline: 50, onTimeout: 'approve' });
    g.arm('b');
    // Only b answers (timers fire in order: a's would have come first).
    expect((await due).key).toBe('b');
  });
});
