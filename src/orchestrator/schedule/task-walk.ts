// The DAG walk: which waiting task starts now and which is skipped (and why), expanding a task
// into its instances (fan-outs over inputs or the outputs of the tasks it needs), when a task has
// settled and how, and how the run ends. The decisions are pure functions (readyTasks,
// taskOutcome, pastMaxFailed, runEndStatus); TaskWalk carries them out over the run's tasks and
// instances, and hands each instance ready to run to the coordinator (queue).
import { expandTask, resolveInstance, type LoadedRecipe } from '../../recipe/index.js';
import { landsByTrain } from '../workspace/land-turn.js';
import { zeroUsage } from '../../run/run-events.js';
import {
  expressionScope,
  isTerminal,
  type InstanceState,
  type RunStatus,
  type TaskState,
} from '../../run/run-state.js';
import { failedEvent, skippedEvent, type FailedEvent } from './attempt-lifecycle.js';
import type { StopReason } from '../control/control-decisions.js';
import type { SchedulableInstance } from './scheduler.js';
import { writeGlobs } from '../workspace/write-scopes.js';
import { excusedAttempt, groupsSettled, taskFailures } from './attempt-groups.js';
import type { RunEventInput } from '../../run/run-events.js';

export type TaskStep = { t: TaskState; start: true } | { t: TaskState; skip: string };

const settled = (t: TaskState) => t.status === 'done' || t.status === 'failed' || t.status === 'skipped';

/** Tasks in plan order (topological level). */
export function inPlanOrder(tasks: Iterable<TaskState>): TaskState[] {
  return [...tasks].sort((a, b) => a.level - b.level);
}

/**
 * Waiting tasks whose needs have all settled: each starts, or is skipped when a need was
 * skipped, failed with on_failure: fail, or the run is stopping.
 */
export function* readyTasks(
  tasks: ReadonlyMap<string, TaskState>,
  stopping: () => StopReason | undefined,
): Generator<TaskStep> {
  // Decided one task at a time: a task started here may settle at once (all its instances done
  // before a resume) and so make the next one ready in the same walk.
  for (const t of inPlanOrder(tasks.values())) {
    if (t.status !== 'waiting') continue;
    const needs = t.task.needs.map((n) => tasks.get(n)!);
    if (!needs.every(settled)) continue;
    const blocker = needs.find((n) => n.status === 'skipped' || (n.status === 'failed' && n.task.onFailure === 'fail'));
    const stop = stopping();
    if (stop) yield { t, skip: `not started: the run is stopping (${stop})` };
    else if (blocker)
      yield { t, skip: `${blocker.task.id} ${blocker.status === 'skipped' ? 'was skipped' : 'failed'}` };
    else yield { t, start: true };
  }
}

/**
 * How many of a task's first instances have been seen ended. Every instance's end asks whether its
 * task has settled; a fan-out's instances end roughly in order, so scanning from the first each
 * time made N ends cost O(N^2). The cursor only moves on; the answer "all ended" is confirmed by
 * a full pass, so an instance reopened behind it (a retry) is never missed.
 */
const endedPrefix = new WeakMap<TaskState, number>();

function allEnded(t: TaskState): boolean {
  let i = endedPrefix.get(t) ?? 0;
  while (i < t.instances.length && isTerminal(t.instances[i]!.status)) i++;
  endedPrefix.set(t, i);
  return i >= t.instances.length && t.instances.every((inst) => isTerminal(inst.status));
}

/**
 * An active task whose instances have all ended: done, failed when more failed than max_failed
 * tolerates, or skipped when every one was skipped (e.g. rejected at its approval gate): its
 * dependants are skipped too.
 */
export function taskOutcome(t: TaskState): 'done' | 'failed' | 'skipped' | undefined {
  // A task with attempts: also every instance's pick made and its landing logged (attempt-groups.ts).
  if (t.status !== 'active' || !allEnded(t) || !groupsSettled(t)) return undefined;
  const failed = taskFailures(t);
  if (failed > (t.task.maxFailed ?? 0)) return 'failed';
  return t.instances.length > 0 && t.instances.every((i) => i.status === 'skipped') ? 'skipped' : 'done';
}

/** A fan-out past max_failed: the reason its instances that have not started are cancelled, if it is. */
export function pastMaxFailed(t: TaskState): string | undefined {
  const failed = taskFailures(t);
  if (t.task.maxFailed === undefined || failed <= t.task.maxFailed) return undefined;
  return `cancelled: ${t.task.id} has ${failed} failed instances (max_failed ${t.task.maxFailed})`;
}

/**
 * Whether overlapping `writes:` keep `t`'s instances from running at once: yes when they write in
 * the checkout, no when each works in a worktree whose work lands through the merge train (it
 * merges them), unless the task asks for `serialize: overlapping`.
 */
function sharesCheckout(t: TaskState): boolean {
  return !landsByTrain(t.task) || t.task.serialize === 'overlapping';
}

/**
 * What the scheduler knows of an instance: its write scope (on resume with the files its earlier
 * attempts changed: two instances that edited the same files wait for each other as overlapping
 * writes: do), its task's max_parallel, its level, its threads (a pair: 2).
 */
export function schedulable(t: TaskState, inst: InstanceState): SchedulableInstance {
  const writes = sharesCheckout(t)
    ? [...writeGlobs(inst.resolved?.cwd ?? t.task.dir, inst.resolved?.writes ?? []), ...(inst.earlierWrites ?? [])]
    : [];
  const s: SchedulableInstance = {
    id: inst.id,
    task: t.task.id,
    writes,
    order: t.level,
    threads: t.task.kind === 'pair' ? 2 : 1,
  };
  if (t.task.maxParallel !== undefined) s.maxParallel = t.task.maxParallel;
  return s;
}

