// The recipe side of best-of-N attempts: `attempts:` expands each instance into `<id>.attempt-<n>`
// with `${{ attempt }}` rendered and `models:` spread round-robin over copies of the agent (the
// judge's copy has no tools); keys that need `attempts:` or conflict with it are problems at their
// file:line:col; and the pure pick rule of `pick: verify` orders by lines, then cost, then number.
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { loadRecipe } from '../../src/recipe/load.js';
import { buildPlan, resolveInstance, staticScope } from '../../src/recipe/plan.js';
import { changedLines, pickByVerify } from '../../src/orchestrator/schedule/attempt-groups.js';
import type { PickCandidate } from '../../src/run/attempt-pick-record.js';
import { cleanupTempDirs, tempProject } from '../orchestrator/helpers/run-fixtures.js';

afterAll(() => cleanupTempDirs());

const recipe = (task: string) => `name: attempts
model: claude-sonnet-4-5
provider: scripted
script: script.yaml
agents:
  worker: { tools: [read, bash] }
tasks:
  - id: fix
    agent: worker
${task}`;

function load(task: string) {
  const dir = tempProject({ 'recipe.yaml': recipe(task), 'script.yaml': 'turns:\n  - text: done\n' });
  return loadRecipe(join(dir, 'recipe.yaml'));
}

describe('attempts: in a recipe', () => {
  it('expands an instance into its attempts, renders ${{ attempt }} and spreads models round-robin', () => {
    const loaded = load(`    attempts: 3
    pick: judge
    judge: { model: claude-opus-4-1 }
    models: [claude-haiku-4-5, claude-opus-4-1]
    prompt: "try \${{ attempt }}"
`);
    if (!loaded.ok) throw new Error(JSON.stringify(loaded.problems));
    const r = loaded.recipe;
    const task = r.tasks[0]!;
    expect(task.isolation).toBe('worktree');
    const plan = buildPlan(r);
    if (!plan.ok) throw new Error(JSON.stringify(plan.problems));
    const seeds = plan.plan.tasks[0]!.instances;
    expect(seeds.map((s) => s.id)).toEqual(['fix.attempt-1', 'fix.attempt-2', 'fix.attempt-3']);
    expect(plan.plan.tasks[0]!.attempts).toEqual({ count: 3, pick: 'judge' });
    const resolved = seeds.map((s) => {
      const x = resolveInstance(task, s, staticScope(r, {}));
      if (!x.ok) throw new Error(x.error);
      return x.instance;
    });
    expect(resolved.map((i) => i.prompt)).toEqual(['try 1', 'try 2', 'try 3']);
    expect(resolved.map((i) => r.agents[i.agent!]?.model)).toEqual([
      'claude-haiku-4-5',
      'claude-opus-4-1',
      'claude-haiku-4-5',
    ]);
    const judge = r.agents[task.attempts!.judgeAgent!]!;
    expect(judge).toMatchObject({ model: 'claude-opus-4-1', tools: [] });
    // The agent itself is unchanged.
    expect(r.agents.worker).toMatchObject({ model: 'claude-sonnet-4-5', tools: ['read', 'bash'] });
  });

  it('gives each item of a fan-out its own attempts', () => {
    const loaded = load(`    attempts: 2
    for_each: [a, b]
    prompt: "\${{ item }} try \${{ attempt }}"
`);
    if (!loaded.ok) throw new Error(JSON.stringify(loaded.problems));
    const plan = buildPlan(loaded.recipe);
    if (!plan.ok) throw new Error(JSON.stringify(plan.problems));
    const seeds = plan.plan.tasks[0]!.instances;
    expect(seeds.map((s) => [s.id, s.attempt?.of])).toEqual([
      ['fix.a.attempt-1', 'fix.a'],
      ['fix.a.attempt-2', 'fix.a'],
      ['fix.b.attempt-1', 'fix.b'],
      ['fix.b.attempt-2', 'fix.b'],
    ]);
    const task = loaded.recipe.tasks[0]!;
    const prompts = seeds.map((s) => {
      const x = resolveInstance(task, s, staticScope(loaded.recipe, {}));
      return x.ok ? x.instance.prompt : x.error;
    });
    expect(prompts).toEqual(['a try 1', 'a try 2', 'b try 1', 'b try 2']);
  });

  it.each([
    ['    pick: first\n    prompt: "p"\n', 'sets pick but runs one attempt', 10],
    ['    attempts: 2\n    isolation: none\n    prompt: "p"\n', 'isolation: none', 11],
    ['    attempts: 2\n    judge: { model: x }\n    prompt: "p"\n', 'sets judge but pick is verify', 11],
    ['    prompt: "try ${{ attempt }}"\n', 'unknown name "attempt"', 10],
  ])('a problem at its file:line: %s', (task, message, line) => {
    const loaded = load(task);
    expect(loaded.ok).toBe(false);
    if (loaded.ok) return;
    const p = loaded.problems.find((x) => x.message.includes(message));
    expect(p, JSON.stringify(loaded.problems)).toBeDefined();
    expect(p!.line).toBe(line);
  });

  it('attempts on a run: step is a problem', () => {
    const dir = tempProject({
      'recipe.yaml': `name: x
tasks:
  - id: sh
    run: "true"
    attempts: 2
`,
    });
    const loaded = loadRecipe(join(dir, 'recipe.yaml'));
    expect(loaded.ok).toBe(false);
    if (!loaded.ok) expect(loaded.problems.map((p) => p.message).join('\n')).toContain('attempts need an agent');
  });
});

describe('pick: verify', () => {
  const c = (attempt: number, outcome: PickCandidate['outcome'], lines: number, cost: number): PickCandidate => ({
    key: `t.attempt-${attempt}`,
    attempt,
    outcome,
    lines,
    cost,
  });
  it('takes the fewest changed lines, then the lowest cost, then the lowest attempt number, of those that passed', () => {
    expect(pickByVerify([c(1, 'failed', 1, 0), c(2, 'passed', 9, 0.1), c(3, 'passed', 4, 0.5)])?.attempt).toBe(3);
    expect(pickByVerify([c(1, 'passed', 4, 0.5), c(2, 'passed', 4, 0.2), c(3, 'passed', 4, 0.2)])?.attempt).toBe(2);
    expect(pickByVerify([c(1, 'failed', 1, 0), c(2, 'cancelled', 1, 0)])).toBeUndefined();
  });
  it('counts the lines a diff adds and removes, not its file headers', () => {
    expect(changedLines('--- a/x\n+++ b/x\n@@ -1 +1,2 @@\n-old\n+new\n+more\n context\n')).toBe(3);
  });
});
