// Plan expansion: the three for_each forms, stable keys, rendering of instances, levels.
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { loadRecipe } from '../../src/recipe/load.js';
import type { LoadedRecipe, LoadedTask } from '../../src/recipe/loaded-recipe.js';
import { buildPlan, expandTask, resolveInstance, staticScope } from '../../src/recipe/plan.js';
import { type TempRecipe, tempRecipe } from './recipe-files.js';

let temp: TempRecipe | undefined;
afterEach(() => temp?.cleanup());

function load(yaml: string, files: Record<string, string> = {}, set: string[] = []): LoadedRecipe {
  temp = tempRecipe(yaml, files);
  const r = loadRecipe(temp.file, { cwd: temp.dir, env: {}, set });
  if (!r.ok) throw new Error(r.problems.map((p) => `${p.line}:${p.col} ${p.message}`).join('\n'));
  return r.recipe;
}
const task = (recipe: LoadedRecipe, id: string): LoadedTask => recipe.tasks.find((t) => t.id === id)!;

describe('expandTask', () => {
  it('a plain task has one instance named after the task', () => {
    const recipe = load('name: r\ntasks:\n  - id: solo\n    prompt: hi\n');
    expect(expandTask(task(recipe, 'solo'), staticScope(recipe, {}))).toEqual({
      ok: true,
      instances: [{ id: 'solo', taskId: 'solo', index: 0 }],
    });
  });

  it('a literal list gives one instance per item with a key derived from the item', () => {
    const recipe = load(
      'name: r\ntasks:\n  - id: t\n    for_each: ["Svc A", svc-b, 3, {name: Ünïcode}, {x: 1}]\n    prompt: "do ${{ item }}"\n',
    );
    const r = expandTask(task(recipe, 't'), staticScope(recipe, {}));
    expect(r.ok).toBe(true);
    if (!r.ok) return;
    expect(r.instances.map((i) => i.id)).toEqual([
      't.svc-a',
      't.svc-b',
      't.3',
      't.unicode',
      expect.stringMatching(/^t\.[0-9a-f]{8}$/),
    ]);
    expect(r.instances.map((i) => i.item)).toEqual(['Svc A', 'svc-b', 3, { name: 'Ünïcode' }, { x: 1 }]);
  });

  it('keys are stable: they depend on the item, not on its position', () => {
    const a = load('name: r\ntasks:\n  - id: t\n    for_each: [alpha, beta, gamma]\n    prompt: "${{ item }}"\n');
    const first = expandTask(task(a, 't'), staticScope(a, {}));
    temp?.cleanup();
    const b = load('name: r\ntasks:\n  - id: t\n    for_each: [gamma, new, alpha]\n    prompt: "${{ item }}"\n');
    const second = expandTask(task(b, 't'), staticScope(b, {}));
    const keyOf = (r: typeof first, item: string) => (r.ok ? r.instances.find((i) => i.item === item)?.key : undefined);
    expect(keyOf(first, 'alpha')).toBe(keyOf(second, 'alpha'));
    expect(keyOf(first, 'gamma')).toBe(keyOf(second, 'gamma'));
  });

  it('a glob expands to matching folders relative to the recipe folder, sorted, hidden ones skipped', () => {
    const recipe = load('name: r\ntasks:\n  - id: t\n    for_each: { glob: "repos/*" }\n    prompt: "${{ item }}"\n', {
      'repos/b-repo/README.md': 'b',
      'repos/a-repo/README.md': 'a',
      'repos/.hidden/x': 'x',
      'repos/file.txt': 'not a folder',
    });
    const r = expandTask(task(recipe, 't'), staticScope(recipe, {}));
    expect(r.ok && r.instances.map((i) => [i.id, i.item])).toEqual([
      ['t.repos-a-repo', 'repos/a-repo'],
      ['t.repos-b-repo', 'repos/b-repo'],
    ]);
  });

  it('a glob can ask for files, use ** and take inputs', () => {
    const recipe = load(
      'name: r\ninputs:\n  root: { default: src }\ntasks:\n  - id: t\n    for_each: { glob: "${{ inputs.root }}/**/*.ts", type: file }\n    prompt: "${{ item }}"\n',
      {
        'src/a.ts': '',
        'src/deep/b.ts': '',
        'src/deep/c.js': '',
        'src/node_modules/x.ts': '',
      },
    );
    const r = expandTask(task(recipe, 't'), staticScope(recipe, {}));
    expect(r.ok && r.instances.map((i) => i.item)).toEqual(['src/a.ts', 'src/deep/b.ts']);
  });

  it('an expression over a task output expands once the output is known, keyed by `key`', () => {
    const recipe = load(
      'name: r\ntasks:\n  - id: plan\n    prompt: p\n    output: json\n  - id: apply\n    needs: [plan]\n    for_each: ${{ tasks.plan.output.subtasks }}\n    as: sub\n    key: ${{ sub.repo }}\n    prompt: "fix ${{ sub.repo }}"\n',
    );
    const apply = task(recipe, 'apply');
    expect(apply.forEach).toEqual({
      kind: 'expression',
      expression: '${{ tasks.plan.output.subtasks }}',
      sources: ['plan'],
    });
    const scope = {
      ...staticScope(recipe, {}),
      tasks: {
        plan: {
          output: {
            subtasks: [
              { repo: 'svc/api', files: 3 },
              { repo: 'svc/web', files: 1 },
            ],
          },
        },
      },
    };
    const r = expandTask(apply, scope);
    expect(r.ok && r.instances.map((i) => i.id)).toEqual(['apply.svc-api', 'apply.svc-web']);
    expect(expandTask(apply, { ...scope, tasks: { plan: { output: { subtasks: 'oops' } } } })).toEqual({
      ok: false,
      error: 'task "apply": for_each ${{ tasks.plan.output.subtasks }} gave string "oops", not a list',
    });
    expect(expandTask(apply, { ...scope, tasks: {} })).toMatchObject({ ok: false });
  });

  it('items that slug alike get a content hash; identical items are an error', () => {
    const recipe = load('name: r\ntasks:\n  - id: t\n    for_each: ["a b", "a-b", "A B"]\n    prompt: "${{ item }}"\n');
    const r = expandTask(task(recipe, 't'), staticScope(recipe, {}));
    expect(r.ok).toBe(true);
    if (r.ok) {
      const keys = r.instances.map((i) => i.key!);
      expect(new Set(keys).size).toBe(3);
      for (const k of keys) expect(k).toMatch(/^a-b-[0-9a-f]{8}$/);
    }
    temp?.cleanup();
    const dup = load('name: r\ntasks:\n  - id: t\n    for_each: [x, y, x]\n    prompt: "${{ item }}"\n');
    expect(expandTask(task(dup, 't'), staticScope(dup, {}))).toMatchObject({
      ok: false,
      error: expect.stringContaining('2 items with the key "x"'),
    });
  });

  it('long keys are cut and hashed so session file names stay short and distinct', () => {
    const long = 'x'.repeat(200);
    const recipe = load(
      `name: r\ntasks:\n  - id: t\n    for_each: ["${long}a", "${long}b"]\n    prompt: "\${{ item }}"\n`,
    );
    const r = expandTask(task(recipe, 't'), staticScope(recipe, {}));
    expect(r.ok).toBe(true);
    if (r.ok) {
      const [a, b] = r.instances.map((i) => i.key!);
      expect(a!.length).toBeLessThanOrEqual(48);
      expect(a).not.toBe(b);
      expect(a).toMatch(/^x+-[0-9a-f]{8}$/);
    }
  });
});

