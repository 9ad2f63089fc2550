// The DAG walk's view of best-of-N attempts (attempt-groups.ts), without a run: a group settles
// once its pick's landing is logged (or none passed), only failed groups count against the task,
// and a failed or cancelled attempt, or a failed judge, is excused when its group's pick landed.
import { describe, expect, it } from 'vitest';
import type { LoadedTask } from '../../../src/recipe/index.js';
import {
  attemptGroups,
  excusedAttempt,
  groupsSettled,
  taskFailures,
} from '../../../src/orchestrator/schedule/attempt-groups.js';
import type { AttemptPick } from '../../../src/run/attempt-pick-record.js';
import { zeroUsage } from '../../../src/run/run-events.js';
import type { InstanceState, InstanceStatus, TaskState } from '../../../src/run/run-state.js';

const inst = (id: string, status: InstanceStatus): InstanceState => ({
  id,
  task: 'fix',
  index: 0,
  status,
  attempt: 1,
  usage: zeroUsage(),
  modifiedFiles: [],
  readFiles: [],
  durationMs: 0,
  sessionFiles: [],
});

function task(instances: InstanceState[], picks: AttemptPick[] = []): TaskState {
  const t = {
    id: 'fix',
    attempts: { count: 2, pick: 'verify', agents: ['w'] },
  } as unknown as LoadedTask; // only the fields the group functions read
  return {
    task: t,
    level: 0,
    status: 'active',
    expanded: true,
    instances,
    picks: new Map(picks.map((p) => [p.group, p])),
  };
}

const pick = (group: string, picked: string | undefined, landed?: boolean): AttemptPick => ({
  task: 'fix',
  group,
  rule: 'verify',
  ts: 1,
  reason: 'r',
  candidates: [],
  ...(picked ? { picked } : {}),
  ...(landed !== undefined ? { landed: { ok: landed } } : {}),
});

describe('attempt groups', () => {
  const a1 = inst('fix.a.attempt-1', 'failed');
  const a2 = inst('fix.a.attempt-2', 'done');
  const b1 = inst('fix.b.attempt-1', 'failed');
  const b2 = inst('fix.b.attempt-2', 'failed');

  it('groups attempts by the instance they belong to', () => {
    expect([...attemptGroups(task([a1, a2, b1, b2])).entries()].map(([g, m]) => [g, m.length])).toEqual([
      ['fix.a', 2],
      ['fix.b', 2],
    ]);
  });

  it('a group settles once its pick landed, or no attempt passed', () => {
    expect(groupsSettled(task([a1, a2]))).toBe(false);
    expect(groupsSettled(task([a1, a2], [pick('fix.a', 'fix.a.attempt-2')]))).toBe(false);
    expect(groupsSettled(task([a1, a2], [pick('fix.a', 'fix.a.attempt-2', true)]))).toBe(true);
    expect(groupsSettled(task([b1, b2], [pick('fix.b', undefined)]))).toBe(true);
  });

  it('only failed groups count against the task, and a landed group excuses its attempts and its judge', () => {
    const t = task([a1, a2, b1, b2], [pick('fix.a', 'fix.a.attempt-2', true), pick('fix.b', undefined)]);
    expect(taskFailures(t)).toBe(1);
    expect(excusedAttempt(t, a1)).toBe(true);
    expect(excusedAttempt(t, b1)).toBe(false);
    expect(excusedAttempt(t, inst('fix.a.judge', 'failed'))).toBe(true);
    expect(excusedAttempt(t, inst('fix.b.judge', 'failed'))).toBe(false);
    // A landing that failed fails its group.
    expect(taskFailures(task([a1, a2], [pick('fix.a', 'fix.a.attempt-2', false)]))).toBe(1);
  });
});
