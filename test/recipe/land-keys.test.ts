// The merge train's recipe keys: land: train is the default of merge: apply and implies it; a
// land: train without a worktree, or with another merge:, and max_repairs with land: direct are
// problems at their file:line:col; max_repairs defaults to 2; land_order is completion unless
// task is chosen, and means nothing with land: direct.
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { loadRecipe } from '../../src/recipe/index.js';
import { cleanupTempDirs, tempProject } from '../orchestrator/helpers/run-fixtures.js';

afterAll(() => cleanupTempDirs());

function load(tasks: string) {
  const dir = tempProject({
    'recipe.yaml': `name: keys\nprovider: scripted\nscript: script.yaml\ntasks:\n${tasks}`,
    'script.yaml': 'turns: [{ text: done }]\n',
  });
  return loadRecipe(join(dir, 'recipe.yaml'));
}

describe('land, max_repairs, serialize', () => {
  it('merge: apply lands through the train by default, with 2 repairs; land: train alone means merge: apply', () => {
    const r = load(`  - id: a
    prompt: "x"
    isolation: worktree
    merge: apply
  - id: b
    prompt: "x"
    isolation: worktree
    land: train
    max_repairs: 0
    serialize: overlapping
  - id: c
    prompt: "x"
    isolation: worktree
    merge: apply
    land: direct
`);
    if (!r.ok) throw new Error(JSON.stringify(r.problems));
    const [a, b, c] = r.recipe.tasks;
    expect([a!.merge, a!.land, a!.maxRepairs, a!.serialize]).toEqual(['apply', 'train', 2, undefined]);
    expect([b!.merge, b!.land, b!.maxRepairs, b!.serialize]).toEqual(['apply', 'train', 0, 'overlapping']);
    expect([c!.merge, c!.land]).toEqual(['apply', 'direct']);
  });

  it('land: train needs a worktree and merge: apply; max_repairs needs the train', () => {
    const r = load(`  - id: a
    prompt: "x"
    land: train
  - id: b
    prompt: "x"
    isolation: worktree
    merge: branch
    land: train
  - id: c
    prompt: "x"
    isolation: worktree
    merge: apply
    land: direct
    max_repairs: 3
  - id: d
    prompt: "x"
    land: sometimes
`);
    expect(r.ok).toBe(false);
    const problems = r.ok ? [] : r.problems.map((p) => `${p.line}:${p.col} ${p.message}`);
    expect(problems).toContain('7:5 task "a" sets land: train, which needs isolation: worktree');
    expect(problems).toContain(
      '12:5 task "b" sets land: train with merge: branch; the train lands in the checkout (merge: apply)',
    );
    expect(problems).toContain('18:5 task "c" sets max_repairs with land: direct, which never repairs');
    expect(problems).toContain('21:11 task "d" land must be one of: train, direct (got "sometimes")');
  });

  it('land_order: completion by default, task by choice, and a problem with land: direct or an unknown order', () => {
    const ok = load(`  - id: a
    prompt: "x"
    isolation: worktree
    merge: apply
  - id: b
    prompt: "x"
    isolation: worktree
    land: train
    land_order: task
`);
    if (!ok.ok) throw new Error(JSON.stringify(ok.problems));
    expect(ok.recipe.tasks.map((t) => t.landOrder)).toEqual(['completion', 'task']);
    const bad = load(`  - id: c
    prompt: "x"
    isolation: worktree
    merge: apply
    land: direct
    land_order: task
  - id: d
    prompt: "x"
    isolation: worktree
    land_order: recipe
`);
    expect(bad.ok).toBe(false);
    const problems = bad.ok ? [] : bad.problems.map((p) => `${p.line}:${p.col} ${p.message}`);
    expect(problems).toContain(
      '10:5 task "c" sets land_order with land: direct, which lands each patch as it finishes',
    );
    expect(problems).toContain('14:17 task "d" land_order must be one of: completion, task (got "recipe")');
  });
});
