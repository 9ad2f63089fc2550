// Whether a task has settled is asked at every instance's end: counted, not timed, asking it after
// each of N instances ends in order reads O(N) statuses in all (it read O(N^2) when every question
// scanned the task's instances from the first), and an instance reopened behind the ones already
// seen ended (a retry) still keeps the task from settling.
import { describe, expect, it } from 'vitest';
import { taskOutcome } from '../../src/orchestrator/schedule/task-walk.js';
import type { InstanceState, TaskState } from '../../src/run/run-state.js';
import type { InstanceStatus } from '../../src/run/instance-record.js';

function countedTask(
  n: number,
  counter: { reads: number },
): { t: TaskState; set: (i: number, s: InstanceStatus) => void } {
  const statuses: InstanceStatus[] = Array.from({ length: n }, () => 'running');
  const instances = statuses.map((_, i) => {
    const inst = { id: `fan.${i}` } as unknown as InstanceState;
    Object.defineProperty(inst, 'status', {
      get: () => {
        counter.reads++;
        return statuses[i];
      },
    });
    return inst;
  });
  const t = { task: { id: 'fan' }, level: 0, status: 'active', expanded: true, instances } as unknown as TaskState;
  return { t, set: (i, s) => (statuses[i] = s) };
}

describe('taskOutcome', () => {
  it('reads O(N) statuses over N instance ends, and settles once all ended', () => {
    const n = 2_000;
    const counter = { reads: 0 };
    const { t, set } = countedTask(n, counter);
    for (let i = 0; i < n; i++) {
      set(i, 'done');
      expect(taskOutcome(t)).toBe(i === n - 1 ? 'done' : undefined);
    }
    // A cursor pass (about 2 reads per instance) and one confirming pass at the end.
    expect(counter.reads).toBeLessThanOrEqual(5 * n);
  });

  it('an instance reopened behind the cursor keeps the task open until it ends again', () => {
    const counter = { reads: 0 };
    const { t, set } = countedTask(3, counter);
    set(0, 'done');
    set(1, 'done');
    expect(taskOutcome(t)).toBeUndefined();
    set(0, 'queued'); // a retry reopened it
    set(2, 'failed');
    expect(taskOutcome(t)).toBeUndefined();
    set(0, 'done');
    expect(taskOutcome(t)).toBe('failed');
  });
});
