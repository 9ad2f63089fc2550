// The one fold of run.jsonl: the state of a run, folded from its events one at a time. Every
// reader uses it: the live view folds events as they arrive; `show`, `watch` and the HTML report
// fold a whole run.jsonl; resume folds the log to know what is finished and what it spent. An
// instance's status changes only in applyInstanceEvent (instance-record.ts), which the live
// coordinator applies to each event it records too, so a finished run reads exactly as it looked
// live and as the coordinator saw it.
//
// Usage accounting: an attempt's spend is the sum of its call_usage events (one per model call,
// summaries included; the coordinator's own spend count), or, in a log without them, what its
// assistant messages reported. The usage on instance_done / instance_failed (the instance's
// total as the coordinator saw it) is used only for logs without call_usage events.
import { type FailureClass, type RunEvent, type UsageSummary, addUsageSummary, zeroUsage } from './run-events.js';
import { addProviderCall, type ProviderUsage } from './usage-summary.js';
import { learnedWindowKey, type LearnedWindow } from '../ai/learned-windows.js';
import { pairOf, currentAttempt, isFinished, idOf, membersOf } from './run-queries.js';
import { applyChildEvent, type ChildEvent } from './agent-activity.js';
import { countsAsTurn } from './turn-count.js';
import { applyApprovalEvent, applyPublishEvent, describeApproval, type ApprovalRecord } from './approval-record.js';
import { applyBoardEvent, type Board } from './board-record.js';
import { applyPickEvent, landOnInstance, type AttemptPicks } from './attempt-pick-record.js';
import { applyFollowUpApproval, applyFollowUpEvent, type FollowUpRecord } from './follow-up-record.js';
import { applyRebaseEvent, type RebaseRecord } from './rebase-record.js';
import { applyTrainEvent, createTrainState, type TrainState, turnWaitText } from './train-record.js';
import { controlRecord, isControlEvent, type ControlRecord } from './control-record.js';
import {
  applyInstanceEvent,
  instanceOfKey,
  isLifecycleEvent,
  reopenInstance,
  type InstanceRecord,
  type InstanceStatus,
  type RunEndStatus,
} from './instance-record.js';

export * from './instance-record.js';
export type { RebaseRecord } from './rebase-record.js';
export type { FollowUpRecord } from './follow-up-record.js';
export { isControlEvent, type ControlRecord } from './control-record.js';
export { toolHint } from './agent-activity.js';
export {
  attemptUsage,
  instanceUsage,
  pairOf,
  runUsage,
  currentAttempt,
  countStatuses,
  isFinished,
  controlsOf,
  resumableInstances,
  instancesInTaskOrder,
  currentToolText,
  type StatusCounts,
} from './run-queries.js';

export type AttemptOutcome = 'running' | 'done' | 'failed' | 'retry' | 'interrupted';
type EventOf<T extends RunEvent['type']> = Extract<RunEvent, { type: T }>;

export interface WaitSpan {
  start: number;
  end?: number;
  reason: string;
  /** The permit was refused (budget, pause) rather than granted. */
  denied?: boolean;
}

export interface AttemptRecord {
  attempt: number;
  queuedTs?: number;
  startTs?: number;
  endTs?: number;
  outcome: AttemptOutcome;
  failure?: FailureClass;
  error?: string;
  /** Delay before the next attempt (instance_retry). */
  retryDelayMs?: number;
  waits: WaitSpan[];
  rateLimits: { ts: number; model: string; delayMs: number; status?: number }[];
  /** Accumulated from the child's assistant messages (message_end) while it runs. */
  messageUsage: UsageSummary;
  /** Accumulated from call_usage events; preferred when any arrived. */
  callUsage?: UsageSummary;
  turns: number;
}

function addWorker(inst: InstanceState, worker: string): void {
  inst.workers ??= [];
  if (!inst.workers.includes(worker)) inst.workers.push(worker);
}

