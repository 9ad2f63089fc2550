// The merge train as text (show, the report, the live view's header, the plain log), from the
// fold's records: a car waiting for its turn (land_order: task) says behind which tasks, in its
// line, its repository's summary and its step; the live view's row of its instance says it too.
import { describe, expect, it } from 'vitest';
import { buildFrame } from '../../src/display/live-frame.js';
import { makePainter } from '../../src/display/terminal-text.js';
import { trainBlock, trainStepText, trainSummaries } from '../../src/display/train-text.js';
import type { RunEvent } from '../../src/run/run-events.js';
import { applyEvent, createRunState } from '../../src/run/run-fold.js';
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

  it("the live view's row of an instance waiting for its turn says behind which tasks, until its turn comes", () => {
    const state = createRunState();
    const ref = { v: 1, runId: 'r', task: 'two', key: 'two', attempt: 1, parent: 'two' } as const;
    const at = (ts: number, e: Record<string, unknown>) => applyEvent(state, { ...ref, ts, ...e } as RunEvent);
    at(1, { type: 'instance_queued' });
    at(2, { type: 'instance_start', cwd: '/repo' });
    at(3, { type: 'train_step', phase: 'waiting', repo: 'repo', behind: ['one'] });
    const frame = () =>
      buildFrame(state, { width: 120, height: 30, now: 10, painter: makePainter(false) }).find((l) =>
        l.includes(' two '),
      );
    expect(frame()).toContain('waiting for its turn behind one');
    at(4, { type: 'train_step', phase: 'landing', repo: 'repo' });
    expect(frame()).not.toContain('waiting for its turn');
  });
});
