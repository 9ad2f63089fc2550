// Evaluating `${{ }}` expressions, and checking their references before anything runs.
//
// Names an expression can use:
//   inputs.<name>                 recipe inputs (defaults merged with --set)
//   env.<NAME>                    the run's environment (recipe env over the process env)
//   item, or the task's `as` name the current for_each item
//   tasks.<id>.output[.<path>]    a needed task's output: text, or parsed JSON for output: json;
//                                 for a fan-out task, a list with one output per instance
//   tasks.<id>.summary            a needed task's merged summary text
// Operators: == != && || ! ( ) . [ ]; literals: 'strings', "strings", numbers, true, false, null.
// && and || return one of their operands, so `inputs.x || 'default'` works as in GHA.
// A missing property yields undefined; reading a property of undefined is an error, and so is
// an undefined value spliced into text, because a silently empty prompt looks like success.
import { basename } from 'node:path';
import { type Expr, type ParsedTemplate, parseTemplate } from './expression-parser.js';
import { suggestionHint } from './suggest.js';

export interface TaskResultView {
  output?: unknown;
  summary?: string;
}

/** What expressions can see while one task instance is being prepared. */
export interface ExpressionScope {
  inputs: Readonly<Record<string, unknown>>;
  env: Readonly<Record<string, string | undefined>>;
  tasks: Readonly<Record<string, TaskResultView>>;
  /** The for_each item, when preparing a fan-out instance. */
  item?: unknown;
  /** The task's `as` name; `item` works too. */
  itemName?: string;
  /** The task board's open items when a `for_each: board` task starts (given by the coordinator). */
  board?: readonly unknown[];
  /** Further names and their values (publish templates: key, summary, diffstat ...). */
  names?: Readonly<Record<string, unknown>>;
}

interface FunctionSpec {
  min: number;
  max: number;
  call: (args: unknown[]) => unknown;
  usage: string;
}

/** The only functions expressions may call: pure, no I/O. */
export const EXPRESSION_FUNCTIONS: Record<string, FunctionSpec> = {
  join: {
    min: 1,
    max: 2,
    usage: 'join(list, separator?)',
    call: ([list, sep]) => {
      if (!Array.isArray(list)) throw new EvaluationError(`join() needs a list, got ${kindOf(list)}`);
      return list.map((v) => stringify(v)).join(sep === undefined ? ',' : stringify(sep));
    },
  },
  json: { min: 1, max: 1, usage: 'json(value)', call: ([v]) => JSON.stringify(v ?? null, null, 2) },
  length: {
    min: 1,
    max: 1,
    usage: 'length(list or text)',
    call: ([v]) => {
      if (typeof v === 'string' || Array.isArray(v)) return v.length;
      if (v && typeof v === 'object') return Object.keys(v).length;
      throw new EvaluationError(`length() needs a list, text or object, got ${kindOf(v)}`);
    },
  },
  contains: {
    min: 2,
    max: 2,
    usage: 'contains(list or text, value)',
    call: ([hay, needle]) => {
      if (typeof hay === 'string') return hay.includes(stringify(needle));
      if (Array.isArray(hay)) return hay.some((v) => looseEquals(v, needle));
      throw new EvaluationError(`contains() needs a list or text, got ${kindOf(hay)}`);
    },
  },
  basename: {
    min: 1,
    max: 1,
    usage: 'basename(path)',
    call: ([p]) => {
      if (typeof p !== 'string') throw new EvaluationError(`basename() needs text, got ${kindOf(p)}`);
      return basename(p);
    },
  },
};

/** A runtime evaluation failure (a missing output, a wrong type); the message names the expression. */
export class EvaluationError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'EvaluationError';
  }
}

function kindOf(v: unknown): string {
  if (v === null) return 'null';
  if (v === undefined) return 'undefined';
  if (Array.isArray(v)) return 'a list';
  return typeof v === 'object' ? 'an object' : `a ${typeof v}`;
}

