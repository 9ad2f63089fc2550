// The merge train as text (show, the report, the live view's header, the plain log), from the
// fold's records: a car waiting for its turn (land_order: task) says behind which tasks, in its
// line, its repository's summary and its step.
import { describe, expect, it } from 'vitest';
import { trainBlock, trainStepText, trainSummaries } from '../../src/display/train-text.js';
import { applyTrainEvent, createTrainState } from '../../src/run/train-record.js';

describe('train text', () => {
  it('says what waits for its turn and behind which tasks, then that it landed', () => {
    const train = createTrainState();
    applyTrainEvent(train, { ts: 1, task: 'one', key: 'one', phase: 'landed', repo: 'repo', commit: 'c'.repeat(40) });
    applyTrainEvent(train, { ts: 2, task: 'two', key: 'two', phase: 'waiting', repo: 'repo', behind: ['pre', 'one'] });
    expect(trainSummaries(train)).toEqual([
      'merge train of repo: 1 landed, 0 repairing, 0 failed, 1 waiting for its turn',
    ]);
    expect(trainBlock(train)).toEqual([
      'merge train of repo: 1 landed, 0 repairing, 0 failed, 1 waiting for its turn',
      `  one  landed · commit ${'c'.repeat(12)}`,
      '  two  waiting for its turn behind pre, one',
    ]);
    expect(trainStepText(train.steps[1]!)).toBe('two: waiting for its turn behind pre, one');
    applyTrainEvent(train, { ts: 3, task: 'two', key: 'two', phase: 'landed', repo: 'repo' });
    expect(trainSummaries(train)).toEqual(['merge train of repo: 2 landed, 0 repairing, 0 failed']);
  });
});
