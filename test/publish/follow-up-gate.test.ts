// The follow-up round's gate rules without a forge: the request names the round and its files and
// keeps the deadline as an absolute time; a passed deadline answers with on_timeout (and only then);
// the fold applies the gate to the round it names, and roundMayPush holds a gated round until approved.
import { describe, expect, it } from 'vitest';
import { roundGateRequest, timeoutAnswer } from '../../src/publish/follow-up-gate.js';
import { type FollowUpRecord, roundMayPush } from '../../src/run/follow-up-record.js';
import { foldEvents } from '../../src/run/run-fold.js';
import type { RunEvent } from '../../src/run/run-events.js';

const c = { key: 'change.repo-a', task: 'change', instance: 'change.repo-a', branch: 'campaign/repo-a' };
const round: FollowUpRecord = {
  round: 1,
  reason: 'ci_failed',
  evidence: 'ci:abc',
  attempt: 2,
  startTs: 10,
  fromCommit: 'abc',
  sessionFile: 's',
};

describe('follow-up round gate', () => {
  it('asks with the round, its files and an absolute deadline; answers only once the deadline passed', () => {
    const req = roundGateRequest({
      gate: { prompt: 'Push it?', timeoutMs: 1_000, onTimeout: 'approve' },
      c,
      round,
      files: ['greet.txt'],
      now: 5_000,
    });
    expect(req).toMatchObject({
      type: 'approval_requested',
      gate: 'follow_up',
      task: 'change',
      key: 'change.repo-a',
      round: 1,
      deadline: 6_000,
      onTimeout: 'approve',
      prompt: 'Push it? — change.repo-a round 1 (ci failed) on campaign/repo-a: greet.txt',
    });
    const waiting: FollowUpRecord = {
      ...round,
      approval: { state: 'waiting', prompt: 'p', requestedAt: 5_000, deadline: 6_000, onTimeout: 'approve' },
    };
    expect(timeoutAnswer(c, waiting, 5_999)).toBeUndefined();
    expect(timeoutAnswer(c, waiting, 6_000)).toMatchObject({
      type: 'approval_given',
      gate: 'follow_up',
      round: 1,
      decision: 'approved',
      by: 'timeout',
      via: 'timeout',
    });
    const noDeadline = { ...waiting, approval: { ...waiting.approval!, deadline: undefined } };
    expect(timeoutAnswer(c, noDeadline, 1e15)).toBeUndefined();
  });

  it('the fold puts the gate on the round it names; a gated round is pushed only once approved', () => {
    const at = (ts: number, e: Record<string, unknown>) => ({ v: 1, runId: 'r', ts, ...e }) as RunEvent;
    const ref = { task: 'change', key: 'change.repo-a', parent: 'change' };
    const usage = { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, cost: 0, calls: 0 };
    const log = [
      at(1, {
        type: 'instance_followup_start',
        ...ref,
        attempt: 2,
        round: 1,
        reason: 'ci_failed',
        evidence: 'ci:abc',
        fromCommit: 'abc',
        sessionFile: 's',
      }),
      at(2, {
        type: 'instance_followup_end',
        ...ref,
        attempt: 2,
        round: 1,
        evidence: 'ci:abc',
        ok: true,
        patchFile: 'p.diff',
        usage,
        durationMs: 1,
      }),
    ];
    const roundOf = (events: RunEvent[]) => foldEvents(events).instances.values().next().value!.followUps![0]!;
    expect(roundMayPush(roundOf(log), false)).toBe(true);
    // Gated, and no request yet (a kill came between): held.
    expect(roundMayPush(roundOf(log), true)).toBe(false);
    const asked = [
      ...log,
      at(3, {
        type: 'approval_requested',
        gate: 'follow_up',
        task: 'change',
        key: 'change.repo-a',
        round: 1,
        prompt: 'p',
        onTimeout: 'reject',
      }),
    ];
    expect(roundOf(asked).approval?.state).toBe('waiting');
    expect(roundMayPush(roundOf(asked), true)).toBe(false);
    // The gate event is the round's, not the instance's own approval gate.
    expect(foldEvents(asked).instances.values().next().value!.approval).toBeUndefined();
    const given = (decision: string) =>
      at(4, {
        type: 'approval_given',
        gate: 'follow_up',
        task: 'change',
        key: 'change.repo-a',
        round: 1,
        decision,
        by: 'ana',
        via: 'cli',
      });
    expect(roundMayPush(roundOf([...asked, given('approved')]), true)).toBe(true);
    expect(roundMayPush(roundOf([...asked, given('rejected')]), true)).toBe(false);
    expect(roundMayPush(roundOf([...asked, given('rejected')]), false)).toBe(false);
  });
});