describe('resolveInstance', () => {
  it('renders prompt, run, cwd (absolute), writes, verify and env with the item', () => {
    const recipe = load(
      'name: r\ninputs:\n  tag: { default: v2 }\ntasks:\n  - id: t\n    for_each: [{path: pkgs/a}]\n    as: pkg\n    cwd: ${{ pkg.path }}\n    prompt: "Upgrade ${{ pkg.path }} to ${{ inputs.tag }}"\n    writes: ["${{ pkg.path }}/**"]\n    verify: ["npm test -w ${{ pkg.path }}", {name: types, run: "tsc -p ${{ pkg.path }}"}]\n    env: { TARGET: "${{ inputs.tag }}" }\n',
    );
    const t = task(recipe, 't');
    const scope = staticScope(recipe, {});
    const expanded = expandTask(t, scope);
    if (!expanded.ok) throw new Error(expanded.error);
    const seed = expanded.instances[0]!;
    const r = resolveInstance(t, seed, scope);
    expect(r).toEqual({
      ok: true,
      instance: {
        id: 't.pkgs-a',
        taskId: 't',
        key: 'pkgs-a',
        item: { path: 'pkgs/a' },
        index: 0,
        prompt: 'Upgrade pkgs/a to v2',
        cwd: join(recipe.dir, 'pkgs/a'),
        writes: ['pkgs/a/**'],
        verify: [{ run: 'npm test -w pkgs/a' }, { name: 'types', run: 'tsc -p pkgs/a' }],
        env: { TARGET: 'v2' },
      },
    });
  });

  it('a missing upstream output is an error that names the task, instance and field', () => {
    const recipe = load(
      'name: r\ntasks:\n  - id: a\n    prompt: p\n    output: json\n  - id: b\n    needs: [a]\n    prompt: "use ${{ tasks.a.output.value }}"\n',
    );
    const b = task(recipe, 'b');
    const r = resolveInstance(
      b,
      { id: 'b', taskId: 'b', index: 0 },
      { ...staticScope(recipe, {}), tasks: { a: { output: {} } } },
    );
    expect(r).toEqual({
      ok: false,
      error:
        'task "b" (b) prompt: ${{ tasks.a.output.value }} is undefined; use tasks.a.output.value || \'\' if it may be missing',
    });
  });
});