/** Calls of one instance that went to `served` instead of `primary` (recipe `fallback:`). */
export interface FallbackTally {
  primary: string;
  served: string;
  calls: number;
  /** Of those, calls that failed on `served` too (every model of the chain failed). */
  failed: number;
  /** Why the latest of them left the models before `served`. */
  reason: string;
  lastTs: number;
}

/** An instance as the views see it: its record, plus every attempt and what it is doing now. */
export interface InstanceState extends InstanceRecord {
  task: string;
  key: string;
  /** "task/key", or just the key when it already names the task. */
  label: string;
  parent?: string;
  attempts: AttemptRecord[];
  /** Tools running now, by call id (parallel calls show as "+N"). */
  runningTools: Map<string, string>;
  /** Total over all attempts, from instance_done / instance_failed. */
  finalUsage?: UsageSummary;
  /** What the instance is doing besides a tool: responding, waiting for a permit, compacting... */
  activity?: string;
  toolCalls: number;
  /** Every call_usage of the instance and of its pair members (what resume charges to its budget). */
  spend: UsageSummary;
  sessionFile?: string;
  cwd?: string;
  /** Distributed runs: the worker processes its agents ran on, in the order they took them. */
  workers?: string[];
  messages: { ts: number; from: string; to: string; text: string }[];
  verify: { ts: number; command: string; ok: boolean; output: string }[];
  /** Calls that did not end on the agent's own model (call_fallback), one tally per model that served them. */
  fallbacks?: FallbackTally[];
  /** The agent's `warning: ` notices (an optional MCP server it goes without), each once. */
  warnings?: string[];
  firstTs: number;
  lastTs: number;
  /** Its task's approval gate (`approve:`); while `waiting` the instance's status is `waiting` too. */
  approval?: ApprovalRecord;
  /** The for_each item and rendered prompt it started with (instance_start; logs before them: absent). */
  item?: unknown;
  prompt?: string;
  /** `publish --rebase` re-runs of the instance on a newer base, in log order (failed ones too). */
  rebases?: RebaseRecord[];
  /** `publish --follow-up` rounds on its published branch, in log order (failed and killed ones too). */
  followUps?: FollowUpRecord[];
  /** When its current result was made: instance_done, or a successful rebase's end (later events leave it). */
  doneTs?: number;
}

export interface TaskState {
  task: string;
  needs: string[];
  keys: string[];
  /** for_each over a previous task's output: its keys are known only once expanded. */
  dynamic: boolean;
  expanded: boolean;
}

export type RunStatus = 'running' | RunEndStatus;

export interface RunState {
  /** The first run_start (resume reloads the recipe from it). */
  start?: EventOf<'run_start'>;
  /** Status of the last run_end, or undefined when no session wrote one (killed). */
  lastEndStatus?: RunEndStatus;
  /**
   * Command-line overrides in force at the end of the log: run_start's, replaced by each
   * run_resume that records its own (a budget raised on one resume holds on the next).
   */
  overrides?: Record<string, unknown>;
  /** Every call's usage, summed (pair members included once: their calls are theirs). */
  spend: UsageSummary;
  /** The same calls per provider and per model within it (usage-summary.ts addProviderCall). */
  providers: ProviderUsage;
  /** Context windows the run's agents learned from their servers (the smallest per model), which a resume starts from. */
  learnedWindows: LearnedWindow[];
  runId: string;
  name: string;
  recipe: string;
  startTs: number;
  lastTs: number;
  endTs?: number;
  status: RunStatus;
  resumed: boolean;
  tasks: Map<string, TaskState>;
  instances: Map<string, InstanceState>;
  budgetExhausted?: string;
  /** The run's budget in dollars as the log states it (run_start / run_resume), if any. */
  budgetUsd?: number;
  /** From run_end, when the run ended. */
  endUsage?: UsageSummary;
  durationMs?: number;
  /** Control actions taken on the run, in log order. */
  controls: ControlRecord[];
  /** The run-wide task board (board_task events), items in creation order. */
  board: Board;
  /** Publish gates (publish.approve) by task, and what the run published once one was approved (approval-record.ts). */
  publishGates: Map<string, ApprovalRecord>;
  /** Best-of-N attempts: the pick of each instance's attempts and its landing, by instance (attempt-pick-record.ts). */
  picks: AttemptPicks;
  published: { task: string; key: string; outcome: string; detail?: string }[];
  /** The merge train (`land: train`): each car's status, every step (train-record.ts). */
  train: TrainState;
  eventCount: number;
}

