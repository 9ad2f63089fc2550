// ${{ }} expressions: parsing, evaluation, and the load-time reference checks.
import { describe, expect, it } from 'vitest';
import { parseExpression, parseTemplate, hasExpression } from '../../src/recipe/expression-parser.js';
import {
  type ExpressionScope,
  type ReferenceContext,
  type TaskRefInfo,
  checkTemplate,
  referencedTasks,
  referencePath,
  renderTemplate,
  renderText,
} from '../../src/recipe/expressions.js';

const scope: ExpressionScope = {
  inputs: { repo: 'svc-a', count: 3, flags: ['x', 'y'], empty: '' },
  env: { HOME: '/home/u' },
  tasks: {
    plan: { output: { subtasks: [{ repo: 'a' }, { repo: 'b' }], title: 'Plan' }, summary: 'planned two' },
    each: { output: ['one', 'two'] },
  },
};
const value = (text: string, s: ExpressionScope = scope) => {
  const r = renderTemplate(text, s);
  if (!r.ok) throw new Error(r.error);
  return r.value;
};
const error = (text: string, s: ExpressionScope = scope) => {
  const r = renderTemplate(text, s);
  return r.ok ? undefined : r.error;
};

describe('evaluation', () => {
  it('a whole-string expression keeps its type; embedded ones are stringified', () => {
    expect(value('${{ tasks.plan.output.subtasks }}')).toEqual([{ repo: 'a' }, { repo: 'b' }]);
    expect(value('  ${{ inputs.count }} ')).toBe(3);
    expect(value('n=${{ inputs.count }}')).toBe('n=3');
    expect(value('list ${{ inputs.flags }}')).toBe('list ["x","y"]');
  });

  it('reads members, [0] indexes, quoted keys, env and the item under its `as` name', () => {
    expect(value('${{ tasks.plan.output.subtasks[1].repo }}')).toBe('b');
    expect(value("${{ tasks.plan.output['title'] }}")).toBe('Plan');
    expect(value('${{ tasks.plan.summary }}')).toBe('planned two');
    expect(value('${{ env.HOME }}/x')).toBe('/home/u/x');
    const withItem = { ...scope, item: { path: 'p/1' }, itemName: 'pkg' };
    expect(value('${{ pkg.path }} ${{ item.path }}', withItem)).toBe('p/1 p/1');
    expect(value('${{ tasks.each.output[0] }}')).toBe('one');
    expect(value('${{ tasks.each.output.length }}')).toBe(2);
  });

  it('== != && || ! and literals follow GitHub Actions semantics', () => {
    expect(value("${{ inputs.repo == 'svc-a' }}")).toBe(true);
    expect(value('${{ inputs.repo != "svc-a" }}')).toBe(false);
    expect(value("${{ inputs.count == '3' }}")).toBe(true);
    expect(value("${{ inputs.empty || 'fallback' }}")).toBe('fallback');
    expect(value('${{ inputs.repo && inputs.count }}')).toBe(3);
    expect(value('${{ !inputs.empty }}')).toBe(true);
    expect(value('${{ !(inputs.count == 3) || null }}')).toBe(null);
    expect(value("${{ 'it''s' }}")).toBe("it's");
    expect(value('${{ -1.5 }}')).toBe(-1.5);
  });

  it('join, json, length, contains and basename', () => {
    expect(value("${{ join(inputs.flags, ' + ') }}")).toBe('x + y');
    expect(value('${{ join(inputs.flags) }}')).toBe('x,y');
    expect(value('${{ json(tasks.plan.output.subtasks[0]) }}')).toBe('{\n  "repo": "a"\n}');
    expect(value('${{ length(tasks.plan.output.subtasks) }}')).toBe(2);
    expect(value("${{ contains(inputs.flags, 'y') }}")).toBe(true);
    expect(value("${{ contains(inputs.repo, 'svc') }}")).toBe(true);
    expect(value("${{ basename('projects/alpha') }}")).toBe('alpha');
  });

  it('$${{ is a literal ${{', () => {
    expect(value('use $${{ secrets.TOKEN }} in the workflow')).toBe('use ${{ secrets.TOKEN }} in the workflow');
    expect(hasExpression('use $${{ x }}')).toBe(false);
    expect(hasExpression('use ${{ x }}')).toBe(true);
  });

  it('missing data fails loudly instead of rendering an empty prompt', () => {
    expect(error('Fix ${{ tasks.plan.output.nothing }}')).toContain('is undefined');
    expect(value("Fix ${{ tasks.plan.output.nothing || 'all' }}")).toBe('Fix all');
    expect(error('${{ tasks.plan.output.nothing.deeper }}')).toContain(
      'cannot read "deeper" of tasks.plan.output.nothing',
    );
    expect(error('${{ tasks.plan.output.subtasks.repo }}')).toContain('is a list; index it with [0]');
    expect(error('${{ item }}')).toContain('only available in tasks with for_each');
    expect(error('${{ join(inputs.repo) }}')).toContain('join() needs a list');
  });

  it('cannot reach JavaScript internals: only own properties are visible', () => {
    expect(value('${{ inputs.constructor || "none" }}')).toBe('none');
    expect(value("${{ inputs['__proto__'] || 'none' }}")).toBe('none');
    expect(error('${{ constructor }}')).toContain('unknown name "constructor"');
    expect(renderText('${{ inputs.toString || "safe" }}', scope)).toEqual({ ok: true, value: 'safe' });
  });
});