/** How a value is spliced into text: strings as is, structures as compact JSON. */
export function stringify(v: unknown): string {
  if (typeof v === 'string') return v;
  if (v === null || v === undefined) return '';
  if (typeof v === 'object') return JSON.stringify(v);
  return String(v);
}

function looseEquals(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if ((typeof a === 'number' && typeof b === 'string') || (typeof a === 'string' && typeof b === 'number'))
    return String(a) === String(b);
  if (a && b && typeof a === 'object' && typeof b === 'object') return JSON.stringify(a) === JSON.stringify(b);
  return false;
}

/** Source-like text of a reference chain, for error messages: tasks.plan.output.items[0]. */
export function exprText(e: Expr): string {
  switch (e.kind) {
    case 'name':
      return e.name;
    case 'member':
      return `${exprText(e.object)}.${e.property}`;
    case 'index':
      return `${exprText(e.object)}[${exprText(e.index)}]`;
    case 'literal':
      return typeof e.value === 'string' ? `'${e.value}'` : String(e.value);
    case 'call':
      return `${e.callee}(${e.args.map(exprText).join(', ')})`;
    case 'not':
      return `!${exprText(e.operand)}`;
    case 'binary':
      return `${exprText(e.left)} ${e.op} ${exprText(e.right)}`;
  }
}

function lookupRoot(name: string, scope: ExpressionScope): unknown {
  if (name === 'inputs') return scope.inputs;
  if (name === 'env') return scope.env;
  if (name === 'tasks') return scope.tasks;
  if (scope.names && Object.hasOwn(scope.names, name)) return scope.names[name];
  if (name === 'item' || (scope.itemName !== undefined && name === scope.itemName)) {
    if (!('item' in scope)) throw new EvaluationError(`"${name}" is only available in tasks with for_each`);
    return scope.item;
  }
  throw new EvaluationError(`unknown name "${name}"`);
}

function readProperty(object: unknown, key: string | number, e: Expr & { object: Expr }): unknown {
  if (object === null || object === undefined)
    throw new EvaluationError(`cannot read ${JSON.stringify(key)} of ${exprText(e.object)}: it is ${kindOf(object)}`);
  if (Array.isArray(object)) {
    if (typeof key === 'number') return Number.isInteger(key) ? object[key < 0 ? object.length + key : key] : undefined;
    if (key === 'length') return object.length;
    throw new EvaluationError(`${exprText(e.object)} is a list; index it with [0] rather than .${key}`);
  }
  if (typeof object === 'object')
    return Object.hasOwn(object, String(key)) ? (object as Record<string, unknown>)[String(key)] : undefined;
  if (typeof object === 'string' && key === 'length') return object.length;
  throw new EvaluationError(`cannot read ${JSON.stringify(key)} of ${exprText(e.object)}: it is ${kindOf(object)}`);
}

export function evaluateExpression(e: Expr, scope: ExpressionScope): unknown {
  switch (e.kind) {
    case 'literal':
      return e.value;
    case 'name':
      return lookupRoot(e.name, scope);
    case 'member':
      return readProperty(evaluateExpression(e.object, scope), e.property, e);
    case 'index': {
      const object = evaluateExpression(e.object, scope);
      const index = evaluateExpression(e.index, scope);
      if (typeof index !== 'string' && typeof index !== 'number')
        throw new EvaluationError(`index ${exprText(e.index)} must be a number or text, got ${kindOf(index)}`);
      return readProperty(object, index, e);
    }
    case 'call': {
      const fn = EXPRESSION_FUNCTIONS[e.callee];
      if (!fn) throw new EvaluationError(`unknown function ${e.callee}()`);
      return fn.call(e.args.map((a) => evaluateExpression(a, scope)));
    }
    case 'not':
      return !evaluateExpression(e.operand, scope);
    case 'binary': {
      const left = evaluateExpression(e.left, scope);
      if (e.op === '&&') return left ? evaluateExpression(e.right, scope) : left;
      if (e.op === '||') return left ? left : evaluateExpression(e.right, scope);
      const right = evaluateExpression(e.right, scope);
      return e.op === '==' ? looseEquals(left, right) : !looseEquals(left, right);
    }
  }
}