export function createRunState(): RunState {
  return {
    runId: '',
    name: '',
    recipe: '',
    startTs: 0,
    lastTs: 0,
    status: 'running',
    resumed: false,
    spend: zeroUsage(),
    providers: {},
    learnedWindows: [],
    tasks: new Map(),
    instances: new Map(),
    controls: [],
    board: new Map(),
    publishGates: new Map(),
    picks: new Map(),
    published: [],
    train: createTrainState(),
    eventCount: 0,
  };
}

export function instanceLabel(task: string, key: string): string {
  return key === task || key.startsWith(`${task}/`) || key.startsWith(`${task}[`) || key.startsWith(`${task}.`)
    ? key
    : `${task}/${key}`;
}

export function getInstance(state: RunState, task: string, key: string): InstanceState | undefined {
  return state.instances.get(idOf(task, key));
}

/**
 * Each task's keys as a set beside its key list (plan order): found in O(1), where a scan per event
 * made a fan-out of N O(N^2) to fold. Keyed by the list (a replaced one gets a new set); rebuilt
 * when the list grew by another path.
 */
const taskKeySets = new WeakMap<string[], Set<string>>();

function addTaskKey(task: TaskState, key: string): void {
  let set = taskKeySets.get(task.keys);
  if (!set || set.size !== task.keys.length) {
    set = new Set(task.keys);
    taskKeySets.set(task.keys, set);
  }
  if (set.has(key)) return;
  set.add(key);
  task.keys.push(key);
}

function ensureInstance(state: RunState, task: string, key: string, ts: number, parent?: string): InstanceState {
  const id = idOf(task, key);
  let inst = state.instances.get(id);
  if (!inst) {
    inst = {
      task,
      key,
      label: instanceLabel(task, key),
      status: 'pending',
      attempt: 0,
      attempts: [],
      runningTools: new Map(),
      toolCalls: 0,
      spend: zeroUsage(),
      messages: [],
      verify: [],
      firstTs: ts,
      lastTs: ts,
    };
    state.instances.set(id, inst);
  }
  if (parent !== undefined) inst.parent = parent;
  return inst;
}

function ensureAttempt(inst: InstanceState, attempt: number): AttemptRecord {
  let rec = inst.attempts.find((a) => a.attempt === attempt);
  if (!rec) {
    rec = { attempt, outcome: 'running', waits: [], rateLimits: [], messageUsage: zeroUsage(), turns: 0 };
    inst.attempts.push(rec);
    inst.attempts.sort((a, b) => a.attempt - b.attempt);
  }
  return rec;
}

function closeWaits(rec: AttemptRecord, ts: number): void {
  for (const w of rec.waits) if (w.end === undefined) w.end = ts;
}

function closeAttempt(rec: AttemptRecord, ts: number, outcome: AttemptOutcome): void {
  if (rec.endTs === undefined) rec.endTs = ts;
  if (rec.outcome === 'running') rec.outcome = outcome;
  closeWaits(rec, ts);
}

/** A pair's end is its members' end. */
function settleMembers(
  state: RunState,
  inst: InstanceState,
  ts: number,
  status: InstanceStatus,
  outcome: AttemptOutcome,
): void {
  for (const m of membersOf(state, inst)) {
    m.status = status;
    m.runningTools.clear();
    m.activity = undefined;
    const rec = currentAttempt(m);
    if (rec) closeAttempt(rec, ts, outcome);
  }
}

