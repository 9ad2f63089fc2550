// The recipe side of the task board: who gets its tools by default, the `board:` and agent
// `board:` switches, seeds and their ids, `for_each: board` as a fan-out known only when the task
// starts, and a bad `board:` value at its file:line:col.
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { loadRecipe } from '../../src/recipe/load.js';
import { buildPlan, expandTask } from '../../src/recipe/plan.js';
import { cleanupTempDirs, tempProject } from '../orchestrator/helpers/run-fixtures.js';

afterAll(() => cleanupTempDirs());

const BOARD = ['task_create', 'task_list', 'task_get', 'task_update'];

function load(text: string) {
  const dir = tempProject({ 'recipe.yaml': text });
  return loadRecipe(join(dir, 'recipe.yaml'), { cwd: dir, env: {} });
}

function tools(text: string): Record<string, string[]> {
  const r = load(text);
  if (!r.ok) throw new Error(JSON.stringify(r.problems));
  return Object.fromEntries(Object.entries(r.recipe.agents).map(([n, a]) => [n, a.tools]));
}

const two = (top = '', a = '', b = '') => `name: t
${top}
agents:
  a: { tools: [read]${a} }
  b: { tools: [read, task_list]${b} }
tasks:
  - { id: one, agent: a, prompt: x }
  - { id: two, agent: b, prompt: y }
`;

describe('task board in recipes', () => {
  it('is on by default with several agents; tools named in tools: are kept as the only ones', () => {
    expect(tools(two())).toEqual({ a: ['read', ...BOARD], b: ['read', 'task_list'] });
  });

  it('is off for a single agent unless asked, and board: false turns it off', () => {
    const single = 'name: t\nagents:\n  a: { tools: [read] }\ntasks:\n  - { id: one, agent: a, prompt: x }\n';
    expect(tools(single)).toEqual({ a: ['read'] });
    expect(tools(single.replace('tools: [read]', 'tools: [read], board: true'))).toEqual({ a: ['read', ...BOARD] });
    expect(tools(`board: true\n${single.replace('name: t\n', 'name: t\n')}`)).toEqual({ a: ['read', ...BOARD] });
    expect(tools(two('board: false'))).toEqual({ a: ['read'], b: ['read', 'task_list'] });
    expect(tools(two('', '', ', board: false'))).toEqual({ a: ['read', ...BOARD], b: ['read'] });
  });

  it('a fan-out counts as several agents', () => {
    const fan =
      'name: t\nagents:\n  a: { tools: [read] }\ntasks:\n  - { id: one, agent: a, for_each: [x, y], prompt: x }\n';
    expect(tools(fan)).toEqual({ a: ['read', ...BOARD] });
  });

  it('seeds the board: numbered ids around the given ones, blocked_by as strings', () => {
    const r = load(
      two(`board:
  - Write the docs
  - { id: spec, subject: Write the spec, owner: one }
  - { subject: Build it, blocked_by: [spec, 1], description: all of it }`),
    );
    if (!r.ok) throw new Error(JSON.stringify(r.problems));
    expect(r.recipe.board).toEqual([
      { id: '1', subject: 'Write the docs', blockedBy: [] },
      { id: 'spec', subject: 'Write the spec', owner: 'one', blockedBy: [] },
      { id: '2', subject: 'Build it', description: 'all of it', blockedBy: ['spec', '1'] },
    ]);
  });

  it('for_each: board is a fan-out known when the task starts: the items the coordinator gives', () => {
    const r = load(`name: t
board: [a, b]
tasks:
  - { id: plan, prompt: x }
  - { id: work, needs: [plan], for_each: board, prompt: "Do #\${{ item.id }}: \${{ item.subject }}" }
`);
    if (!r.ok) throw new Error(JSON.stringify(r.problems));
    const plan = buildPlan(r.recipe, { env: {} });
    if (!plan.ok) throw new Error(JSON.stringify(plan.problems));
    expect(plan.plan.tasks.find((t) => t.id === 'work')).toMatchObject({ fanOut: 'dynamic', instances: [] });
    const work = r.recipe.tasks.find((t) => t.id === 'work')!;
    const exp = expandTask(work, {
      inputs: {},
      env: {},
      tasks: {},
      board: [
        { id: '1', subject: 'a', status: 'pending', blocked_by: [] },
        { id: '3', subject: 'c', status: 'in_progress', blocked_by: [] },
      ],
    });
    expect(exp.ok && exp.instances.map((i) => i.id)).toEqual(['work.1', 'work.3']);
  });

  it('a board: that is neither a switch nor a list is an error at its line', () => {
    const r = load('name: t\nboard: 3\ntasks:\n  - { id: one, prompt: x }\n');
    expect(r.ok).toBe(false);
    if (r.ok) return;
    expect(r.problems[0]).toMatchObject({ line: 2, code: 'bad_board' });
    expect(r.problems[0]!.message).toMatch(/board must be true, false or a list of items/);
  });
});

describe('board: seeds that cannot work are validate errors at their line', () => {
  it('a blocked_by naming no item, an item blocked by itself, and an id used twice', () => {
    const r = load(`name: t
board:
  - Write the docs
  - { id: spec, subject: Spec, blocked_by: [1, sepc] }
  - { id: spec, subject: Again }
  - { id: loop, subject: Loop, blocked_by: [loop] }
tasks:
  - { id: one, prompt: x }
`);
    expect(r.ok).toBe(false);
    if (r.ok) return;
    expect(r.problems.map((p) => `${p.line}:${p.code}:${p.message}`)).toEqual([
      '4:bad_board:blocked_by names no board item: "sepc"',
      '5:bad_board:board item id "spec" is used twice (first by item 2)',
      '6:bad_board:board item "loop" is blocked by itself',
    ]);
    expect(r.problems[0]!.hint).toContain('"1", "spec", "loop"');
  });
});
