// What a user's action on the live run (cancel, steer, retry, cancel_run; see run/run-control.ts)
// does, decided from the run's state alone. The coordinator logs every decision as a `control`
// event (accepted or refused, with this reply) and then carries out the decision's effect; nothing
// here changes state, so each answer can be tested without a run.
import { didYouMean } from '../../util/did-you-mean.js';
import type { ApprovalAnswer, ControlAction } from '../../run/run-control.js';
import { instanceOfKey } from '../../run/run-fold.js';
import type { InstanceState, TaskState } from '../../run/run-state.js';

/** Why nothing new starts: a failed task (on_failure: fail), the budget, an interrupt, or threads that cannot start. */
export type StopReason = 'fail-fast' | 'budget' | 'interrupted' | 'no-threads';

/** What an accepted action does; the coordinator carries it out after logging the decision. */
export type ControlEffect =
  | { kind: 'interrupt' }
  /** A running instance: its agents are asked to stop (a `run:` step's command is stopped); the attempt ends cancelled. */
  | { kind: 'cancel_running'; id: string; by: string }
  /** An instance not running (queued, or waiting to retry): it ends cancelled now. */
  | { kind: 'cancel_waiting'; id: string; by: string }
  | { kind: 'steer'; target: string; text: string }
  | { kind: 'retry'; id: string };

export type ControlDecision = { ok: true; message: string; effect: ControlEffect } | { ok: false; error: string };

/** The state a decision reads. */
export interface ControlView {
  runId: string;
  stopping: StopReason | undefined;
  instances: ReadonlyMap<string, InstanceState>;
  tasks: ReadonlyMap<string, TaskState>;
  /** Agent keys running now (the message router's: `id`, or `id@worker` / `id@planner` for pairs). */
  runningAgents: readonly string[];
  /** Who asked to cancel a running instance, if someone did. */
  cancelledBy(id: string): string | undefined;
}

/** The actions decided here; approval answers are decided by approval-gates.ts. */
type Action = Exclude<ControlAction, { action: 'peek' } | ApprovalAnswer>;

/** The answer to an action on a run that has ended (with how to go on when there is a way). */
export function endedRunError(runId: string, a: ControlAction): string {
  const next =
    a.action === 'retry'
      ? `; failed instances run again with: orchestrate resume ${runId} (a cancelled one: orchestrate resume ${runId} --retry ${a.instance})`
      : '';
  return `run ${runId} has ended${next}`;
}

export function decideControl(view: ControlView, a: Action, by: string): ControlDecision {
  if (a.action === 'cancel_run') {
    if (view.stopping === 'interrupted') return { ok: false, error: `run ${view.runId} is already being interrupted` };
    return {
      ok: true,
      message: `interrupting run ${view.runId}: agents stop with their sessions kept; continue it with: orchestrate resume ${view.runId}`,
      effect: { kind: 'interrupt' },
    };
  }
  const found = controlTarget(view, a.instance);
  if ('error' in found) return { ok: false, error: found.error };
  const { inst, t } = found;
  if (a.action === 'cancel') return decideCancel(view, t, inst, by);
  if (a.action === 'steer') return decideSteer(view, t, inst, a.instance, a.text);
  return decideRetry(view, inst);
}

/** The instance a key names (a pair member's key names its pair), or why there is none. */
export function controlTarget(
  view: ControlView,
  key: string,
): { inst: InstanceState; t: TaskState } | { error: string } {
  const inst = view.instances.get(instanceOfKey(key));
  if (inst) return { inst, t: view.tasks.get(inst.task)! };
  const waiting = view.tasks.get(key);
  if (waiting)
    return {
      error: `task ${key} has not started yet (it waits for ${waiting.task.needs.join(', ') || 'its turn'}); its instances are not known until it does`,
    };
  const known = [...view.instances.keys()];
  const near = didYouMean(key, known);
  const close = near ? [near] : known.filter((k) => k.includes(key) || key.includes(k));
  const hint = close.length
    ? `did you mean ${close
        .slice(0, 5)
        .map((k) => `"${k}"`)
        .join(', ')}?`
    : known.length
      ? `instances: ${known.slice(0, 12).join(', ')}${known.length > 12 ? ', ...' : ''}`
      : 'no instance has started yet';
  return { error: `run ${view.runId} has no instance "${key}"; ${hint}` };
}