export type RenderResult = { ok: true; value: unknown } | { ok: false; error: string };

/** Evaluates a parsed template: a whole expression keeps its type, mixed text becomes a string. */
export function evaluateTemplate(template: ParsedTemplate, scope: ExpressionScope): unknown {
  if (template.whole) {
    const part = template.parts.find((p) => p.kind === 'expr');
    if (part?.kind === 'expr') return evaluateExpression(part.expr, scope);
  }
  let out = '';
  for (const part of template.parts) {
    if (part.kind === 'text') out += part.text;
    else {
      const v = evaluateExpression(part.expr, scope);
      if (v === undefined)
        throw new EvaluationError(`\${{ ${part.source} }} is undefined; use ${part.source} || '' if it may be missing`);
      out += stringify(v);
    }
  }
  return out;
}

/** Renders text with expressions; failures come back as data with the expression named. */
export function renderTemplate(text: string, scope: ExpressionScope): RenderResult {
  const parsed = parseTemplate(text);
  if (!parsed.ok) return { ok: false, error: parsed.error.message };
  try {
    return { ok: true, value: evaluateTemplate(parsed.value, scope) };
  } catch (e) {
    if (e instanceof EvaluationError) return { ok: false, error: e.message };
    throw e;
  }
}

/** Renders text that must end up as a string (prompts, commands, paths). */
export function renderText(text: string, scope: ExpressionScope): RenderResult {
  const r = renderTemplate(text, scope);
  return r.ok ? { ok: true, value: stringify(r.value) } : r;
}

// ---- load-time reference checking --------------------------------------------------------------

export interface TaskRefInfo {
  output: 'text' | 'json';
  fansOut: boolean;
}

/** What a field may reference, computed per task by the semantic checks. */
export interface ReferenceContext {
  inputs: readonly string[];
  /** Every task of the recipe. */
  tasks: ReadonlyMap<string, TaskRefInfo>;
  /** Tasks this field may read: the transitive closure of its task's needs. */
  reachable: ReadonlySet<string>;
  /** Names bound to the item (item and the `as` name), or undefined outside a fan-out. */
  itemNames?: readonly string[];
  /** The task the field belongs to, for messages. */
  taskId?: string;
  /**
   * Set for fields evaluated before any task runs (run-level env, globs, for_each itself): any
   * use of tasks.* or the item is reported with this explanation.
   */
  staticOnly?: string;
  /** Why the item is unavailable, when the default explanation (no for_each) is wrong. */
  itemUnavailable?: string;
  /** Further names the field may use (`attempt` in a task with attempts:). */
  names?: readonly string[];
}

export interface ReferenceIssue {
  message: string;
  hint?: string;
  /** Offset in the template text. */
  offset: number;
  code: 'expression_syntax' | 'expression_reference';
}

type Segment = { key: string | number | undefined; pos: number };

/** Flattens a.b[0].c into its root name and segments; undefined if the chain starts elsewhere. */
function chainOf(e: Expr): { root: Extract<Expr, { kind: 'name' }>; segments: Segment[] } | undefined {
  const segments: Segment[] = [];
  let cur: Expr = e;
  for (;;) {
    if (cur.kind === 'member') {
      segments.unshift({ key: cur.property, pos: cur.pos });
      cur = cur.object;
    } else if (cur.kind === 'index') {
      const idx = cur.index;
      segments.unshift({
        key:
          idx.kind === 'literal' && (typeof idx.value === 'string' || typeof idx.value === 'number')
            ? idx.value
            : undefined,
        pos: idx.pos,
      });
      cur = cur.object;
    } else if (cur.kind === 'name') {
      return { root: cur, segments };
    } else {
      return undefined;
    }
  }
}

