// The coordinator's picture of a run: one state per task and per instance, and the views built
// from it (the merged plan's input, the expression scope of later tasks, result.json). What the
// log says about an instance is its InstanceRecord (instance-record.ts), changed only by the
// fold's applyInstanceEvent; the rest here is what the live run needs besides (resolved inputs,
// where the agent works, its parsed handoff, its session files).
import { isAbsolute, join, relative, resolve } from 'node:path';
import type { LoadedRecipe, LoadedTask, ResolvedInstance } from '../recipe/index.js';
import type { ExpressionScope, TaskResultView } from '../recipe/expressions.js';
import type { StructuredSummary } from '../session/parse-summary.js';
import { renderNeedsContext, type PlanInput, type PlanInstanceStatus } from './merge-summaries.js';
import type { AttemptFailure, InstanceRecord, InstanceStatus, RunEndStatus } from './instance-record.js';
import { storedPath } from './run-paths.js';
import { attemptOf } from '../recipe/attempts-spec.js';
import {
  attemptsWork,
  notPickedAttempt,
  pickSucceeded,
  type AttemptPicks,
  type AttemptWork,
} from './attempt-pick-record.js';
import type { FailureClass, ProviderUsage, UsageSummary } from './usage-summary.js';

export type { InstanceStatus, AttemptFailure, GitState } from './instance-record.js';
/** How a run ends (run_end, result.json). */
export type RunStatus = RunEndStatus;

export interface InstanceState extends InstanceRecord {
  id: string;
  task: string;
  key?: string;
  item?: unknown;
  index: number;
  resolved?: ResolvedInstance;
  /** Where the agent works: the resolved cwd, or its place inside the worktree. */
  workCwd?: string;
  /** The handoff summary parsed (record.summary is its text). */
  handoff?: StructuredSummary;
  /** What the instance spent over its attempts, as its workers reported it (resume: its call_usage in the log). */
  usage: UsageSummary;
  readFiles: string[];
  startedAt?: number;
  sessionFiles: string[];
  /** True when this instance was finished before a resume (its result came from the log). */
  restored?: boolean;
  /**
   * Resume: the files (absolute) its earlier attempts changed (orchestrator/workspace/earlier-changes.ts).
   * The scheduler treats them like its `writes:` globs; its write scope stays its `writes:`.
   */
  earlierWrites?: string[];
}

export type TaskStatus = 'waiting' | 'active' | 'done' | 'failed' | 'skipped';

export interface TaskState {
  task: LoadedTask;
  level: number;
  status: TaskStatus;
  expanded: boolean;
  instances: InstanceState[];
  /** Why the task was skipped or failed as a whole. */
  reason?: string;
  /** `attempts:`: the pick of each instance's attempts, by instance (attempt-pick-record.ts). */
  picks?: AttemptPicks;
}

const TERMINAL: ReadonlySet<InstanceStatus> = new Set(['done', 'failed', 'cancelled', 'skipped']);
export const isTerminal = (s: InstanceStatus): boolean => TERMINAL.has(s);
/** Counts against its task like a failure (on_failure, max_failed): failed, or cancelled by a user. */
export const isFailedOrCancelled = (s: InstanceStatus): boolean => s === 'failed' || s === 'cancelled';

/**
 * A path as plan.md, result.json and the log show it: relative to the recipe folder, the run's
 * root (`../repos/a/x.ts` outside it), so a copied project folder names its own files.
 */
export function pathFromRoot(recipeDir: string, abs: string): string {
  const rel = storedPath(recipeDir, abs);
  return rel === '.' ? abs : rel;
}

/** Maps a path inside an instance's worktree back to the repository it was made from. */
export function outOfWorktree(inst: InstanceState, abs: string): string {
  const g = inst.git;
  if (!g?.worktree) return abs;
  const rel = relative(g.worktree, abs);
  return rel.startsWith('..') || isAbsolute(rel) ? abs : join(g.root, rel);
}

/** A file path from an agent's tool calls (relative to its cwd, or absolute), as displayed. */
export function agentFileToDisplay(recipeDir: string, inst: InstanceState, file: string): string {
  const abs = resolve(inst.workCwd ?? inst.resolved?.cwd ?? recipeDir, file);
  return pathFromRoot(recipeDir, outOfWorktree(inst, abs));
}

