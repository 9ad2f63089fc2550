// Overlap prediction for a dry run: the instances whose `writes:` globs could touch the same file,
// found before anything runs (the same conservative test the scheduler uses, orchestrator's
// write-scopes.ts). Each pair says what the run will do with it: instances that both land through
// the merge train (`land: train`) run in parallel and the train merges their work (repairing a
// conflict), unless their task asks `serialize: overlapping`; any other pair runs one after
// another. Instances of a fan-out over another task's output are not known yet and are left out.
import type { LoadedRecipe, LoadedTask, RecipePlan } from '../recipe/index.js';
import type { WriteOverlap } from '../recipe/dry-run.js';
import { resolveInstance, staticScope } from '../recipe/index.js';
import { landsByTrain } from '../orchestrator/workspace/land-turn.js';
import { scopesOverlap, writeGlobs } from '../orchestrator/workspace/write-scopes.js';

/** Whether `task`'s instances land through the merge train without asking to be serialized. */
export function trainsInParallel(task: LoadedTask): boolean {
  return landsByTrain(task) && task.serialize !== 'overlapping';
}

/** Every pair of the plan's known instances whose writes: overlap. */
export function writeOverlaps(
  recipe: LoadedRecipe,
  plan: RecipePlan,
  env: Readonly<Record<string, string | undefined>>,
): WriteOverlap[] {
  const scope = staticScope(recipe, env);
  const byId = new Map(recipe.tasks.map((t) => [t.id, t]));
  const scoped: { key: string; task: LoadedTask; globs: string[] }[] = [];
  for (const p of plan.tasks) {
    const task = byId.get(p.id);
    if (!task || task.writes.length === 0) continue;
    for (const seed of p.instances) {
      const r = resolveInstance(task, seed, scope);
      if (r.ok && r.instance.writes.length)
        scoped.push({ key: seed.id, task, globs: writeGlobs(r.instance.cwd, r.instance.writes) });
    }
  }
  const out: WriteOverlap[] = [];
  for (let i = 0; i < scoped.length; i++)
    for (let j = i + 1; j < scoped.length; j++) {
      const x = scoped[i]!;
      const y = scoped[j]!;
      if (!scopesOverlap(x.globs, y.globs)) continue;
      const parallel = trainsInParallel(x.task) || trainsInParallel(y.task);
      out.push({ a: x.key, b: y.key, how: parallel ? 'parallel' : 'serialized' });
    }
  return out;
}

/** The dry run's warning for an overlapping pair. */
export function overlapWarning(o: WriteOverlap): string {
  return o.how === 'parallel'
    ? `${o.a} and ${o.b} may write the same files (their writes: overlap): they run in parallel and the merge train merges their work, repairing a conflict (serialize: overlapping runs them one after another)`
    : `${o.a} and ${o.b} may write the same files (their writes: overlap): they run one after another`;
}
