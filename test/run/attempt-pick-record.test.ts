// What the pick record says of each attempt (run/attempt-pick-record.ts): why it did not land,
// where its work is, and what it spent. The pick is a snapshot taken when it was made, so an
// attempt `pick: first` stopped afterwards has its patch and its whole cost only on its instance's
// record: the views look those up instead of showing the snapshot's (a running attempt's cost at
// the pick is what its finished calls had spent, often $0).
import { describe, expect, it } from 'vitest';
import {
  type AttemptPicks,
  applyPickEvent,
  attemptsWork,
  describePick,
  notPickedAttempt,
  workOfAttempt,
} from '../../src/run/attempt-pick-record.js';

function firstPick(): AttemptPicks {
  const picks: AttemptPicks = new Map();
  applyPickEvent(picks, {
    type: 'attempt_pick',
    ts: 1,
    task: 'fix',
    group: 'fix.alpha',
    rule: 'first',
    picked: 'fix.alpha.attempt-1',
    reason: 'attempt 1 passed first; the other attempts were stopped',
    candidates: [
      {
        key: 'fix.alpha.attempt-1',
        attempt: 1,
        outcome: 'passed',
        cost: 0.02,
        lines: 2,
        patchFile: 'patches/fix.alpha.attempt-1.diff',
      },
      { key: 'fix.alpha.attempt-2', attempt: 2, outcome: 'cancelled', cost: 0 },
      {
        key: 'fix.alpha.attempt-3',
        attempt: 3,
        outcome: 'failed',
        failure: 'verify_failed',
        verify: { ok: false, command: 'npm test', output: 'FAIL' },
        cost: 0.01,
        patchFile: 'patches/fix.alpha.attempt-3.diff',
      },
    ],
  });
  return picks;
}

const landed = (picks: AttemptPicks) =>
  applyPickEvent(picks, {
    type: 'attempt_landed',
    ts: 2,
    task: 'fix',
    group: 'fix.alpha',
    key: 'fix.alpha.attempt-1',
    ok: true,
    applied: true,
  });

describe('attempt pick record', () => {
  it("a stopped attempt's patch and whole cost come from its instance's record", () => {
    const picks = firstPick();
    landed(picks);
    const p = picks.get('fix.alpha')!;
    const lookup = (key: string, task: string) =>
      task === 'fix' && key === 'fix.alpha.attempt-2'
        ? { patchFile: 'patches/fix.alpha.attempt-2.diff', cost: 0.0375 }
        : undefined;
    expect(attemptsWork(p, lookup)).toEqual([
      {
        key: 'fix.alpha.attempt-1',
        attempt: 1,
        patchFile: 'patches/fix.alpha.attempt-1.diff',
        cost: 0.02,
        landed: true,
      },
      {
        key: 'fix.alpha.attempt-2',
        attempt: 2,
        patchFile: 'patches/fix.alpha.attempt-2.diff',
        cost: 0.0375,
        landed: false,
        notLanded: 'stopped by pick: first once fix.alpha.attempt-1 passed',
      },
      {
        key: 'fix.alpha.attempt-3',
        attempt: 3,
        patchFile: 'patches/fix.alpha.attempt-3.diff',
        cost: 0.01,
        landed: false,
        notLanded: 'its verify failed',
      },
    ]);
    const lines = describePick(p, lookup);
    expect(lines[0]).toBe(
      'fix.alpha: picked fix.alpha.attempt-1 (pick: first): attempt 1 passed first; the other attempts were stopped [applied to the checkout]',
    );
    expect(lines[2]).toBe(
      '    attempt 2: cancelled, $0.0375 · not landed: stopped by pick: first once fix.alpha.attempt-1 passed; its work: patches/fix.alpha.attempt-2.diff',
    );
    expect(lines[3]).toBe(
      '    attempt 3: verify failed, $0.0100 · not landed: its verify failed; its work: patches/fix.alpha.attempt-3.diff',
    );
  });

  it('an attempt told to stop by pick: first that finished before the stop came says it finished, not that it was stopped', () => {
    const picks = firstPick();
    landed(picks);
    const p = picks.get('fix.alpha')!;
    const lookup = (key: string) =>
      key === 'fix.alpha.attempt-2'
        ? { patchFile: 'patches/fix.alpha.attempt-2.diff', cost: 0.03, status: 'done' }
        : undefined;
    expect(attemptsWork(p, lookup)[1]!.notLanded).toBe(
      'finished after fix.alpha.attempt-1 had passed first (pick: first)',
    );
    expect(describePick(p, lookup)[2]).toBe(
      '    attempt 2: finished, $0.0300 · not landed: finished after fix.alpha.attempt-1 had passed first (pick: first); its work: patches/fix.alpha.attempt-2.diff',
    );
  });

  it('the losers of a pick that landed are not picked; nothing is while the landing is pending or failed', () => {
    const picks = firstPick();
    expect(notPickedAttempt(picks, 'fix.alpha.attempt-2')).toBe(false);
    expect(workOfAttempt(picks, 'fix.alpha.attempt-1')?.notLanded).toBe('picked, not landed yet');
    landed(picks);
    expect(notPickedAttempt(picks, 'fix.alpha.attempt-2')).toBe(true);
    expect(notPickedAttempt(picks, 'fix.alpha.attempt-3')).toBe(true);
    expect(notPickedAttempt(picks, 'fix.alpha.attempt-1')).toBe(false);
    // Not an attempt, or an attempt of an instance without a pick.
    expect(notPickedAttempt(picks, 'fix.alpha')).toBe(false);
    expect(notPickedAttempt(picks, 'fix.beta.attempt-1')).toBe(false);
    applyPickEvent(picks, {
      type: 'attempt_landed',
      ts: 3,
      task: 'fix',
      group: 'fix.alpha',
      key: 'fix.alpha.attempt-1',
      ok: false,
      failure: 'patch_conflict',
      error: 'does not apply',
    });
    expect(notPickedAttempt(picks, 'fix.alpha.attempt-2')).toBe(false);
    expect(workOfAttempt(picks, 'fix.alpha.attempt-1')?.notLanded).toBe('picked, but its landing failed');
  });
});
