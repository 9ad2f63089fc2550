// The merge train's fold (run/train-record.ts) for land_order: task's wait: a `waiting` step keeps
// the tasks it waits behind and the agent's answer (what a resume lands without running the agent
// again); once its turn comes (any later step) both go, so a landed car keeps no answer.
import { describe, expect, it } from 'vitest';
import { trainCarLine } from '../../src/display/train-text.js';
import { applyTrainEvent, createTrainState } from '../../src/run/train-record.js';
import { RunEventSchema } from '../../src/run/run-events.js';

describe('the train fold of a wait for its turn', () => {
  it('a waiting car keeps what it waits behind and its answer until its turn comes', () => {
    const train = createTrainState();
    const ref = { ts: 1, task: 'two', key: 'two', repo: 'repo' };
    applyTrainEvent(train, {
      ...ref,
      phase: 'waiting',
      behind: ['one'],
      behindKeys: ['one'],
      text: 'done',
      summary: '## Goal',
    });
    expect(train.cars.two).toMatchObject({
      status: 'waiting',
      behind: ['one'],
      kept: { text: 'done', summary: '## Goal' },
    });
    expect(train.steps[0]).toEqual({ ts: 1, key: 'two', phase: 'waiting', behind: ['one'] });
    applyTrainEvent(train, { ...ref, ts: 2, phase: 'landing', tipTree: 'a', tree: 'b' });
    expect(train.cars.two?.status).toBe('landing');
    expect(train.cars.two?.kept).toBeUndefined();
    expect(train.cars.two?.behind).toBeUndefined();
  });

  it('the waiting step is a valid run event', () => {
    const e = {
      v: 1,
      ts: 1,
      runId: 'r',
      type: 'train_step',
      task: 'two',
      key: 'two',
      attempt: 1,
      parent: 'two',
      phase: 'waiting',
      repo: 'repo',
      behind: ['one'],
      behindKeys: ['one'],
      text: 'done',
    };
    expect(RunEventSchema.safeParse(e).success).toBe(true);
  });

  it('a car that landed without a verify: says no verify result, not "verify passed"', () => {
    const train = createTrainState();
    const ref = { task: 'plain', key: 'plain', repo: 'repo' };
    applyTrainEvent(train, { ...ref, ts: 1, phase: 'landing', tipTree: 'a', tree: 'b' });
    applyTrainEvent(train, { ...ref, ts: 2, phase: 'landed', tipTree: 'a', tree: 'b', commit: 'c0ffee', verify: [] });
    expect(train.cars.plain?.verifyOk).toBeUndefined();
    expect(trainCarLine(train.cars.plain!)).toBe('plain  landed · commit c0ffee');
    applyTrainEvent(train, {
      ...ref,
      key: 'checked',
      task: 'checked',
      ts: 3,
      phase: 'landed',
      tipTree: 'a',
      tree: 'b',
      commit: 'beef',
      verify: [{ command: 'npm test', ok: true, output: '' }],
    });
    expect(trainCarLine(train.cars.checked!)).toBe('checked  landed · verify passed · commit beef');
  });
});
