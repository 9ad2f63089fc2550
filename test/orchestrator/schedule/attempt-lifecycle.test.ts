// The attempt lifecycle, constructed alone: from an instance's state and what its attempt
// returned, the event the coordinator records; applied by the run fold's core, the same event
// moves the instance to its next status. No run, no threads.
import { afterAll, describe, expect, it } from 'vitest';
import {
  doneEvent,
  failedEvent,
  judgeFailedAttempt,
  outputOf,
  queuedEvent,
  skippedEvent,
} from '../../../src/orchestrator/schedule/attempt-lifecycle.js';
import { applyInstanceEvent } from '../../../src/run/run-fold.js';
import { cleanupTempDirs } from '../helpers/run-fixtures.js';
import { testRun } from '../helpers/run-state-fixtures.js';

afterAll(() => cleanupTempDirs());

const RECIPE = `name: life
model: claude-haiku-4-5
tasks:
  - id: t
    prompt: go
    retries: { count: 2, on: [crashed, timeout], backoff: { initial: 1s, max: 10s, factor: 2 } }
  - id: j
    prompt: go
    output: json
  - id: sh
    run: echo hi
`;

function setup() {
  const run = testRun(RECIPE);
  const inst = run.add('t', 't', 'running', { attempt: 1 });
  return { run, inst, task: run.tasks.get('t')!.task };
}

const never = () => 0; // no jitter: delays are exact

describe('a failed attempt', () => {
  it('is retried while its policy allows, with growing backoff, then fails for good', () => {
    const { inst, task } = setup();
    const first = judgeFailedAttempt({
      inst,
      task,
      result: { failure: 'timeout', error: 'timeout: 3s' },
      random: never,
    });
    expect(first).toEqual({
      kind: 'retry',
      event: expect.objectContaining({
        type: 'instance_retry',
        key: 't',
        attempt: 1,
        failure: 'timeout',
        delayMs: 1000,
      }),
    });
    applyInstanceEvent(inst, first.kind === 'retry' ? first.event : queuedEvent(inst));
    expect(inst).toMatchObject({
      status: 'retrying',
      failure: 'timeout',
      attemptFailures: [{ attempt: 1, failure: 'timeout', error: 'timeout: 3s' }],
    });
    applyInstanceEvent(inst, queuedEvent(inst));
    expect(inst.status).toBe('queued');
    applyInstanceEvent(inst, { type: 'instance_start', task: 't', key: 't', attempt: 2 });
    expect(inst).toMatchObject({ status: 'running', attempt: 2 });
    const second = judgeFailedAttempt({
      inst,
      task,
      result: { failure: 'crashed', error: 'worker thread exited' },
      random: never,
    });
    expect(second.kind === 'retry' && second.event.delayMs).toBe(2000);
    inst.attempt = 3;
    const third = judgeFailedAttempt({
      inst,
      task,
      result: { failure: 'crashed', error: 'worker thread exited' },
      random: never,
    });
    expect(third).toEqual({
      kind: 'failed',
      event: expect.objectContaining({ type: 'instance_failed', attempt: 3, failure: 'crashed', final: true }),
    });
    applyInstanceEvent(inst, third.kind === 'failed' ? third.event : queuedEvent(inst));
    expect(inst.status).toBe('failed');
  });

  it('is not retried for a class its policy leaves out, nor for budget, nor while the run stops', () => {
    const { inst, task } = setup();
    expect(judgeFailedAttempt({ inst, task, result: { failure: 'error', error: 'bad' } }).kind).toBe('failed');
    expect(
      judgeFailedAttempt({ inst, task, result: { failure: 'crashed', error: 'x' }, stopping: 'fail-fast' }).kind,
    ).toBe('failed');
    // An unknown class from a worker reads as `error`.
    const odd = judgeFailedAttempt({ inst, task, result: { failure: 'no-such-class', error: 'x' } });
    expect(odd.kind === 'failed' && odd.event.failure).toBe('error');
  });

  it('a refusal of the run budget stops the run; a task budget fails only the instance', () => {
    const { inst, task } = setup();
    const run = judgeFailedAttempt({
      inst,
      task,
      result: {
        failure: 'budget',
        error: 'Budget exhausted: run budget of 100 tokens is spent',
        budgetScope: 'run',
        detail: 'run budget of 100 tokens is spent',
      },
    });
    // What was spent comes from the reason's detail, not from taking the wording apart (issue 43).
    expect(run).toMatchObject({ kind: 'failed', runBudgetSpent: 'run budget of 100 tokens is spent' });
    const own = judgeFailedAttempt({
      inst,
      task,
      result: { failure: 'budget', error: 'Budget exhausted: budget of instance:t is spent', budgetScope: 'instance' },
    });
    expect(own.kind).toBe('failed');
    expect('runBudgetSpent' in own).toBe(false);
  });

  it("a user's cancel wins over the retry policy; an interrupt is no failure at all", () => {
    const { inst, task } = setup();
    const cancelled = judgeFailedAttempt({
      inst,
      task,
      result: { failure: 'crashed', error: 'x' },
      cancelledBy: 'ana',
    });
    expect(cancelled).toEqual({
      kind: 'cancelled',
      event: expect.objectContaining({ failure: 'cancelled', error: 'cancelled by ana', final: true }),
    });
    if (cancelled.kind === 'cancelled') applyInstanceEvent(inst, cancelled.event);
    expect(inst.status).toBe('cancelled');
    expect(
      judgeFailedAttempt({ inst, task, result: { failure: 'crashed', error: 'x' }, stopping: 'interrupted' }),
    ).toEqual({ kind: 'interrupted' });
  });

  it("a shared thread's crash is retried without counting, on a thread of its own from then on", () => {
    const { inst, task } = setup();
    inst.attempt = 3; // the policy's 2 retries are used up...
    inst.unchargedAttempts = 1;
    const v = judgeFailedAttempt({
      inst,
      task,
      result: { failure: 'crashed', error: 'worker thread exited', sharedCrash: true },
      random: never,
    });
    // ...but 1 of the 3 did not count, and this one does not either.
    expect(v).toEqual({ kind: 'retry', event: expect.objectContaining({ uncharged: true, isolated: true }) });
    applyInstanceEvent(inst, v.kind === 'retry' ? v.event : queuedEvent(inst));
    expect(inst).toMatchObject({ unchargedAttempts: 2, isolated: true, status: 'retrying' });
    const collateral = judgeFailedAttempt({
      inst,
      task,
      result: { failure: 'aborted', error: 'stopped for another agent', collateral: true },
    });
    expect(collateral.kind === 'retry' && collateral.event.isolated).toBeUndefined();
  });
});

