// Checks of one task against the rest of the recipe: its kind (prompt, run, pair), the agents it
// names, keys that conflict, globs, fan-out keys, and every `${{ }}` reference in its templates
// (each field sees inputs, env, the tasks it transitively needs, and its item).
import { checkAttempts } from './attempts-spec.js';
import { templateGlobError } from './glob.js';
import { checkTemplate, type ReferenceContext, type TaskRefInfo } from './expressions.js';
import type { PendingProblem } from './problems.js';
import { suggestionHint } from './suggest.js';
import { transitiveNeeds } from './task-graph.js';
import { isRecord, stringOf } from '../util/unknown-value.js';

type Path = (string | number)[];
type Obj = Record<string, unknown>;

export interface TaskEntry {
  index: number;
  id: string;
  raw: Obj;
  needs: { id: string; path: Path }[];
}

/** Needs of a task as written: one id or a list. */
export function needsOf(raw: Obj): { id: string; path: Path }[] {
  const needs = raw.needs;
  if (typeof needs === 'string') return [{ id: needs, path: ['needs'] }];
  if (!Array.isArray(needs)) return [];
  return needs.flatMap((n, i) => (typeof n === 'string' ? [{ id: n, path: ['needs', i] }] : []));
}

/** Paths, under a task, whose strings are templates, and what they may see. */
type Scope = 'task' | 'task-item' | 'for_each' | 'static';

export function templateFields(raw: Obj): { path: Path; scope: Scope }[] {
  const out: { path: Path; scope: Scope }[] = [];
  const item: Scope = raw.for_each !== undefined ? 'task-item' : 'task';
  for (const key of ['prompt', 'run', 'cwd']) if (typeof raw[key] === 'string') out.push({ path: [key], scope: item });
  // An approval gate's prompt is rendered with its instance, like the prompt.
  if (isRecord(raw.approve) && typeof raw.approve.prompt === 'string')
    out.push({ path: ['approve', 'prompt'], scope: item });
  if (typeof raw.key === 'string') out.push({ path: ['key'], scope: 'task-item' });
  if (typeof raw.for_each === 'string') out.push({ path: ['for_each'], scope: 'for_each' });
  if (isRecord(raw.for_each) && typeof raw.for_each.glob === 'string')
    out.push({ path: ['for_each', 'glob'], scope: 'static' });
  if (Array.isArray(raw.writes))
    for (const [i, w] of raw.writes.entries())
      if (typeof w === 'string') out.push({ path: ['writes', i], scope: item });
  if (typeof raw.verify === 'string') out.push({ path: ['verify'], scope: item });
  if (Array.isArray(raw.verify)) {
    raw.verify.forEach((v, i) => {
      if (typeof v === 'string') out.push({ path: ['verify', i], scope: item });
      else if (isRecord(v) && typeof v.run === 'string') out.push({ path: ['verify', i, 'run'], scope: item });
    });
  }
  if (isRecord(raw.env))
    for (const k of Object.keys(raw.env))
      if (typeof raw.env[k] === 'string') out.push({ path: ['env', k], scope: item });
  return out;
}

/** What every task's checks read from the rest of the recipe. */
export interface TaskCheckContext {
  agentNames: string[];
  defaultAgent: string | undefined;
  defaults: Obj;
  inputNames: string[];
  refInfo: Map<string, TaskRefInfo>;
  /** Valid needs of every task (unknown ids and self-needs already reported). */
  graph: Map<string, string[]>;
}