export function allSettled(tasks: ReadonlyMap<string, TaskState>): boolean {
  return [...tasks.values()].every(settled);
}

/** How a run that stopped ends. */
export function runEndStatus(
  tasks: ReadonlyMap<string, TaskState>,
  instances: Iterable<InstanceState>,
  stopping: StopReason | undefined,
  storageError: boolean,
): RunStatus {
  if (storageError) return 'failed';
  if (stopping === 'interrupted') return 'interrupted';
  if (stopping === 'budget') return 'budget_exhausted';
  // A task fails only through its instances (an expansion problem fails one too), so the
  // instances decide: one that failed on its own fails the run; cancels by a user alone leave it
  // partial (the tasks they failed, and what their dependants skipped, follow from the cancels).
  // An attempt that failed or was cancelled while another attempt of its instance landed is no failure.
  const all = [...instances].filter((i) => !excusedAttempt(tasks.get(i.task), i));
  if (all.some((i) => i.status === 'failed')) return 'failed';
  if (all.some((i) => i.status === 'cancelled')) return 'partial';
  return [...tasks.values()].some((t) => t.status === 'failed') ? 'failed' : 'succeeded';
}

/** What the walk needs from the run. */
export interface WalkContext {
  recipe: LoadedRecipe;
  env: Readonly<Record<string, string | undefined>>;
  tasks: Map<string, TaskState>;
  instances: Map<string, InstanceState>;
  stopping(): StopReason | undefined;
  record(e: RunEventInput): void;
  /** Logs an instance's final failure (and cancels what max_failed no longer lets start). */
  fail(e: FailedEvent): void;
  /** A task's instances are known, before any of them is queued (budgets, cache warm-up). */
  expanded(t: TaskState): void;
  /** An instance ready to run. */
  queue(t: TaskState, inst: InstanceState): void;
  /** A task ended failed (on_failure decides what follows). */
  taskFailed(t: TaskState): void;
  planChanged(): void;
  /** `for_each: board`: the items task `t` fans out over now (task-board.ts); absent: none. */
  boardItems?(t: TaskState): unknown[];
  /** `attempts:`: picks what can be picked of task `t`'s attempts (attempt-picks.ts). */
  pickAttempts?(t: TaskState): void;
}

export class TaskWalk {
  constructor(private readonly ctx: WalkContext) {}

  /** Activates every waiting task whose needs have all settled; skips those a failure blocks. */
  advance(): void {
    for (const step of readyTasks(this.ctx.tasks, this.ctx.stopping)) {
      if ('skip' in step) this.skipTask(step.t, step.skip);
      else this.activate(step.t);
    }
  }

  /** Marks a task done or failed once all its instances have settled. */
  settle(t: TaskState): void {
    if (t.status === 'active') this.ctx.pickAttempts?.(t);
    const outcome = taskOutcome(t);
    if (!outcome) return;
    t.status = outcome;
    if (outcome === 'skipped') t.reason = t.instances[0]?.skipReason;
    if (outcome === 'failed') this.ctx.taskFailed(t);
    this.ctx.planChanged();
  }

  private skipTask(t: TaskState, reason: string): void {
    if (this.ctx.stopping() === 'interrupted') return;
    t.status = 'skipped';
    t.reason = reason;
    // Unexpanded fan-outs have no instances yet: one entry stands for the whole task.
    if (!t.expanded) t.instances = [this.instance(t, t.task.id, 0)];
    for (const i of t.instances) if (!isTerminal(i.status)) this.ctx.record(skippedEvent(i, reason));
    this.ctx.planChanged();
  }

  /** The instance `id` of task `t` (one restored from the log keeps its state). */
  private instance(t: TaskState, id: string, index: number, item?: unknown, key?: string): InstanceState {
    const inst: InstanceState = this.ctx.instances.get(id) ?? {
      id,
      task: t.task.id,
      index,
      status: 'pending',
      attempt: 0,
      usage: zeroUsage(),
      modifiedFiles: [],
      readFiles: [],
      durationMs: 0,
      sessionFiles: [],
    };
    inst.index = index;
    if (item !== undefined) inst.item = item;
    if (key !== undefined) inst.key = key;
    this.ctx.instances.set(id, inst);
    return inst;
  }

  private activate(t: TaskState): void {
    const { recipe } = this.ctx;
    const scope = expressionScope(recipe, this.ctx.tasks, this.ctx.env);
    if (t.task.forEach?.kind === 'board') scope.board = this.ctx.boardItems?.(t) ?? [];
    const exp = expandTask(t.task, scope);
    t.status = 'active';
    t.expanded = true;
    if (!exp.ok) {
      const inst = this.instance(t, t.task.id, 0);
      t.instances = [inst];
      this.ctx.fail(failedEvent(inst, 'error', exp.error));
      return;
    }
    t.instances = exp.instances.map((s) => this.instance(t, s.id, s.index, s.item, s.key));
    if (t.task.forEach) this.ctx.record({ type: 'task_expanded', task: t.task.id, keys: t.instances.map((i) => i.id) });
    this.ctx.expanded(t);
    for (const [n, inst] of t.instances.entries()) {
      if (inst.status === 'done' || inst.status === 'cancelled') continue;
      // A finished attempt (failed ones too) is never run again: its instance's pick reads it as it ended.
      if (t.task.attempts && inst.status === 'failed') continue;
      const r = resolveInstance(t.task, exp.instances[n]!, scope);
      if (!r.ok) {
        this.ctx.fail(failedEvent(inst, 'error', r.error));
        continue;
      }
      inst.resolved = { ...r.instance, env: { ...recipe.env, ...r.instance.env } };
      this.ctx.queue(t, inst);
    }
    this.settle(t);
  }
}
