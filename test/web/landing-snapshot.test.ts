// What the page is sent of how work lands, from the fold's own records (no browser needed): the
// merge train grouped by repository with each car's status (waiting for its turn: behind which
// tasks), repairs, verify and commit (a failed
// car's conflicting files and the first line of its error), and each pick with every attempt and
// where the picked one landed (or why its landing failed).
import { describe, expect, it } from 'vitest';
import { type AttemptPicks, applyPickEvent } from '../../src/run/attempt-pick-record.js';
import { applyTrainEvent, createTrainState, type TrainStepEvent } from '../../src/run/train-record.js';
import { pickViews, trainViews } from '../../src/web/landing-snapshot.js';

describe('trainViews', () => {
  it('groups the cars by repository with their counts, repairs, verify, commit and conflicts', () => {
    const train = createTrainState();
    let ts = 1;
    const step = (e: Omit<TrainStepEvent, 'ts' | 'task'>) => applyTrainEvent(train, { ts: ts++, task: e.key, ...e });
    const ok = [{ command: 'npm test', ok: true, output: '' }];
    step({ key: 'a', phase: 'landing', repo: 'api', tree: 't1' });
    step({ key: 'a', phase: 'landed', repo: 'api', commit: 'c'.repeat(40), verify: ok, files: ['x.ts'] });
    step({ key: 'b', phase: 'conflict', repo: 'api', files: ['x.ts'] });
    step({ key: 'b', phase: 'repair', repo: 'api', repair: 1, baseTree: 't2' });
    step({ key: 'c', phase: 'conflict', repo: 'api', files: ['y.ts'] });
    step({ key: 'c', phase: 'failed', repo: 'api', error: 'patch_conflict in y.ts\nmore detail' });
    step({ key: 'e', phase: 'waiting', repo: 'api', behind: ['a', 'b'], behindKeys: ['b'], text: 'e done' });
    step({
      key: 'd',
      phase: 'landed',
      repo: '',
      commit: 'd'.repeat(40),
      verify: [{ command: 'make', ok: true, output: '' }],
    });
    const views = trainViews(train);
    expect(views.map((v) => [v.repo, v.counts])).toEqual([
      ['api', { waiting: 1, landing: 0, landed: 1, repairing: 1, failed: 1 }],
      ['.', { waiting: 0, landing: 0, landed: 1, repairing: 0, failed: 0 }],
    ]);
    expect(views[0]!.cars).toEqual([
      { key: 'a', task: 'a', status: 'landed', repairs: 0, verifyOk: true, commit: 'c'.repeat(40), files: ['x.ts'] },
      { key: 'b', task: 'b', status: 'repairing', repairs: 1, files: ['x.ts'] },
      { key: 'c', task: 'c', status: 'failed', repairs: 0, files: ['y.ts'], error: 'patch_conflict in y.ts' },
      // Waiting for its turn (land_order: task): behind which tasks; its kept answer is not sent.
      { key: 'e', task: 'e', status: 'waiting', repairs: 0, behind: ['a', 'b'] },
    ]);
  });
});

describe('pickViews', () => {
  it('marks the picked attempt, keeps why, and says where it landed or why it did not', () => {
    const picks: AttemptPicks = new Map();
    applyPickEvent(picks, {
      type: 'attempt_pick',
      ts: 1,
      task: 'fix',
      group: 'fix',
      rule: 'verify',
      picked: 'fix.attempt-2',
      reason: 'attempt 2 is the only one of 2 attempts where its verify passed',
      candidates: [
        {
          key: 'fix.attempt-1',
          attempt: 1,
          outcome: 'failed',
          verify: { ok: false, command: 'npm test', output: 'FAIL' },
          cost: 0.01,
          error: 'verify failed\nlong output',
        },
        {
          key: 'fix.attempt-2',
          attempt: 2,
          model: 'm2',
          outcome: 'passed',
          verify: { ok: true, command: 'npm test' },
          lines: 4,
          cost: 0.02,
        },
      ],
    });
    applyPickEvent(picks, {
      type: 'attempt_pick',
      ts: 2,
      task: 'doc',
      group: 'doc.readme',
      rule: 'judge',
      reason: 'none passed',
      candidates: [{ key: 'doc.readme.attempt-1', attempt: 1, outcome: 'cancelled', cost: 0 }],
      judge: { model: 'j', cost: 0.003 },
    });
    expect(pickViews(picks)).toEqual([
      {
        task: 'fix',
        group: 'fix',
        rule: 'verify',
        picked: 'fix.attempt-2',
        reason: 'attempt 2 is the only one of 2 attempts where its verify passed',
        candidates: [
          {
            key: 'fix.attempt-1',
            attempt: 1,
            outcome: 'failed',
            verify: { ok: false, command: 'npm test' },
            cost: 0.01,
            error: 'verify failed',
            picked: false,
            notLanded: 'its verify failed',
          },
          {
            key: 'fix.attempt-2',
            attempt: 2,
            model: 'm2',
            outcome: 'passed',
            verify: { ok: true, command: 'npm test' },
            lines: 4,
            cost: 0.02,
            picked: true,
            notLanded: 'picked, not landed yet',
          },
        ],
      },
      {
        task: 'doc',
        group: 'doc.readme',
        rule: 'judge',
        reason: 'none passed',
        judge: { model: 'j', cost: 0.003 },
        candidates: [
          {
            key: 'doc.readme.attempt-1',
            attempt: 1,
            outcome: 'cancelled',
            cost: 0,
            picked: false,
            notLanded: 'cancelled',
          },
        ],
      },
    ]);
    // The landing, once logged: where it went; a failed one says why.
    applyPickEvent(picks, {
      type: 'attempt_landed',
      ts: 3,
      task: 'fix',
      group: 'fix',
      key: 'fix.attempt-2',
      ok: true,
      branch: 'orchestrate/fix',
    });
    expect(pickViews(picks)[0]!.landed).toEqual({ ok: true, where: 'branch orchestrate/fix' });
    expect(pickViews(picks)[0]!.candidates.map((c) => c.notLanded)).toEqual(['its verify failed', undefined]);
    // An attempt's work and whole cost the pick did not record (it ended after the pick) are found on its instance.
    const lookup = (key: string, task: string) =>
      task === 'fix' ? { patchFile: `patches/${key}.diff`, cost: key === 'fix.attempt-1' ? 0.05 : 0 } : undefined;
    expect(pickViews(picks, lookup)[0]!.candidates.map((c) => [c.patchFile, c.cost])).toEqual([
      ['patches/fix.attempt-1.diff', 0.05],
      ['patches/fix.attempt-2.diff', 0.02],
    ]);
    applyPickEvent(picks, {
      type: 'attempt_landed',
      ts: 4,
      task: 'fix',
      group: 'fix',
      key: 'fix.attempt-2',
      ok: false,
      failure: 'patch_conflict',
      error: 'does not apply\nhunk 2',
    });
    expect(pickViews(picks)[0]!.landed).toEqual({ ok: false, error: 'does not apply' });
    expect(pickViews(picks)[0]!.candidates[1]!.notLanded).toBe('picked, but its landing failed');
  });
});