function checkChain(e: Expr, ctx: ReferenceContext, issues: ReferenceIssue[]): void {
  const chain = chainOf(e);
  if (!chain) return;
  const { root, segments } = chain;
  const issue = (message: string, offset: number, hint?: string) =>
    issues.push({ message, hint, offset, code: 'expression_reference' });
  const itemNames = ctx.itemNames ?? [];
  if (root.name === 'inputs') {
    const key = segments[0]?.key;
    if (typeof key === 'string' && !ctx.inputs.includes(key)) {
      issue(
        `unknown input "${key}"`,
        segments[0]!.pos,
        ctx.inputs.length ? suggestionHint(key, ctx.inputs, 'inputs') : 'declare it under inputs:',
      );
    }
    return;
  }
  if (root.name === 'env' || ctx.names?.includes(root.name)) return;
  if (ctx.staticOnly && (root.name === 'tasks' || root.name === 'item' || itemNames.includes(root.name))) {
    issue(`${root.name} is not available here: ${ctx.staticOnly}`, root.pos, 'use inputs.* and env.* here');
    return;
  }
  if (root.name === 'item' || itemNames.includes(root.name)) {
    if (!ctx.itemNames) {
      if (ctx.itemUnavailable) issue(`"${root.name}" is not available here: ${ctx.itemUnavailable}`, root.pos);
      else
        issue(
          `"${root.name}" is only available in tasks with for_each`,
          root.pos,
          'add for_each to this task, or refer to a task output with tasks.<id>.output',
        );
    }
    return;
  }
  if (root.name === 'tasks') {
    const id = segments[0];
    if (!id || typeof id.key !== 'string') {
      if (!id) issue('name a task: tasks.<id>.output or tasks.<id>.summary', root.pos);
      return;
    }
    const info = ctx.tasks.get(id.key);
    if (!info) {
      issue(`unknown task "${id.key}"`, id.pos, suggestionHint(id.key, [...ctx.tasks.keys()], 'task ids'));
      return;
    }
    if (!ctx.reachable.has(id.key)) {
      const self = id.key === ctx.taskId;
      issue(
        self
          ? `a task cannot read its own output (tasks.${id.key})`
          : `reads tasks.${id.key}, but "${id.key}" is not in needs`,
        id.pos,
        self
          ? 'split the work into two tasks connected by needs'
          : `add ${id.key} to needs (directly or through a task it needs)`,
      );
      return;
    }
    const field = segments[1];
    if (!field || (field.key !== 'output' && field.key !== 'summary')) {
      issue(
        `tasks.${id.key} has only .output and .summary`,
        field?.pos ?? id.pos,
        field && typeof field.key === 'string' ? suggestionHint(field.key, ['output', 'summary'], 'fields') : undefined,
      );
      return;
    }
    const next = segments[2];
    if (field.key === 'summary' && next) issue(`tasks.${id.key}.summary is text and has no fields`, next.pos);
    if (field.key === 'output' && next) {
      if (info.output === 'text' && !info.fansOut) {
        issue(
          `tasks.${id.key}.output is text, so it has no fields`,
          next.pos,
          `set output: json on task "${id.key}" to read fields of its answer`,
        );
      } else if (info.fansOut && typeof next.key === 'string' && next.key !== 'length') {
        issue(
          `tasks.${id.key} fans out, so tasks.${id.key}.output is a list with one entry per instance`,
          next.pos,
          `index it (tasks.${id.key}.output[0]) or pass it whole to json() or join()`,
        );
      }
    }
    return;
  }
  const roots = ['inputs', 'env', 'tasks', ...(ctx.itemNames ? itemNames : []), ...(ctx.names ?? [])];
  const hint = EXPRESSION_FUNCTIONS[root.name]
    ? `${root.name} is a function: ${EXPRESSION_FUNCTIONS[root.name]!.usage}`
    : suggestionHint(root.name, roots, 'names');
  issue(`unknown name "${root.name}"`, root.pos, hint);
}