const PLAN_STATUS: Record<InstanceStatus, PlanInstanceStatus> = {
  pending: 'pending',
  queued: 'pending',
  running: 'running',
  waiting: 'running',
  retrying: 'running',
  interrupted: 'running',
  done: 'done',
  failed: 'failed',
  cancelled: 'cancelled',
  skipped: 'skipped',
};

function preview(v: unknown): string | undefined {
  if (v === undefined || v === null) return undefined;
  return typeof v === 'string' ? v : JSON.stringify(v);
}

export function planInput(recipe: LoadedRecipe, tasks: readonly TaskState[], status?: string): PlanInput {
  return {
    name: recipe.name,
    description: recipe.description,
    status,
    tasks: tasks.map((t) => ({
      id: t.task.id,
      description: t.task.description,
      needs: t.task.needs,
      instances: t.instances.map((i) => ({
        id: i.id,
        // attempts: a losing attempt is no failure of the run (its work stays as its patch).
        status:
          t.picks && isTerminal(i.status) && notPickedAttempt(t.picks, i.id) ? 'not_picked' : PLAN_STATUS[i.status],
        attempt: i.attempt,
        summary: i.handoff,
        failure: i.failure ?? (i.status === 'skipped' ? 'skipped' : undefined),
        error: errorOf(i),
        modifiedFiles: i.modifiedFiles ?? [],
        readFiles: i.readFiles,
        patchFile: i.patchFile,
        ...(i.branch ? { branch: i.branch } : {}),
        ...(i.applied ? { applied: true } : {}),
        outputPreview: preview(i.output),
      })),
    })),
  };
}

/** What `${{ tasks.<id>.output }}` and `.summary` mean: one output, or a list for a fan-out. */
export function expressionScope(
  recipe: LoadedRecipe,
  tasks: ReadonlyMap<string, TaskState>,
  env: Readonly<Record<string, string | undefined>>,
): ExpressionScope {
  const views: Record<string, TaskResultView> = {};
  const all = resultView(tasks.values());
  for (const t of all) {
    if (t.status !== 'done' && t.status !== 'failed') continue;
    const done = t.instances.filter((i) => i.status === 'done').sort((a, b) => a.index - b.index);
    const view: TaskResultView = { output: t.task.forEach ? done.map((i) => i.output) : done[0]?.output };
    const summary = renderNeedsContext(planInput(recipe, all), [t.task.id]);
    if (summary) view.summary = summary;
    views[t.task.id] = view;
  }
  return { inputs: recipe.inputValues, env: { ...env, ...recipe.env }, tasks: views };
}

/**
 * The tasks as the tasks after them see them: of a task with `attempts:`, only the picked attempt
 * of each instance whose work landed (the others stay in plan.md, result.json and the run folder).
 */
export function resultView(tasks: Iterable<TaskState>): TaskState[] {
  return [...tasks].map((t) => {
    if (!t.task.attempts) return t;
    const picked = (i: InstanceState): boolean => {
      const p = t.picks?.get(attemptOf(i.id)?.group ?? '');
      return p?.picked === i.id && pickSucceeded(p);
    };
    return { ...t, instances: t.instances.filter(picked) };
  });
}

/** An instance's error as plan.md and result.json show it: a skipped one's is why it was skipped. */
function errorOf(i: InstanceState): string | undefined {
  return i.status === 'skipped' ? (i.skipReason ?? i.error) : i.error;
}

/** result.json's status of an instance (written before `queued` and `waiting` existed: they read as pending and running). */
function resultStatus(s: InstanceStatus): InstanceStatus {
  return s === 'queued' ? 'pending' : s === 'waiting' ? 'running' : s;
}