function decideCancel(view: ControlView, t: TaskState, inst: InstanceState, by: string): ControlDecision {
  const id = inst.id;
  switch (inst.status) {
    case 'done':
    case 'failed':
    case 'cancelled':
    case 'skipped':
      return { ok: false, error: `${id} has already ended (${inst.status}); nothing to cancel` };
    case 'interrupted':
      return { ok: false, error: `${id} is stopping with the run (interrupted); nothing to cancel` };
    case 'running':
    case 'waiting': {
      const already = view.cancelledBy(id);
      if (already !== undefined) return { ok: false, error: `${id} is already being cancelled (by ${already})` };
      return {
        ok: true,
        message:
          t.task.kind === 'run'
            ? `cancelling ${id}: its command is stopped; it ends cancelled, and the run goes on`
            : `cancelling ${id}: its agent is asked to stop; it ends cancelled with its session kept, and the run goes on`,
        effect: { kind: 'cancel_running', id, by },
      };
    }
    case 'retrying':
    case 'pending':
    case 'queued':
      return {
        ok: true,
        message: `cancelled ${id} (${inst.status === 'retrying' ? 'waiting to retry' : 'not started'}); the run goes on`,
        effect: { kind: 'cancel_waiting', id, by },
      };
  }
}

function decideSteer(view: ControlView, t: TaskState, inst: InstanceState, key: string, text: string): ControlDecision {
  if (inst.status !== 'running' && inst.status !== 'waiting')
    return { ok: false, error: `${inst.id} is not running (${inst.status}); only a running agent can be steered` };
  if (t.task.kind === 'run')
    return { ok: false, error: `${inst.id} is a run: step, not an agent; it cannot be steered` };
  // A pair is steered through its worker unless a member is named.
  const target = key.includes('@') ? key : t.task.kind === 'pair' ? `${inst.id}@worker` : inst.id;
  if (!view.runningAgents.includes(target))
    return {
      ok: false,
      error: `${target} has no running agent right now (starting, or between attempts); try again in a moment`,
    };
  return {
    ok: true,
    message: `delivered to ${target}: the agent reads it after its current step`,
    effect: { kind: 'steer', target, text },
  };
}

function decideRetry(view: ControlView, inst: InstanceState): ControlDecision {
  if (inst.status !== 'failed' && inst.status !== 'cancelled')
    return { ok: false, error: `${inst.id} is ${inst.status}; only a failed or cancelled instance can be retried` };
  if (view.stopping)
    return {
      ok: false,
      error: `run ${view.runId} is stopping (${view.stopping}); nothing new starts. Once it has ended: orchestrate resume ${view.runId}`,
    };
  if (!inst.resolved)
    return {
      ok: false,
      error: `${inst.id} failed before it could start (${inst.error ?? 'unknown'}); fix the recipe, then: orchestrate resume ${view.runId}`,
    };
  return {
    ok: true,
    message: `retrying ${inst.id}: attempt ${inst.attempt + 1} continues from its session`,
    effect: { kind: 'retry', id: inst.id },
  };
}

/** `resume --retry KEY`: whether a cancelled instance of the log runs again with this resume, and the reply logged for it. */
export function decideResumeRetry(
  runId: string,
  instances: ReadonlyMap<string, InstanceState>,
  key: string,
): { ok: true; id: string; message: string } | { ok: false; error: string } {
  const inst = instances.get(instanceOfKey(key));
  if (!inst) {
    const near = didYouMean(key, [...instances.keys()]);
    return {
      ok: false,
      error: `run ${runId} has no instance "${key}" in its log${near ? `; did you mean "${near}"?` : ''}`,
    };
  }
  if (inst.status !== 'cancelled')
    return {
      ok: false,
      error:
        inst.status === 'done'
          ? `${inst.id} is done; nothing to retry`
          : `${inst.id} was not cancelled; a resume runs it again anyway`,
    };
  return { ok: true, id: inst.id, message: `${inst.id} runs again with this resume` };
}