describe('the other lifecycle events', () => {
  it('done records the output, files and where the work landed; the fold clears the last failure', () => {
    const { inst } = setup();
    inst.failure = 'timeout';
    inst.error = 'timeout: 3s';
    inst.output = 'all good';
    inst.durationMs = 42;
    const e = doneEvent(inst, { text: 'all good', summary: '## Goal\nx' }, ['src/a.ts'], {
      patchFile: 'patches/t.diff',
      branch: 'orchestrate/r/t',
    });
    expect(e).toMatchObject({
      type: 'instance_done',
      output: 'all good',
      modifiedFiles: ['src/a.ts'],
      patchFile: 'patches/t.diff',
      branch: 'orchestrate/r/t',
      durationMs: 42,
    });
    expect(e).not.toHaveProperty('applied');
    applyInstanceEvent(inst, e);
    expect(inst).toMatchObject({ status: 'done', summary: '## Goal\nx', modifiedFiles: ['src/a.ts'] });
    expect(inst.failure).toBeUndefined();
    expect(inst.error).toBeUndefined();
  });

  it('queued counts the next attempt; skipped and failed name attempt 1 for an instance that never started', () => {
    const run = testRun(RECIPE);
    const fresh = run.add('t', 'fresh', 'pending');
    expect(queuedEvent(fresh).attempt).toBe(1);
    expect(skippedEvent(fresh, 'a failed')).toMatchObject({ attempt: 1, reason: 'a failed' });
    expect(failedEvent(fresh, 'error', 'bad expression')).toMatchObject({ attempt: 1, final: true, durationMs: 0 });
    applyInstanceEvent(fresh, skippedEvent(fresh, 'a failed'));
    expect(fresh).toMatchObject({ status: 'skipped', skipReason: 'a failed' });
  });

  it("the output of an attempt: parsed JSON for output: json, a command's output trimmed, else the reply", () => {
    const run = testRun(RECIPE);
    expect(outputOf(run.tasks.get('j')!.task, '```json\n{"a": 1}\n```')).toEqual({ a: 1 });
    expect(outputOf(run.tasks.get('j')!.task, 'not json')).toBe('not json');
    expect(outputOf(run.tasks.get('sh')!.task, 'hi\n\n')).toBe('hi');
    expect(outputOf(run.tasks.get('t')!.task, 'reply\n')).toBe('reply\n');
  });
});