export interface ResultFile {
  version: 1;
  runId: string;
  /** The recipe file, relative to `root` (see run-paths.ts). */
  recipe: string;
  /** The run's root (the recipe's folder), relative to the run folder (see run-paths.ts). */
  root: string;
  name: string;
  status: RunStatus;
  startedAt: string;
  endedAt: string;
  durationMs: number;
  usage: UsageSummary;
  /**
   * The same spend per provider (anthropic, scripted, or a name under providers:) and per model
   * within it: every model call, counted as run.jsonl's fold counts it (run-fold.ts `providers`).
   */
  providers: ProviderUsage;
  plan: string;
  instances: {
    id: string;
    task: string;
    status: InstanceStatus;
    attempts: number;
    output?: unknown;
    usage: UsageSummary;
    cost: number;
    failure?: FailureClass;
    error?: string;
    patch?: string;
    /** merge: branch: the branch holding the instance's work. */
    branch?: string;
    /** merge: apply: its patch was applied to the checkout. */
    applied?: boolean;
    modifiedFiles: string[];
    sessions: string[];
    durationMs: number;
    /** Every failed attempt with its failure class, also when a later attempt succeeded. */
    attemptFailures?: AttemptFailure[];
  }[];
  /** Failed and cancelled instances, but attempts that lost to one that landed (they are no failure). */
  errors: { instance: string; failure: FailureClass; error: string }[];
  /**
   * Tasks with `attempts:`: per instance, the picked attempt (absent: none passed), why, whether
   * its work landed, and each attempt's work (its patch) and why it did not land.
   */
  picks?: {
    task: string;
    instance: string;
    rule: string;
    picked?: string;
    reason: string;
    landed?: boolean;
    attempts: AttemptWork[];
  }[];
}

export function resultFile(args: {
  runId: string;
  recipe: LoadedRecipe;
  status: RunStatus;
  startedAt: number;
  endedAt: number;
  usage: UsageSummary;
  providers?: ProviderUsage;
  tasks: readonly TaskState[];
  runDir: string;
}): ResultFile {
  const instances = args.tasks.flatMap((t) => t.instances);
  const byId = new Map(instances.map((i) => [i.id, i]));
  const allPicks: AttemptPicks = new Map(args.tasks.flatMap((t) => [...(t.picks ?? [])]));
  const picks = [...allPicks.values()].map((p) => ({
    task: p.task,
    instance: p.group,
    rule: p.rule,
    ...(p.picked !== undefined ? { picked: p.picked } : {}),
    reason: p.reason,
    ...(p.landed ? { landed: p.landed.ok } : {}),
    attempts: attemptsWork(p, (key) => {
      const i = byId.get(key);
      return i && { patchFile: i.patchFile, cost: i.usage.cost, status: i.status };
    }),
  }));
  return {
    version: 1,
    runId: args.runId,
    recipe: storedPath(args.recipe.dir, args.recipe.file),
    root: storedPath(args.runDir, args.recipe.dir),
    name: args.recipe.name,
    status: args.status,
    startedAt: new Date(args.startedAt).toISOString(),
    endedAt: new Date(args.endedAt).toISOString(),
    durationMs: args.endedAt - args.startedAt,
    usage: args.usage,
    providers: args.providers ?? {},
    plan: 'plan.md',
    instances: instances.map((i) => {
      const r: ResultFile['instances'][number] = {
        id: i.id,
        task: i.task,
        status: resultStatus(i.status),
        attempts: i.attempt,
        usage: i.usage,
        cost: i.usage.cost,
        modifiedFiles: i.modifiedFiles ?? [],
        sessions: i.sessionFiles.map((f) => relative(args.runDir, f)),
        durationMs: i.durationMs ?? 0,
      };
      if (i.output !== undefined) r.output = i.output;
      if (i.failure) r.failure = i.failure;
      const error = errorOf(i);
      if (error) r.error = error;
      if (i.patchFile) r.patch = i.patchFile;
      if (i.branch) r.branch = i.branch;
      if (i.applied) r.applied = true;
      if (i.attemptFailures?.length) r.attemptFailures = i.attemptFailures;
      return r;
    }),
    errors: instances
      .filter((i) => isFailedOrCancelled(i.status) && i.failure && !notPickedAttempt(allPicks, i.id))
      .map((i) => ({ instance: i.id, failure: i.failure!, error: errorOf(i) ?? '' })),
    ...(picks.length ? { picks } : {}),
  };
}