function walk(e: Expr, ctx: ReferenceContext, issues: ReferenceIssue[]): void {
  switch (e.kind) {
    case 'literal':
      return;
    case 'name':
      checkChain(e, ctx, issues);
      return;
    case 'member':
      if (chainOf(e)) checkChain(e, ctx, issues);
      else walk(e.object, ctx, issues);
      return;
    case 'index': {
      if (chainOf(e)) checkChain(e, ctx, issues);
      else walk(e.object, ctx, issues);
      // A computed index (items[inputs.n]) still has references of its own.
      if (e.index.kind !== 'literal') walk(e.index, ctx, issues);
      return;
    }
    case 'call': {
      const fn = EXPRESSION_FUNCTIONS[e.callee];
      if (!fn) {
        issues.push({
          code: 'expression_reference',
          message: `unknown function ${e.callee}()`,
          offset: e.pos,
          hint: suggestionHint(e.callee, Object.keys(EXPRESSION_FUNCTIONS), 'functions'),
        });
      } else if (e.args.length < fn.min || e.args.length > fn.max) {
        issues.push({
          code: 'expression_reference',
          message: `${e.callee}() takes ${fn.min === fn.max ? fn.min : `${fn.min} or ${fn.max}`} argument${fn.max === 1 ? '' : 's'}, got ${e.args.length}`,
          offset: e.pos,
          hint: `usage: ${fn.usage}`,
        });
      }
      for (const a of e.args) walk(a, ctx, issues);
      return;
    }
    case 'not':
      walk(e.operand, ctx, issues);
      return;
    case 'binary':
      walk(e.left, ctx, issues);
      walk(e.right, ctx, issues);
      return;
  }
}

/** Every syntax and reference problem in a text field, with offsets into that text. */
export function checkTemplate(text: string, ctx: ReferenceContext): ReferenceIssue[] {
  const parsed = parseTemplate(text);
  if (!parsed.ok)
    return [
      {
        code: 'expression_syntax',
        message: parsed.error.message,
        hint: parsed.error.hint,
        offset: parsed.error.offset,
      },
    ];
  const issues: ReferenceIssue[] = [];
  for (const part of parsed.value.parts) if (part.kind === 'expr') walk(part.expr, ctx, issues);
  return issues;
}

/** Ids of the tasks a text field reads (tasks.<id>...), in order of appearance. */
export function referencedTasks(text: string): string[] {
  const parsed = parseTemplate(text);
  if (!parsed.ok) return [];
  const found: string[] = [];
  const visit = (e: Expr): void => {
    const chain = e.kind === 'member' || e.kind === 'index' ? chainOf(e) : undefined;
    if (chain && chain.root.name === 'tasks' && typeof chain.segments[0]?.key === 'string') {
      if (!found.includes(chain.segments[0].key)) found.push(chain.segments[0].key);
    }
    if (e.kind === 'member') visit(e.object);
    else if (e.kind === 'index') {
      visit(e.object);
      visit(e.index);
    } else if (e.kind === 'call') e.args.forEach(visit);
    else if (e.kind === 'not') visit(e.operand);
    else if (e.kind === 'binary') {
      visit(e.left);
      visit(e.right);
    }
  };
  for (const part of parsed.value.parts) if (part.kind === 'expr') visit(part.expr);
  return found;
}

/** The reference path of a whole-string expression such as tasks.plan.output.items, as segments. */
export function referencePath(text: string): { root: string; segments: (string | number | undefined)[] } | undefined {
  const parsed = parseTemplate(text);
  if (!parsed.ok || !parsed.value.whole) return undefined;
  const part = parsed.value.parts.find((p) => p.kind === 'expr');
  if (part?.kind !== 'expr') return undefined;
  const chain = chainOf(part.expr);
  return chain ? { root: chain.root.name, segments: chain.segments.map((s) => s.key) } : undefined;
}