export function checkTask(t: TaskEntry, ctx: TaskCheckContext, problem: (p: PendingProblem) => void): void {
  const { agentNames, defaultAgent, defaults, inputNames, refInfo, graph } = ctx;
  const r = t.raw;
  const base: Path = ['tasks', t.index];
  const who = `task "${t.id}"`;
  const isPair = r.pair !== undefined;
  if (r.prompt === undefined && r.run === undefined) {
    problem({
      code: 'task_kind',
      path: base,
      message: `${who} has neither prompt nor run`,
      hint: 'add prompt: (an agent task) or run: (a shell step)',
    });
  }
  if (r.prompt !== undefined && r.run !== undefined)
    problem({
      code: 'task_kind',
      path: [...base, 'run'],
      key: true,
      message: `${who} has both prompt and run`,
      hint: 'a task is either an agent (prompt) or a shell step (run); split it into two tasks',
    });
  if (r.run !== undefined && r.agent !== undefined)
    problem({
      code: 'task_kind',
      path: [...base, 'agent'],
      key: true,
      message: `${who} is a run: shell step and cannot have an agent`,
      hint: 'remove agent, or replace run with prompt',
    });
  if (r.run !== undefined && isPair)
    problem({
      code: 'task_kind',
      path: [...base, 'pair'],
      key: true,
      message: `${who} is a run: shell step and cannot have a pair`,
      hint: 'remove pair, or replace run with prompt',
    });
  if (isPair && r.agent !== undefined)
    problem({
      code: 'task_kind',
      path: [...base, 'agent'],
      key: true,
      message: `${who} has both agent and pair`,
      hint: 'a pair names its own agents; remove agent',
    });

  const agent = stringOf(r.agent);
  if (agent !== undefined && !agentNames.includes(agent)) {
    problem({
      code: 'unknown_agent',
      path: [...base, 'agent'],
      message: `${who} uses unknown agent "${agent}"`,
      hint: suggestionHint(agent, agentNames, 'agents'),
    });
  }
  if (isRecord(r.pair)) {
    for (const role of ['planner', 'worker'] as const) {
      const name = stringOf(r.pair[role]);
      if (name !== undefined && !agentNames.includes(name)) {
        problem({
          code: 'unknown_agent',
          path: [...base, 'pair', role],
          message: `${who} pair ${role} is unknown agent "${name}"`,
          hint: suggestionHint(name, agentNames, 'agents'),
        });
      }
    }
  }
  if (
    r.prompt !== undefined &&
    !isPair &&
    r.run === undefined &&
    agent === undefined &&
    defaultAgent === undefined &&
    agentNames.length > 1
  ) {
    problem({
      code: 'unknown_agent',
      path: base,
      message: `${who} does not say which agent runs it`,
      hint: `add agent: one of ${agentNames.join(', ')} (or set defaults.agent)`,
    });
  }

  for (const key of ['model', 'thinking'] as const) {
    if (r[key] !== undefined && (isPair || r.run !== undefined)) {
      problem({
        code: 'conflict',
        path: [...base, key],
        key: true,
        message: `${who} sets ${key}, which only an agent task can use`,
        hint: isPair ? `set ${key} on the pair's planner or worker agent` : `a run: step calls no model; remove ${key}`,
      });
    }
  }
  // merge: says where a worktree's work lands; without a worktree the agent edits the checkout itself.
  // attempts: (more than one) runs each attempt in a worktree of its own (attempts-spec.ts).
  const isolation = typeof r.attempts === 'number' && r.attempts > 1 ? 'worktree' : (r.isolation ?? defaults.isolation);
  if ((r.merge === 'branch' || r.merge === 'apply') && isolation !== 'worktree') {
    problem({
      code: 'conflict',
      path: [...base, 'merge'],
      key: true,
      message: `${who} sets merge: ${r.merge}, which needs isolation: worktree`,
      hint: 'add isolation: worktree (each instance works in a worktree of its own, and its work lands as merge says), or remove merge',
    });
  }
  // land: train lands a worktree's work in the checkout (merge: apply); elsewhere it has nothing to land.
  const land = r.land ?? defaults.land;
  const merge = r.merge ?? defaults.merge;
  if (r.land === 'train' && (isolation !== 'worktree' || (merge !== undefined && merge !== 'apply'))) {
    problem({
      code: 'conflict',
      path: [...base, 'land'],
      key: true,
      message:
        isolation !== 'worktree'
          ? `${who} sets land: train, which needs isolation: worktree`
          : `${who} sets land: train with merge: ${merge}; the train lands in the checkout (merge: apply)`,
      hint:
        isolation !== 'worktree'
          ? 'add isolation: worktree (each instance works in a worktree of its own; the train lands their work one at a time)'
          : 'use merge: apply, or remove land',
    });
  }
  if (r.max_repairs !== undefined && land === 'direct')
    problem({
      code: 'conflict',
      path: [...base, 'max_repairs'],
      key: true,
      message: `${who} sets max_repairs with land: direct, which never repairs`,
      hint: 'remove max_repairs, or use land: train',
    });
  if (r.land_order !== undefined && land === 'direct')
    problem({
      code: 'conflict',
      path: [...base, 'land_order'],
      key: true,
      message: `${who} sets land_order with land: direct, which lands each patch as it finishes`,
      hint: 'remove land_order, or use land: train',
    });
  const fansOut = r.for_each !== undefined;
  if (!fansOut) {
    for (const key of ['as', 'key', 'max_parallel', 'max_failed'] as const) {
      if (r[key] !== undefined)
        problem({
          code: 'conflict',
          path: [...base, key],
          key: true,
          message: `${who} sets ${key} but has no for_each`,
          hint: `${key} only applies to a fan-out; add for_each or remove ${key}`,
        });
    }
  }
  if (typeof r.as === 'string' && ['inputs', 'env', 'tasks'].includes(r.as)) {
    problem({
      code: 'bad_name',
      path: [...base, 'as'],
      message: `${who} cannot name its item "${r.as}"`,
      hint: 'that name is taken by expressions; pick another, e.g. repo',
    });
  }
  // Globs are compiled now so a malformed one fails validation, not the run after tokens were spent.
  const globFields: Path[] = [];
  if (isRecord(r.for_each) && typeof r.for_each.glob === 'string') globFields.push(['for_each', 'glob']);
  if (Array.isArray(r.writes))
    for (const [i, w] of r.writes.entries()) if (typeof w === 'string') globFields.push(['writes', i]);
  for (const path of globFields) {
    const pattern = path.reduce<unknown>((v, k) => (v as Record<string | number, unknown>)[k], r) as string;
    const bad = templateGlobError(pattern);
    if (bad)
      problem({
        code: 'bad_glob',
        path: [...base, ...path],
        message: `${who} ${path.join('.').replace(/\.(\d+)/, '[$1]')}: ${JSON.stringify(pattern)} is not a valid glob: ${bad}`,
        hint: 'globs: * ? [abc] [!x] [a-z] [[:alpha:]] {a,b} ** @(a|b) !(x); escape a special character with \\ to match it literally',
      });
  }
  // writes: globs are relative to the task's cwd: one that repeats the cwd (written when they were
  // relative to the recipe) would look for cwd/cwd/... and refuse every write in the task's files.
  const cwd = typeof r.cwd === 'string' ? r.cwd.replace(/\/+$/, '') : '';
  if (cwd !== '' && cwd !== '.' && Array.isArray(r.writes)) {
    r.writes.forEach((w, i) => {
      if (typeof w !== 'string' || !(w === cwd || w.startsWith(`${cwd}/`))) return;
      const fixed = w.slice(cwd.length + 1) || '**';
      problem({
        code: 'bad_glob',
        severity: 'warning',
        path: [...base, 'writes', i],
        message: `${who} writes[${i}] ${JSON.stringify(w)} starts with its cwd, but writes globs are relative to the task's cwd, so it stands for ${cwd}/${w} and refuses writes to the task's own files`,
        hint: `drop the cwd from the glob: ${JSON.stringify(fixed)}`,
      });
    });
  }
  if (Array.isArray(r.for_each) && r.for_each.length === 0)
    problem({
      code: 'bad_for_each',
      path: [...base, 'for_each'],
      message: `${who} fans out over an empty list`,
      hint: 'add items, or remove for_each',
    });
  if (r.output === 'text' && r.output_schema !== undefined) {
    problem({
      code: 'conflict',
      path: [...base, 'output_schema'],
      key: true,
      message: `${who} has output_schema but output: text`,
      hint: 'set output: json (or remove output_schema)',
    });
  }
  if (r.verify_retries !== undefined && r.verify === undefined && defaults.verify === undefined) {
    problem({
      code: 'conflict',
      path: [...base, 'verify_retries'],
      key: true,
      message: `${who} sets verify_retries but has no verify`,
      hint: 'add verify: [<shell command>]',
    });
  }
  if ((r.context ?? defaults.context) === 'summaries' && t.needs.length === 0 && r.context !== undefined) {
    problem({
      code: 'conflict',
      path: [...base, 'context'],
      message: `${who} uses context: summaries but needs no task`,
      hint: 'add needs, or use context: fresh',
    });
  }

  checkAttempts(r, base, who, problem);

  // Expressions: each field sees inputs, env, the tasks it (transitively) needs, and the item.
  const reachable = transitiveNeeds(graph, t.id);
  const itemNames = ['item', ...(typeof r.as === 'string' ? [r.as] : [])];
  for (const field of templateFields(r)) {
    const text = field.path.reduce<unknown>((v, k) => (v as Record<string | number, unknown>)[k], r) as string;
    const refCtx: ReferenceContext = {
      inputs: inputNames,
      tasks: refInfo,
      reachable: field.scope === 'static' ? new Set() : reachable,
      itemNames: field.scope === 'task-item' && fansOut ? itemNames : undefined,
      taskId: t.id,
    };
    // `${{ attempt }}`: the number of the attempt, in every field rendered per instance.
    if (
      typeof r.attempts === 'number' &&
      field.scope !== 'static' &&
      field.scope !== 'for_each' &&
      field.path[0] !== 'key'
    )
      refCtx.names = ['attempt'];
    if (field.scope === 'static') refCtx.staticOnly = 'a glob is expanded before any task runs';
    if (field.scope === 'for_each') refCtx.itemUnavailable = 'for_each cannot use the items it produces';
    for (const issue of checkTemplate(text, refCtx)) {
      problem({
        code: issue.code,
        path: [...base, ...field.path],
        offset: issue.offset,
        message: `${who} ${field.path.join('.')}: ${issue.message}`,
        hint: issue.hint,
      });
    }
  }
}
