// The task DAG of a loaded recipe: instances of static fan-outs (literal lists, globs, input
// expressions) expanded now, fan-outs over task outputs left for the coordinator, which calls
// expandTask once their sources finish, then resolveInstance to render each instance's fields.
import { isAbsolute, resolve } from 'node:path';
import { type ExpressionScope, renderTemplate, renderText, stringify } from './expressions.js';
import { attemptAgent, attemptId } from './attempts-spec.js';
import { expandGlob, globError } from './glob.js';
import { canonicalJson, instanceId, itemKey, shortHash } from './instance-key.js';
import type { LoadedRecipe, LoadedTask, VerifyStep } from './loaded-recipe.js';
import type { RecipeProblem } from './problems.js';
import { type NeedsGraph, topologicalLevels } from './task-graph.js';

/** One instance of a task before its fields are rendered. */
export interface InstanceSeed {
  /** `<task>` or `<task>.<key>`: unique in the run, safe as a file name. */
  id: string;
  taskId: string;
  key?: string;
  item?: unknown;
  /** Position of the item in the for_each list (display only; the key is the identity). */
  index: number;
  /** `attempts:`: which attempt this is (1-based), and the id of the instance it is an attempt of. */
  attempt?: { n: number; of: string };
}

export type ExpandResult = { ok: true; instances: InstanceSeed[] } | { ok: false; error: string };

/** An instance with every template rendered: what a worker is given to run. */
export interface ResolvedInstance extends InstanceSeed {
  prompt?: string;
  /** Its task's approval gate prompt (`approve.prompt`), rendered like the prompt (the item is in scope). */
  approvePrompt?: string;
  run?: string;
  /** Absolute working directory. */
  cwd: string;
  writes: string[];
  verify: VerifyStep[];
  env: Record<string, string>;
  /** The agent of this attempt (`models:` round-robin); absent: the task's. */
  agent?: string;
}

export type ResolveResult = { ok: true; instance: ResolvedInstance } | { ok: false; error: string };

function itemsOf(
  task: LoadedTask,
  scope: ExpressionScope,
): { ok: true; items: unknown[] } | { ok: false; error: string } {
  const fe = task.forEach;
  if (!fe) return { ok: true, items: [] };
  if (fe.kind === 'list') return { ok: true, items: fe.items };
  // The board's open items, given by the coordinator when the task starts (none in a dry run).
  if (fe.kind === 'board') return { ok: true, items: [...(scope.board ?? [])] };
  if (fe.kind === 'glob') {
    const pattern = renderText(fe.pattern, scope);
    if (!pattern.ok) return { ok: false, error: `for_each glob: ${pattern.error}` };
    const bad = globError(String(pattern.value));
    if (bad) return { ok: false, error: `for_each glob ${JSON.stringify(pattern.value)} is not valid: ${bad}` };
    return { ok: true, items: expandGlob(task.dir, String(pattern.value), fe.type) };
  }
  const value = renderTemplate(fe.expression, scope);
  if (!value.ok) return { ok: false, error: `for_each: ${value.error}` };
  if (!Array.isArray(value.value)) {
    const got =
      value.value === null || value.value === undefined
        ? String(value.value)
        : Array.isArray(value.value)
          ? 'a list'
          : typeof value.value === 'object'
            ? 'an object'
            : `${typeof value.value} ${JSON.stringify(value.value)}`;
    return { ok: false, error: `for_each ${fe.expression.trim()} gave ${got}, not a list` };
  }
  return { ok: true, items: value.value };
}

/**
 * The instances of a task: one for a plain task, one per item for a fan-out. `scope` must hold
 * the outputs of the tasks a dynamic for_each reads. Keys are derived from the item (or the
 * task's `key:` expression); items that slug to the same key get a hash of their content.
 */
export function expandTask(task: LoadedTask, scope: ExpressionScope): ExpandResult {
  const r = expandItems(task, scope);
  return r.ok && task.attempts ? { ok: true, instances: attemptSeeds(r.instances, task.attempts.count) } : r;
}

/** Each instance as `count` attempts: `<id>.attempt-<n>`, keys likewise (attempts-spec.ts). */
function attemptSeeds(seeds: InstanceSeed[], count: number): InstanceSeed[] {
  return seeds.flatMap((s) =>
    Array.from({ length: count }, (_, k) => ({
      ...s,
      id: attemptId(s.id, k + 1),
      key: s.key === undefined ? `attempt-${k + 1}` : attemptId(s.key, k + 1),
      attempt: { n: k + 1, of: s.id },
    })),
  );
}