describe('parsing', () => {
  it('reports syntax errors at their offset in the template', () => {
    const cases: [string, string, number][] = [
      ['a ${{ inputs.x = 1 }}', 'unexpected character "="', 15],
      ['${{ }}', 'empty expression', 4],
      ['${{ inputs. }}', 'expected a property name after "."', 12],
      ["${{ 'open }}", 'unterminated string literal', 4],
      ['${{ join(a, b }}', 'expected ")"', 14],
      ['${{ a b }}', 'unexpected "b" after the expression', 6],
      ['x ${{ inputs.x', 'unterminated expression', 2],
    ];
    for (const [text, message, offset] of cases) {
      const r = parseTemplate(text);
      expect(r.ok, text).toBe(false);
      if (!r.ok) {
        expect(r.error.message, text).toContain(message);
        expect(r.error.offset, text).toBe(offset);
      }
    }
  });

  it('a }} inside a string literal does not close the expression', () => {
    expect(value("${{ 'a }} b' }}")).toBe('a }} b');
  });

  it('|| binds looser than &&, which binds looser than ==', () => {
    const r = parseExpression('a || b && c == d');
    expect(r.ok && r.value.kind === 'binary' && r.value.op).toBe('||');
    if (r.ok && r.value.kind === 'binary') expect(r.value.right.kind === 'binary' && r.value.right.op).toBe('&&');
  });
});

describe('reference checks at load time', () => {
  const tasks = new Map<string, TaskRefInfo>([
    ['plan', { output: 'json', fansOut: false }],
    ['notes', { output: 'text', fansOut: false }],
    ['each', { output: 'json', fansOut: true }],
    ['later', { output: 'text', fansOut: false }],
    ['apply', { output: 'text', fansOut: false }],
  ]);
  const ctx = (extra: Partial<ReferenceContext> = {}): ReferenceContext => ({
    inputs: ['repo', 'count'],
    tasks,
    reachable: new Set(['plan', 'notes', 'each']),
    taskId: 'apply',
    ...extra,
  });
  const messages = (text: string, c = ctx()) => checkTemplate(text, c).map((i) => i.message);

  it('accepts what the task may see', () => {
    expect(
      messages(
        "${{ inputs.repo }} ${{ tasks.plan.output.a[0].b }} ${{ tasks.notes.summary }} ${{ join(tasks.each.output, ',') }} ${{ env.ANY }}",
      ),
    ).toEqual([]);
    expect(messages('${{ item.path }} ${{ pkg }}', ctx({ itemNames: ['item', 'pkg'] }))).toEqual([]);
  });

  it('flags unknown inputs, tasks not needed, unknown tasks and fields, with offsets', () => {
    const issues = checkTemplate('x ${{ inputs.rpo }} ${{ tasks.later.output }}', ctx());
    expect(issues.map((i) => [i.message, i.offset])).toEqual([
      ['unknown input "rpo"', 13],
      ['reads tasks.later, but "later" is not in needs', 30],
    ]);
    expect(issues[0]!.hint).toBe('did you mean "repo"?');
    expect(messages('${{ tasks.plna.output }}')).toEqual(['unknown task "plna"']);
    expect(messages('${{ tasks.plan.outputs }}')).toEqual(['tasks.plan has only .output and .summary']);
    expect(messages('${{ tasks.apply.output }}')).toEqual(['a task cannot read its own output (tasks.apply)']);
  });

  it('flags item outside a fan-out, unknown names and functions, and wrong arity', () => {
    expect(messages('${{ item }}')).toEqual(['"item" is only available in tasks with for_each']);
    expect(messages('${{ input.repo }}')).toEqual(['unknown name "input"']);
    expect(checkTemplate('${{ input.repo }}', ctx())[0]!.hint).toBe('did you mean "inputs"?');
    expect(messages('${{ upper(inputs.repo) }}')).toEqual(['unknown function upper()']);
    expect(messages('${{ json(inputs.repo, 2) }}')).toEqual(['json() takes 1 argument, got 2']);
    expect(messages('${{ json }}')[0]).toBe('unknown name "json"');
  });

  it('knows the shape of outputs: text has no fields, a fan-out output is a list', () => {
    expect(messages('${{ tasks.notes.output.x }}')).toEqual(['tasks.notes.output is text, so it has no fields']);
    expect(messages('${{ tasks.each.output.result }}')).toEqual([
      'tasks.each fans out, so tasks.each.output is a list with one entry per instance',
    ]);
    expect(messages('${{ tasks.each.output[1].result }}')).toEqual([]);
  });

  it('checks references inside function arguments, operators and computed indexes', () => {
    expect(messages('${{ length(tasks.nope.output) == inputs.nope || !item }}')).toEqual([
      'unknown task "nope"',
      'unknown input "nope"',
      '"item" is only available in tasks with for_each',
    ]);
    expect(messages('${{ tasks.plan.output.list[inputs.nope] }}')).toEqual(['unknown input "nope"']);
  });

  it('lists the tasks a text reads, and the path of a whole reference', () => {
    expect(referencedTasks('${{ tasks.b.output }} and ${{ join(tasks.a.output.x, tasks.b.summary) }}')).toEqual([
      'b',
      'a',
    ]);
    expect(referencePath('${{ tasks.plan.output.items[0].x }}')).toEqual({
      root: 'tasks',
      segments: ['plan', 'output', 'items', 0, 'x'],
    });
    expect(referencePath('a ${{ tasks.plan.output }}')).toBeUndefined();
  });
});
