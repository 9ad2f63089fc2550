// Builds the coordinator's state of a run without running it, for the unit tests of its
// collaborators (admission, attempt lifecycle, control decisions): a real recipe loaded from a
// temp folder, its tasks as TaskState, and instances in any status.
import { join } from 'node:path';
import { loadRecipe, type LoadedRecipe } from '../../../src/recipe/index.js';
import { zeroUsage } from '../../../src/run/run-events.js';
import type { InstanceState, InstanceStatus, TaskState } from '../../../src/run/run-state.js';
import { tempProject } from './run-fixtures.js';

export function loadTestRecipe(yaml: string): LoadedRecipe {
  const dir = tempProject({ 'recipe.yaml': yaml });
  const r = loadRecipe(join(dir, 'recipe.yaml'), { env: { ANTHROPIC_API_KEY: 'sk-test' } });
  if (!r.ok) throw new Error(r.problems.map((p) => p.message).join('\n'));
  return r.recipe;
}

export interface TestRun {
  recipe: LoadedRecipe;
  tasks: Map<string, TaskState>;
  instances: Map<string, InstanceState>;
  /** Adds an instance of `task` in `status` (its task becomes active). */
  add(task: string, id: string, status: InstanceStatus, extra?: Partial<InstanceState>): InstanceState;
}

export function testRun(yaml: string): TestRun {
  const recipe = loadTestRecipe(yaml);
  const tasks = new Map<string, TaskState>(
    recipe.tasks.map((task, level) => [task.id, { task, level, status: 'waiting', expanded: false, instances: [] }]),
  );
  const instances = new Map<string, InstanceState>();
  return {
    recipe,
    tasks,
    instances,
    add(task, id, status, extra = {}) {
      const t = tasks.get(task)!;
      const inst: InstanceState = {
        id,
        task,
        index: t.instances.length,
        status,
        attempt: 0,
        usage: zeroUsage(),
        modifiedFiles: [],
        readFiles: [],
        durationMs: 0,
        sessionFiles: [],
        ...extra,
      };
      t.instances.push(inst);
      t.status = 'active';
      t.expanded = true;
      instances.set(id, inst);
      return inst;
    },
  };
}
