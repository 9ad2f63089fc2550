// What readers ask of a folded run (run-fold.ts): what an attempt, an instance or the run spent,
// status counts for headers, the pair an agent belongs to, instances in plan order, the controls
// aimed at an instance. Pure reads of RunState; nothing here changes it.
import type { AttemptRecord, ControlRecord, InstanceState, RunState } from './run-fold.js';
import { type UsageSummary, addUsageSummary, zeroUsage } from './run-events.js';
import { instanceOfKey } from './instance-record.js';
import { excusedJudge, notPickedAttempt, type AttemptLookup } from './attempt-pick-record.js';

/** An instance's id in RunState.instances: its task and key. */
export const idOf = (task: string, key: string) => `${task}\u0000${key}`;

/** What one attempt spent, as far as the log tells (turns counted from turn_end). */
export function attemptUsage(rec: AttemptRecord): UsageSummary {
  return { ...(rec.callUsage ?? rec.messageUsage), turns: rec.turns };
}

/**
 * What an instance spent over all its attempts. call_usage events are the coordinator's own
 * spend record (every call of every attempt, interrupted ones included), so they win when the
 * log has them; otherwise the total on instance_done / instance_failed; otherwise what the
 * assistant messages reported.
 */
export function instanceUsage(inst: InstanceState): UsageSummary {
  const live = inst.attempts.reduce((sum, a) => addUsageSummary(sum, attemptUsage(a)), zeroUsage());
  if (inst.attempts.some((a) => a.callUsage) || !inst.finalUsage) return live;
  return { ...inst.finalUsage, turns: live.turns || (inst.finalUsage.turns ?? 0) };
}

/**
 * The pair instance a member agent belongs to: members are keyed `<instance key>@<role>` (e.g.
 * `build@worker`) and their events arrive under their own keys, while the coordinator reports
 * start, end and the pair's total usage under the instance key.
 */
export function pairOf(state: RunState, inst: InstanceState): InstanceState | undefined {
  const at = inst.key.lastIndexOf('@');
  if (at <= 0) return undefined;
  return state.instances.get(idOf(inst.task, inst.key.slice(0, at)));
}

/** The roles of a pair's members: their keys are `<instance key>@worker` and `@planner`. */
const MEMBER_ROLES = ['worker', 'planner'] as const;

/**
 * A pair's member agents, looked up by their keys: every instance's end asks, so a scan of all
 * instances here made a fan-out of N instances O(N^2) to fold.
 */
export function membersOf(state: RunState, inst: InstanceState): InstanceState[] {
  const out: InstanceState[] = [];
  for (const role of MEMBER_ROLES) {
    const m = state.instances.get(idOf(inst.task, `${inst.key}@${role}`));
    if (m) out.push(m);
  }
  return out;
}

/** Run total: pair members are left out, their spend is already in their pair's total. */
export function runUsage(state: RunState): UsageSummary {
  let sum = zeroUsage();
  for (const inst of state.instances.values())
    if (!pairOf(state, inst)) sum = addUsageSummary(sum, instanceUsage(inst));
  return sum;
}

export function currentAttempt(inst: InstanceState): AttemptRecord | undefined {
  return inst.attempts[inst.attempts.length - 1];
}

export interface StatusCounts {
  total: number;
  done: number;
  failed: number;
  cancelled: number;
  skipped: number;
  /** attempts: attempts that ended while another attempt of their instance was picked and landed (no failure). */
  notPicked: number;
  running: number;
  queued: number;
  /** Waiting at an approval gate (not running: nothing is spent until someone answers). */
  awaitingApproval: number;
  /** Tasks whose instances are not known yet (dynamic for_each not expanded). */
  unexpandedTasks: number;
}

/** attempts: an attempt's kept patch and all it spent, from the fold, for its pick's views. */
export function attemptFacts(state: RunState): AttemptLookup {
  return (key, task) => {
    const inst = state.instances.get(idOf(task, key));
    return inst && { patchFile: inst.patchFile, cost: instanceUsage(inst).cost, status: inst.status };
  };
}

export function countStatuses(state: RunState): StatusCounts {
  const c: StatusCounts = {
    total: 0,
    done: 0,
    failed: 0,
    cancelled: 0,
    skipped: 0,
    notPicked: 0,
    running: 0,
    queued: 0,
    awaitingApproval: 0,
    unexpandedTasks: 0,
  };
  for (const inst of state.instances.values()) {
    if (pairOf(state, inst)) continue; // a pair counts once, as its instance
    if (excusedJudge(state.picks, inst)) continue; // its failure is its pick's story, told there
    c.total++;
    if (isFinished(inst) && notPickedAttempt(state.picks, inst.key)) c.notPicked++;
    else if (inst.status === 'done') c.done++;
    else if (inst.status === 'failed') c.failed++;
    else if (inst.status === 'cancelled') c.cancelled++;
    else if (inst.status === 'skipped') c.skipped++;
    else if (inst.status === 'waiting' && inst.approval?.state === 'waiting') c.awaitingApproval++;
    else if (inst.status === 'running' || inst.status === 'waiting' || inst.status === 'retrying') c.running++;
    else c.queued++;
  }
  for (const t of state.tasks.values()) if (t.dynamic && !t.expanded) c.unexpandedTasks++;
  // A publish gate (publish.approve) waiting before the run publishes counts as one awaiting approval.
  for (const g of state.publishGates.values())
    if (g.state === 'waiting' && state.endTs === undefined) c.awaitingApproval++;
  return c;
}

export function isFinished(inst: InstanceState): boolean {
  return inst.status === 'done' || inst.status === 'failed' || inst.status === 'cancelled' || inst.status === 'skipped';
}

/** The control actions aimed at this instance (by key or label), oldest first. */
export function controlsOf(state: RunState, inst: InstanceState): ControlRecord[] {
  return state.controls.filter(
    (c) => c.instance !== undefined && (c.instance === inst.key || c.instance === inst.label),
  );
}

/** The instances a resume continues or keeps: every instance but pair members (theirs is their pair's record). */
export function resumableInstances(state: RunState): InstanceState[] {
  return [...state.instances.values()].filter((i) => instanceOfKey(i.key) === i.key);
}

/** Instances grouped by task in plan (topological) order, each task's in the order they appeared. */
export function instancesInTaskOrder(state: RunState): InstanceState[] {
  const order = new Map([...state.tasks.keys()].map((t, i) => [t, i]));
  return [...state.instances.values()]
    .map((inst, i) => ({ inst, i }))
    .sort((a, b) => (order.get(a.inst.task) ?? Infinity) - (order.get(b.inst.task) ?? Infinity) || a.i - b.i)
    .map((x) => x.inst);
}

/** The tool line of a running instance: "read src/a.ts", or "bash npm test +1" for parallel calls. */
export function currentToolText(inst: InstanceState): string | undefined {
  const tools = [...inst.runningTools.values()];
  if (tools.length === 0) return undefined;
  return tools.length === 1 ? tools[0] : `${tools[0]} +${tools.length - 1}`;
}