export function applyEvent(state: RunState, e: RunEvent): void {
  state.eventCount++;
  state.lastTs = Math.max(state.lastTs, e.ts);
  if (!state.runId) state.runId = e.runId;
  if (!state.startTs) state.startTs = e.ts;
  if (isControlEvent(e)) {
    const c = controlRecord(e as unknown as { ts: number } & Record<string, unknown>);
    state.controls.push(c);
    if (c.action === 'retry' && c.ok && c.instance !== undefined) {
      const id = instanceOfKey(c.instance);
      for (const inst of state.instances.values()) if (inst.key === id) reopenInstance(inst);
    }
    return;
  }
  switch (e.type) {
    case 'run_start':
      state.start ??= e;
      if (e.overrides && state.overrides === undefined) state.overrides = e.overrides;
      state.runId = e.runId;
      state.name = e.name;
      state.recipe = e.recipe;
      if (!e.resumed || !state.startTs) state.startTs = e.ts;
      state.resumed = state.resumed || e.resumed === true;
      state.status = 'running';
      state.endTs = undefined;
      if (e.budget?.usd !== undefined) state.budgetUsd = e.budget.usd;
      else if (typeof e.overrides?.budgetUsd === 'number') state.budgetUsd = e.overrides.budgetUsd;
      for (const t of e.plan) {
        state.tasks.set(t.task, {
          task: t.task,
          needs: t.needs,
          keys: [...t.keys],
          dynamic: t.dynamic,
          expanded: !t.dynamic,
        });
        for (const k of t.keys) ensureInstance(state, t.task, k, e.ts);
      }
      return;
    case 'run_resume':
      if (e.overrides) state.overrides = e.overrides;
      if (e.budget?.usd !== undefined) state.budgetUsd = e.budget.usd;
      // An exhausted budget belongs to the previous session; this one says again if it runs out.
      delete state.budgetExhausted;
      state.resumed = true;
      state.status = 'running';
      state.endTs = undefined;
      return;
    case 'task_expanded': {
      const t = state.tasks.get(e.task) ?? { task: e.task, needs: [], keys: [], dynamic: true, expanded: true };
      t.keys = [...e.keys];
      t.expanded = true;
      state.tasks.set(e.task, t);
      for (const k of e.keys) ensureInstance(state, e.task, k, e.ts);
      return;
    }
    case 'budget_exhausted':
      state.budgetExhausted = e.reason;
      return;
    case 'window_learned': {
      const w: LearnedWindow = { provider: e.provider, model: e.model, window: e.window };
      if (e.baseUrl !== undefined) w.baseUrl = e.baseUrl;
      const i = state.learnedWindows.findIndex((x) => learnedWindowKey(x) === learnedWindowKey(w));
      if (i < 0) state.learnedWindows.push(w);
      else if (w.window < state.learnedWindows[i]!.window) state.learnedWindows[i] = w;
      return;
    }
    case 'changeset_published':
      applyPublishEvent(state, e);
      return;
    case 'approval_requested':
    case 'approval_given': {
      if (e.gate === 'publish') return void applyPublishEvent(state, e);
      if (e.gate === 'follow_up') return void applyFollowUpApproval(state.instances, e);
      // Before any attempt: no attempt record, so timelines show no bar for the wait.
      const inst = ensureInstance(state, e.task, e.key, e.ts);
      inst.lastTs = Math.max(inst.lastTs, e.ts);
      inst.approval = applyApprovalEvent(inst.approval, e);
      if (isFinished(inst) || inst.attempts.some((a) => a.startTs !== undefined)) return;
      // A gate that waits shows as `waiting` (on a user, not a permit); once answered it is pending again.
      inst.status = inst.approval.state === 'waiting' ? 'waiting' : 'pending';
      inst.activity = inst.approval.state === 'waiting' ? describeApproval(inst.approval) : undefined;
      return;
    }
    case 'board_task':
      applyBoardEvent(state.board, e);
      return;
    case 'attempt_pick':
    case 'attempt_landed':
      applyPickEvent(state.picks, e);
      // Instances are keyed by task and key (idOf): the picked attempt's record says where its work went.
      if (e.type === 'attempt_landed') landOnInstance(getInstance(state, e.task, e.key), e);
      return;
    case 'train_step': {
      applyTrainEvent(state.train, e);
      // Finished work waiting for its turn (land_order: task) says so in its row until its turn comes.
      const inst = getInstance(state, e.task, e.key);
      if (inst) inst.activity = e.phase === 'waiting' ? turnWaitText(e.behind) : undefined;
      return;
    }
    case 'run_end':
      state.status = e.status;
      state.lastEndStatus = e.status;
      state.endTs = e.ts;
      state.endUsage = e.usage;
      state.durationMs = e.durationMs;
      for (const inst of state.instances.values()) {
        const rec = currentAttempt(inst);
        if (rec && rec.outcome === 'running' && rec.startTs !== undefined) closeAttempt(rec, e.ts, 'interrupted');
        inst.runningTools.clear();
        inst.activity = undefined;
      }
      return;
    default:
      break;
  }

  // Everything below is about one instance; key '*' marks a run-wide note (a worker thread's
  // failure), which is no instance of its own.
  if (e.key === '*') return;
  const inst = ensureInstance(state, e.task, e.key, e.ts, e.parent);
  inst.lastTs = Math.max(inst.lastTs, e.ts);
  const task = state.tasks.get(e.task);
  if (!task) state.tasks.set(e.task, { task: e.task, needs: [], keys: [e.key], dynamic: false, expanded: true });
  else addTaskKey(task, e.key);
  const rec = ensureAttempt(inst, e.attempt);
  if (isLifecycleEvent(e)) applyInstanceEvent(inst, e);

  switch (e.type) {
    case 'instance_queued':
      rec.queuedTs = e.ts;
      return;
    case 'instance_start':
      // An earlier attempt still open was cut short (a resume restarts it).
      for (const a of inst.attempts)
        if (a !== rec && a.outcome === 'running' && a.startTs !== undefined) closeAttempt(a, e.ts, 'interrupted');
      rec.startTs = e.ts;
      rec.endTs = undefined;
      rec.outcome = 'running';
      inst.finalUsage = undefined;
      inst.activity = undefined;
      inst.runningTools.clear();
      inst.failure = undefined;
      inst.error = undefined;
      if (e.sessionFile) inst.sessionFile = e.sessionFile;
      if (e.cwd) inst.cwd = e.cwd;
      if (e.worker) addWorker(inst, e.worker);
      if (e.item !== undefined) inst.item = e.item;
      if (e.prompt !== undefined) inst.prompt = e.prompt;
      return;
    case 'instance_rebase_start':
    case 'instance_rebase_end':
      applyRebaseEvent(inst, rec, e, closeAttempt);
      return;
    case 'instance_followup_start':
    case 'instance_followup_end':
    case 'instance_followup_pushed':
      applyFollowUpEvent(inst, rec, e, closeAttempt);
      return;
    case 'instance_worker':
      addWorker(inst, e.worker);
      return;
    case 'permit_wait':
      rec.waits.push({ start: e.ts, reason: e.reason });
      inst.status = 'waiting';
      inst.activity = `waiting: ${e.reason}`;
      return;
    case 'permit_grant':
      closeWaits(rec, e.ts);
      if (inst.status === 'waiting') inst.status = 'running';
      inst.activity = undefined;
      return;
    case 'permit_deny': {
      const open = rec.waits.find((w) => w.end === undefined);
      if (open) {
        open.end = e.ts;
        open.denied = true;
      } else rec.waits.push({ start: e.ts, end: e.ts, reason: e.reason, denied: true });
      inst.activity = `permit denied: ${e.reason}`;
      if (inst.status === 'waiting') inst.status = 'running';
      return;
    }
    case 'call_fallback': {
      inst.fallbacks ??= [];
      let tally = inst.fallbacks.find((f) => f.served === e.served && f.primary === e.primary);
      if (!tally) {
        tally = { primary: e.primary, served: e.served, calls: 0, failed: 0, reason: e.reason, lastTs: e.ts };
        inst.fallbacks.push(tally);
      }
      tally.calls++;
      if (e.failed) tally.failed++;
      tally.reason = e.reason;
      tally.lastTs = e.ts;
      return;
    }
    case 'rate_limited':
      rec.rateLimits.push({ ts: e.ts, model: e.model, delayMs: e.delayMs, status: e.status });
      inst.activity = `rate limited, retry in ${Math.round(e.delayMs / 100) / 10}s`;
      return;
    case 'agent_event':
      // A pair member has no instance_start of its own: its first event says it runs.
      if ((inst.status === 'pending' || inst.status === 'queued') && pairOf(state, inst)) {
        inst.status = 'running';
        rec.startTs ??= e.ts;
      }
      applyChildEvent(inst, rec, e.event as ChildEvent);
      // A pair's turns are its members' (its own key has no agent of its own), live as in the end.
      if (e.event.type === 'turn_end' && countsAsTurn(e.event.stopReason)) {
        const owner = pairOf(state, inst);
        const ownerRec = owner && currentAttempt(owner);
        if (ownerRec) ownerRec.turns++;
      }
      return;
    case 'call_usage': {
      rec.callUsage = addUsageSummary(rec.callUsage ?? zeroUsage(), { ...e.usage, turns: 0 });
      const u = { ...e.usage, turns: e.usage.turns ?? 1 };
      state.spend = addUsageSummary(state.spend, u);
      addProviderCall(state.providers, e.provider, e.model, u);
      // A pair member's calls count for its instance too (resume charges them to its budget).
      const owner = ensureInstance(state, e.task, instanceOfKey(e.key), e.ts);
      owner.spend = addUsageSummary(owner.spend, u);
      return;
    }
    case 'message':
      inst.messages.push({ ts: e.ts, from: e.from, to: e.to, text: e.text });
      return;
    case 'verify':
      inst.verify.push({ ts: e.ts, command: e.command, ok: e.ok, output: e.output });
      return;
    case 'instance_retry':
      settleMembers(state, inst, e.ts, 'retrying', 'retry');
      closeAttempt(rec, e.ts, 'retry');
      rec.outcome = 'retry';
      rec.failure = e.failure;
      rec.error = e.error;
      rec.retryDelayMs = e.delayMs;
      inst.runningTools.clear();
      inst.activity = `retry in ${Math.round(e.delayMs / 100) / 10}s`;
      return;
    case 'instance_done':
      inst.doneTs = e.ts;
      settleMembers(state, inst, e.ts, 'done', 'done');
      closeAttempt(rec, e.ts, 'done');
      rec.outcome = 'done';
      inst.finalUsage = e.usage;
      inst.runningTools.clear();
      inst.activity = undefined;
      return;
    case 'instance_failed':
      settleMembers(
        state,
        inst,
        e.ts,
        e.final ? (String(e.failure) === 'cancelled' ? 'cancelled' : 'failed') : 'retrying',
        e.final ? 'failed' : 'retry',
      );
      closeAttempt(rec, e.ts, e.final ? 'failed' : 'retry');
      if (rec.outcome !== 'retry') rec.outcome = e.final ? 'failed' : 'retry';
      rec.failure = e.failure;
      rec.error = e.error;
      if (e.usage) inst.finalUsage = e.usage;
      inst.runningTools.clear();
      inst.activity = undefined;
      return;
    case 'instance_skipped':
      // Nothing ran: drop the placeholder attempt so the timeline shows no bar.
      if (rec.startTs === undefined && rec.queuedTs === undefined)
        inst.attempts = inst.attempts.filter((a) => a !== rec);
      return;
    default:
      return;
  }
}

export function foldEvents(events: readonly RunEvent[]): RunState {
  const state = createRunState();
  for (const e of events) applyEvent(state, e);
  return state;
}
