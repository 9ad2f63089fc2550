// land_order: task's turns without a run: the land order (recipe order, needs pulled before their
// dependants), what an instance still waits behind (earlier train tasks in its repository, started
// or not, expanded or not, until each instance has ended), and whose writes a waiting one holds.
import { describe, expect, it } from 'vitest';
import type { LoadedTask } from '../../../src/recipe/index.js';
import type { InstanceState, TaskState } from '../../../src/run/run-state.js';
import { holdsAgainst, landPositions, turnWait } from '../../../src/orchestrator/workspace/land-turn.js';

const train = { isolation: 'worktree', merge: 'apply', land: 'train' } as const;

function task(id: string, needs: string[] = [], over: Partial<LoadedTask> = {}): TaskState {
  return {
    task: { id, needs, ...train, ...over } as unknown as LoadedTask,
    level: 0,
    status: 'waiting',
    expanded: false,
    instances: [],
  };
}

function expand(t: TaskState, ...insts: [string, InstanceState['status'], string?][]): TaskState {
  t.status = 'active';
  t.expanded = true;
  t.instances = insts.map(
    ([id, status, root]) =>
      ({ id, task: t.task.id, status, ...(root ? { git: { root, tree: 'x' } } : {}) }) as unknown as InstanceState,
  );
  return t;
}

describe('land order', () => {
  it("is the recipe's order, each task's needs pulled before it", () => {
    const tasks = [task('one', ['pre']), task('two'), task('pre'), task('last', ['two'])];
    expect([...landPositions(tasks)].sort((a, b) => a[1] - b[1]).map(([id]) => id)).toEqual([
      'pre',
      'one',
      'two',
      'last',
    ]);
  });
});

describe('turnWait', () => {
  it('waits behind an earlier task not expanded yet, and behind its instances not started yet', () => {
    const one = task('one', ['pre']);
    const two = expand(task('two'), ['two', 'running', '/repo']);
    const pre = task('pre');
    const tasks = [one, two, pre];
    expect(turnWait(tasks, two, '/repo')).toEqual({ tasks: ['pre', 'one'], keys: [] });
    // Asked only whether its turn has come: it stops at the first task it waits for.
    expect(turnWait(tasks, two, '/repo', landPositions(tasks), true)).toEqual({ tasks: ['one'], keys: [] });
    expand(pre, ['pre', 'queued']);
    expect(turnWait(tasks, two, '/repo')).toEqual({ tasks: ['pre', 'one'], keys: ['pre'] });
    expand(pre, ['pre', 'done', '/repo']);
    expand(one, ['one', 'pending']);
    expect(turnWait(tasks, two, '/repo')).toEqual({ tasks: ['one'], keys: ['one'] });
    // Skipped (its dependency failed), failed or cancelled: nothing of it will land, the wait is over.
    one.instances[0]!.status = 'skipped';
    expect(turnWait(tasks, two, '/repo')).toEqual({ tasks: [], keys: [] });
  });

  it('waits behind a task of attempts: N until it settles (its picked attempt lands after the attempts ended)', () => {
    const best = expand(task('best', [], { attempts: { count: 2 } } as unknown as Partial<LoadedTask>), [
      'best.attempt-1',
      'done',
      '/repo',
    ]);
    best.instances.push({ id: 'best.attempt-2', task: 'best', status: 'failed' } as unknown as InstanceState);
    const mine = expand(task('mine'), ['mine', 'running', '/repo']);
    expect(turnWait([best, mine], mine, '/repo')).toEqual({ tasks: ['best'], keys: [] });
    best.status = 'done';
    expect(turnWait([best, mine], mine, '/repo')).toEqual({ tasks: [], keys: [] });
  });

  it('waits for nothing after its task, in another repository, or outside the train', () => {
    const first = expand(task('first'), ['first', 'running', '/other']);
    const apart = expand(task('apart', [], { merge: 'patch' }), ['apart', 'running', '/repo']);
    const mine = expand(task('mine'), ['mine.0', 'running', '/repo'], ['mine.1', 'queued']);
    const after = expand(task('after'), ['after', 'running', '/repo']);
    expect(turnWait([first, apart, mine, after], mine, '/repo')).toEqual({ tasks: [], keys: [] });
    expect(turnWait([first, apart, mine, after], after, '/repo')).toEqual({
      tasks: ['mine'],
      keys: ['mine.0', 'mine.1'],
    });
  });

  it("a waiting instance's writes hold against what lands after it, never against what it waits behind", () => {
    const tasks = [task('one', ['pre']), task('two'), task('pre'), task('three')];
    const two = tasks[1]!;
    expect(['one', 'pre', 'two', 'three', 'unknown'].map((id) => holdsAgainst(tasks, two, id))).toEqual([
      false,
      false,
      true,
      true,
      true,
    ]);
  });
});