function expandItems(task: LoadedTask, scope: ExpressionScope): ExpandResult {
  if (!task.forEach) return { ok: true, instances: [{ id: task.id, taskId: task.id, index: 0 }] };
  const items = itemsOf(task, scope);
  if (!items.ok) return { ok: false, error: `task "${task.id}": ${items.error}` };
  const keyed: { item: unknown; key: string; index: number }[] = [];
  for (const [index, item] of items.items.entries()) {
    let key: string;
    if (task.key !== undefined) {
      const r = renderTemplate(task.key, { ...scope, item, itemName: task.as });
      if (!r.ok) return { ok: false, error: `task "${task.id}": key for item ${index}: ${r.error}` };
      if (r.value === undefined || r.value === null || r.value === '')
        return { ok: false, error: `task "${task.id}": key for item ${index} is empty` };
      key = itemKey(typeof r.value === 'object' ? r.value : stringify(r.value));
    } else {
      key = itemKey(item);
    }
    keyed.push({ item, key, index });
  }
  const byKey = new Map<string, typeof keyed>();
  for (const k of keyed) byKey.set(k.key, [...(byKey.get(k.key) ?? []), k]);
  for (const [key, group] of byKey) {
    if (group.length < 2) continue;
    const distinct = new Set(group.map((g) => canonicalJson(g.item)));
    if (distinct.size < group.length) {
      return {
        ok: false,
        error: `task "${task.id}": for_each has ${group.length} items with the key "${key}"; items must be distinct, or set key: to an expression unique per item`,
      };
    }
    for (const g of group) g.key = `${key}-${shortHash(canonicalJson(g.item))}`;
  }
  return {
    ok: true,
    instances: keyed.map((k) => ({
      id: instanceId(task.id, k.key),
      taskId: task.id,
      key: k.key,
      item: k.item,
      index: k.index,
    })),
  };
}

/** Renders an instance's prompt, command, cwd, writes, verify and env; errors name the field. */
export function resolveInstance(task: LoadedTask, seed: InstanceSeed, scope: ExpressionScope): ResolveResult {
  const withItem: ExpressionScope = task.forEach ? { ...scope, item: seed.item, itemName: task.as } : scope;
  const s: ExpressionScope = seed.attempt
    ? { ...withItem, names: { ...withItem.names, attempt: seed.attempt.n } }
    : withItem;
  const fail = (field: string, error: string): ResolveResult => ({
    ok: false,
    error: `task "${task.id}" (${seed.id}) ${field}: ${error}`,
  });
  const text = (
    field: string,
    template: string,
  ): { ok: true; value: string } | { ok: false; result: ResolveResult } => {
    const r = renderText(template, s);
    return r.ok ? { ok: true, value: String(r.value) } : { ok: false, result: fail(field, r.error) };
  };
  const instance: ResolvedInstance = { ...seed, cwd: task.dir, writes: [], verify: [], env: {} };
  const agent = seed.attempt && task.attempts ? attemptAgent(task.attempts, seed.attempt.n) : '';
  if (agent) instance.agent = agent;
  if (task.prompt !== undefined) {
    const r = text('prompt', task.prompt);
    if (!r.ok) return r.result;
    instance.prompt = r.value;
  }
  if (task.approve !== undefined) {
    const r = text('approve.prompt', task.approve.prompt);
    if (!r.ok) return r.result;
    instance.approvePrompt = r.value;
  }
  if (task.run !== undefined) {
    const r = text('run', task.run);
    if (!r.ok) return r.result;
    instance.run = r.value;
  }
  if (task.cwd !== undefined) {
    const r = text('cwd', task.cwd);
    if (!r.ok) return r.result;
    instance.cwd = isAbsolute(r.value) ? r.value : resolve(task.dir, r.value);
  }
  for (const [i, w] of task.writes.entries()) {
    const r = text(`writes[${i}]`, w);
    if (!r.ok) return r.result;
    // An item can render a malformed glob; fail this instance, not the run, and before any call.
    const bad = globError(r.value);
    if (bad) return fail(`writes[${i}]`, `${JSON.stringify(r.value)} is not a valid glob: ${bad}`);
    instance.writes.push(r.value);
  }
  for (const [i, v] of task.verify.entries()) {
    const r = text(`verify[${i}]`, v.run);
    if (!r.ok) return r.result;
    instance.verify.push(v.name !== undefined ? { name: v.name, run: r.value } : { run: r.value });
  }
  for (const [k, v] of Object.entries(task.env)) {
    const r = text(`env.${k}`, v);
    if (!r.ok) return r.result;
    instance.env[k] = r.value;
  }
  return { ok: true, instance };
}