describe('buildPlan', () => {
  it('orders tasks by level, expands static fan-outs now and leaves dynamic ones for later', () => {
    const recipe = load(
      'name: r\ninputs:\n  targets: { type: list, default: [x, y] }\ntasks:\n  - id: plan\n    prompt: p\n    output: json\n  - id: scan\n    for_each: ${{ inputs.targets }}\n    prompt: "scan ${{ item }}"\n  - id: apply\n    needs: [plan]\n    for_each: ${{ tasks.plan.output.items }}\n    prompt: "${{ item }}"\n  - id: report\n    needs: [apply, scan]\n    run: echo done\n',
    );
    const r = buildPlan(recipe, { env: {} });
    expect(r.ok).toBe(true);
    if (!r.ok) return;
    expect(r.plan.levels).toEqual([
      { level: 0, tasks: ['plan', 'scan'], instances: 3, dynamic: false },
      { level: 1, tasks: ['apply'], instances: 0, dynamic: true },
      { level: 2, tasks: ['report'], instances: 1, dynamic: false },
    ]);
    expect(r.plan.tasks.map((t) => [t.id, t.fanOut, t.instances.length])).toEqual([
      ['plan', 'none', 1],
      ['scan', 'static', 2],
      ['apply', 'dynamic', 0],
      ['report', 'none', 1],
    ]);
    expect(r.plan.instanceCount).toBe(4);
  });

  it('--set values reach static fan-outs', () => {
    const recipe = load(
      'name: r\ninputs:\n  targets: { type: list, default: [x] }\ntasks:\n  - id: scan\n    for_each: ${{ inputs.targets }}\n    prompt: "scan ${{ item }}"\n',
      {},
      ['targets=a,b,c'],
    );
    const r = buildPlan(recipe, { env: {} });
    expect(r.ok && r.plan.tasks[0]!.instances.map((i) => i.item)).toEqual(['a', 'b', 'c']);
  });

  it('a glob that matches nothing is a warning, not an error', () => {
    const recipe = load('name: r\ntasks:\n  - id: t\n    for_each: { glob: "none/*" }\n    prompt: "${{ item }}"\n');
    mkdirSync(join(recipe.dir, 'none'));
    const r = buildPlan(recipe, { env: {} });
    expect(r.ok && r.plan.warnings).toEqual(['task "t": for_each produced no items, so it will have no instances']);
  });

  it('a static expansion error points at the for_each', () => {
    const recipe = load(
      'name: r\ninputs:\n  one: { default: solo }\ntasks:\n  - id: t\n    for_each: ${{ inputs.one }}\n    prompt: "${{ item }}"\n',
    );
    const r = buildPlan(recipe, { env: {}, displayFile: 'recipe.yaml' });
    expect(r).toEqual({
      ok: false,
      problems: [
        {
          code: 'bad_for_each',
          file: 'recipe.yaml',
          line: 6,
          col: 15,
          message: 'task "t": for_each ${{ inputs.one }} gave string "solo", not a list',
        },
      ],
    });
  });
});
