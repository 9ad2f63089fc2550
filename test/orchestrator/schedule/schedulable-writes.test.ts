// Which instances overlapping writes: keep apart (task-walk.ts schedulable): those that write in
// the checkout always; those whose work lands through the merge train never (the train merges
// them), unless their task asks serialize: overlapping.
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { loadRecipe } from '../../../src/recipe/index.js';
import type { InstanceState, TaskState } from '../../../src/run/run-state.js';
import { schedulable } from '../../../src/orchestrator/schedule/task-walk.js';
import { cleanupTempDirs, tempProject } from '../helpers/run-fixtures.js';

afterAll(() => cleanupTempDirs());

describe('schedulable: writes of the merge train', () => {
  it('a train task has no write scope unless serialize: overlapping; a task in the checkout keeps its scope', () => {
    const dir = tempProject({
      'script.yaml': 'turns: [{ text: done }]\n',
      'recipe.yaml': `name: w
provider: scripted
script: script.yaml
tasks:
  - id: train
    prompt: "x"
    isolation: worktree
    merge: apply
  - id: serialized
    prompt: "x"
    isolation: worktree
    merge: apply
    serialize: overlapping
  - id: direct
    prompt: "x"
    isolation: worktree
    merge: apply
    land: direct
  - id: checkout
    prompt: "x"
`,
    });
    const loaded = loadRecipe(join(dir, 'recipe.yaml'));
    if (!loaded.ok) throw new Error(JSON.stringify(loaded.problems));
    const writesOf = (id: string): readonly string[] => {
      const task = loaded.recipe.tasks.find((x) => x.id === id)!;
      const inst = { id, task: id, resolved: { cwd: dir, writes: ['src/**'] } } as unknown as InstanceState;
      const t = { task, level: 0, status: 'active', expanded: true, instances: [inst] } as TaskState;
      return schedulable(t, inst).writes;
    };
    expect(writesOf('train')).toEqual([]);
    expect(writesOf('serialized')).toEqual([`${dir}/src/**`]);
    expect(writesOf('direct')).toEqual([`${dir}/src/**`]);
    expect(writesOf('checkout')).toEqual([`${dir}/src/**`]);
  });
});