export interface PlanTask {
  id: string;
  kind: LoadedTask['kind'];
  /** 0 for tasks that need nothing; a task runs after every task of a lower level it needs. */
  level: number;
  needs: string[];
  /** Agents involved: the task's agent, or the pair's planner and worker. */
  agents: string[];
  fanOut: 'none' | 'static' | 'dynamic';
  /** For a dynamic fan-out: the expression, and the tasks whose output it reads. */
  dynamic?: { expression: string; sources: string[] };
  /** Expanded instances; empty for a dynamic fan-out until its sources finish. */
  instances: InstanceSeed[];
  /** `attempts:`: each instance runs this many attempts, one of which lands (picked by `pick`). */
  attempts?: { count: number; pick: string };
}

export interface PlanLevel {
  level: number;
  tasks: string[];
  /** Known instances at this level (dynamic fan-outs count as 0 here). */
  instances: number;
  /** True when some task of the level fans out over an output not known yet. */
  dynamic: boolean;
}

export interface RecipePlan {
  /** Topological order: by level, then file order. */
  tasks: PlanTask[];
  levels: PlanLevel[];
  /** Known instances in total. */
  instanceCount: number;
  warnings: string[];
}

export type PlanResult = { ok: true; plan: RecipePlan } | { ok: false; problems: RecipeProblem[] };

export interface PlanOptions {
  /** Environment visible to `${{ env.X }}` in static fan-outs (default: process.env). */
  env?: Readonly<Record<string, string | undefined>>;
  /** How the recipe file is named in problems (default: its absolute path). */
  displayFile?: string;
}

/** The scope static expressions see: inputs and env, no task outputs yet. */
export function staticScope(
  recipe: LoadedRecipe,
  env: Readonly<Record<string, string | undefined>> = process.env,
): ExpressionScope {
  return { inputs: recipe.inputValues, env: { ...env, ...recipe.env }, tasks: {} };
}

export function buildPlan(recipe: LoadedRecipe, opts: PlanOptions = {}): PlanResult {
  const graph: NeedsGraph = new Map(recipe.tasks.map((t) => [t.id, t.needs]));
  const levels = topologicalLevels(graph);
  const byId = new Map(recipe.tasks.map((t) => [t.id, t]));
  const order = new Map(recipe.tasks.map((t, i) => [t.id, i]));
  const scope = staticScope(recipe, opts.env);
  const problems: RecipeProblem[] = [];
  const warnings: string[] = [];
  const planTasks: PlanTask[] = [];
  const planLevels: PlanLevel[] = [];

  levels.forEach((ids, level) => {
    const sorted = [...ids].sort((a, b) => (order.get(a) ?? 0) - (order.get(b) ?? 0));
    const planLevel: PlanLevel = { level, tasks: sorted, instances: 0, dynamic: false };
    for (const id of sorted) {
      const task = byId.get(id)!;
      const agents = task.pair ? [task.pair.planner, task.pair.worker] : task.agent ? [task.agent] : [];
      const pt: PlanTask = {
        id,
        kind: task.kind,
        level,
        needs: task.needs,
        agents,
        fanOut: task.forEach ? 'static' : 'none',
        instances: [],
      };
      if (task.attempts) pt.attempts = { count: task.attempts.count, pick: task.attempts.pick };
      if (task.forEach?.kind === 'expression' && task.forEach.sources.length > 0) {
        pt.fanOut = 'dynamic';
        pt.dynamic = { expression: task.forEach.expression.trim(), sources: task.forEach.sources };
        planLevel.dynamic = true;
      } else if (task.forEach?.kind === 'board') {
        // Its items are the board's open ones when it starts: known only then.
        pt.fanOut = 'dynamic';
        pt.dynamic = { expression: 'board', sources: [] };
        planLevel.dynamic = true;
      } else {
        const expanded = expandTask(task, scope);
        if (expanded.ok) {
          pt.instances = expanded.instances;
          if (task.forEach && expanded.instances.length === 0)
            warnings.push(`task "${id}": for_each produced no items, so it will have no instances`);
        } else {
          const loc = task.location.forEach ?? task.location;
          problems.push({
            code: 'bad_for_each',
            file: opts.displayFile ?? recipe.file,
            line: loc.line,
            col: loc.col,
            message: expanded.error,
          });
        }
      }
      planLevel.instances += pt.instances.length;
      planTasks.push(pt);
    }
    planLevels.push(planLevel);
  });
  if (problems.length) return { ok: false, problems };
  return {
    ok: true,
    plan: {
      tasks: planTasks,
      levels: planLevels,
      instanceCount: planTasks.reduce((n, t) => n + t.instances.length, 0),
      warnings,
    },
  };
}
