// Validation reports every problem at once, sorted, at the right line and column.
import { describe, expect, it } from 'vitest';
import { validateRecipeText } from '../../src/recipe/validate.js';
import { formatProblem } from '../../src/recipe/problems.js';

const check = (yaml: string) => {
  const r = validateRecipeText(yaml, '/work/r/recipe.yaml', { cwd: '/work/r' });
  return r.ok ? [] : r.problems.map((p) => `${p.line}:${p.col} ${p.message}`);
};

describe('validateRecipeText', () => {
  it('reports schema and cross-reference problems together, sorted by position', () => {
    const yaml = [
      'name: many',
      'concurrency: 0',
      'agents:',
      '  worker: { tools: [read, bsh] }',
      'tasks:',
      '  - id: a',
      '    agent: wrker',
      '    prompt: "${{ inputs.x }}"',
      '    timeout: soon',
      '  - id: b',
      '    needs: [a, zz]',
      '    prompt: p',
      '    colour: red',
    ].join('\n');
    expect(check(yaml)).toEqual([
      '2:14 concurrency must be more than 0 (got number 0)',
      '4:27 agent "worker" uses unknown tool "bsh"',
      '7:12 task "a" uses unknown agent "wrker"',
      '8:25 task "a" prompt: unknown input "x"',
      '9:14 task "a" timeout: bad duration "soon"',
      '11:16 task "b" needs unknown task "zz"',
      '13:5 unknown key "colour" in task "b"',
    ]);
  });

  it('a task needing an unknown task is never told to need itself', () => {
    const yaml = ['name: self', 'tasks:', '  - id: a', '    needs: [b]', '    prompt: p'].join('\n');
    const r = validateRecipeText(yaml, '/work/r/recipe.yaml', { cwd: '/work/r' });
    expect(r.ok).toBe(false);
    const p = r.ok ? undefined : r.problems.find((x) => x.message === 'task "a" needs unknown task "b"');
    expect(p?.hint).toBe('no task ids defined');
  });

  it("an agent's summaries is model or extractive", () => {
    expect(
      check('name: r\nagents:\n  w: { summaries: extractive }\ntasks:\n  - id: a\n    agent: w\n    prompt: p\n'),
    ).toEqual([]);
    const problems = check(
      'name: r\nagents:\n  w: { summaries: cheap }\ntasks:\n  - id: a\n    agent: w\n    prompt: p\n',
    );
    expect(problems).toHaveLength(1);
    expect(problems[0]).toMatch(/^3:19 .*summaries.*(model|extractive)/);
  });

  it('cross-reference checks still run when the schema rejects other parts', () => {
    const problems = check('name: 5\ntasks:\n  - id: a\n    needs: [ghost]\n    prompt: p\n');
    expect(problems).toEqual(['1:7 name must be text, not number 5', '4:13 task "a" needs unknown task "ghost"']);
  });

  it('points inside block scalars at the expression', () => {
    const yaml =
      'name: r\ntasks:\n  - id: a\n    prompt: |\n      First line.\n      Then ${{ tasks.nope.output }} here.\n';
    expect(check(yaml)).toEqual(['6:22 task "a" prompt: unknown task "nope"']);
  });

  it('an expression where nothing evaluates it is reported at the string', () => {
    expect(check('name: r\ndescription: "${{ inputs.x }}"\ntasks:\n  - id: a\n    prompt: p\n')).toEqual([
      '2:15 description: expressions are not evaluated here',
    ]);
  });

  it('fields evaluated before tasks run may not read tasks or items', () => {
    const yaml = [
      'name: r',
      'env:',
      '  A: "${{ tasks.x.output }}"',
      'tasks:',
      '  - id: x',
      '    prompt: p',
      '    output: json',
      '  - id: y',
      '    needs: [x]',
      '    for_each: ${{ item.list }}',
      '    prompt: "${{ item }}"',
      '  - id: z',
      '    for_each: { glob: "${{ tasks.x.output }}/*" }',
      '    prompt: "${{ item }}"',
    ].join('\n');
    expect(check(yaml)).toEqual([
      '3:11 env.A: tasks is not available here: run-level env and defaults are set before any task runs',
      '10:19 task "y" for_each: "item" is not available here: for_each cannot use the items it produces',
      '13:28 task "z" for_each.glob: tasks is not available here: a glob is expanded before any task runs',
    ]);
  });

  it('yaml syntax errors stop further checks; duplicate keys do not', () => {
    expect(check('name: r\ntasks: [\n')).toHaveLength(1);
    expect(check('name: r\nname: s\ntasks:\n  - id: a\n    agent: nobody\n    prompt: p\n')).toEqual([
      '2:1 duplicate key: map keys must be unique',
      '5:12 task "a" uses unknown agent "nobody"',
    ]);
  });

  it('aliases are resolved but alias bombs are refused', () => {
    expect(check('name: r\nx: &p hi\ntasks:\n  - id: a\n    prompt: *p\n')).toEqual([
      '2:1 unknown key "x" in the recipe',
    ]);
    const bomb = [
      'name: r',
      'a: &a [x, x, x, x, x, x, x, x, x, x]',
      'b: &b [*a, *a, *a, *a, *a, *a, *a, *a, *a, *a]',
      'c: &c [*b, *b, *b, *b, *b, *b, *b, *b, *b, *b]',
      'tasks: []',
    ].join('\n');
    expect(check(bomb)[0]).toMatch(/^1:1 YAML: .*alias/i);
  });

  it('formatProblem prints file:line:col: message and an indented hint', () => {
    const r = validateRecipeText('name: r\ntasks:\n  - id: a\n    promt: p\n', '/work/r/recipe.yaml', { cwd: '/work' });
    expect(r.ok).toBe(false);
    if (!r.ok) {
      const unknown = r.problems.find((p) => p.code === 'unknown_key')!;
      expect(formatProblem(unknown)).toBe(
        'r/recipe.yaml:4:5: unknown key "promt" in task "a"\n  hint: did you mean "prompt"?',
      );
      expect(unknown.path).toBe('tasks[0].promt');
    }
  });
});
