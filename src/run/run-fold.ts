// The state of a run as every view sees it, folded from run events one at a time. The live view
// folds events as they arrive; `show` and the HTML report fold a whole run.jsonl. One fold for
// all of them means a finished run reads exactly as it looked live.
//
// Usage accounting: an attempt's spend is the sum of its call_usage events (one per model call,
// summaries included; the coordinator's own spend count), or, in a log without them, what its
// assistant messages reported. The usage on instance_done / instance_failed (the instance's
// total as the coordinator saw it) is used only for logs without call_usage events.
import { type FailureClass, type RunEvent, type UsageSummary, addUsageSummary, zeroUsage } from './run-events.js';

export type InstanceStatus = 'pending' | 'queued' | 'running' | 'waiting' | 'retrying' | 'done' | 'failed' | 'cancelled' | 'skipped';
export type AttemptOutcome = 'running' | 'done' | 'failed' | 'retry' | 'interrupted';

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

export interface InstanceState {
  task: string;
  key: string;
  /** "task/key", or just the key when it already names the task. */
  label: string;
  parent?: string;
  status: InstanceStatus;
  attempts: AttemptRecord[];
  /** Tools running now, by call id (parallel calls show as "+N"). */
  runningTools: Map<string, string>;
  /** Total over all attempts, from instance_done / instance_failed. */
  finalUsage?: UsageSummary;
  /** What the instance is doing besides a tool: responding, waiting for a permit, compacting... */
  activity?: string;
  toolCalls: number;
  output?: unknown;
  text?: string;
  summary?: string;
  modifiedFiles?: string[];
  patchFile?: string;
  /** merge: branch / apply: where the work of its worktree landed. */
  branch?: string;
  applied?: boolean;
  failure?: FailureClass;
  error?: string;
  skipReason?: string;
  durationMs?: number;
  sessionFile?: string;
  cwd?: string;
  /** Distributed runs: the worker processes its agents ran on, in the order they took them. */
  workers?: string[];
  messages: { ts: number; from: string; to: string; text: string }[];
  verify: { ts: number; command: string; ok: boolean; output: string }[];
  firstTs: number;
  lastTs: number;
}

export interface TaskState {
  task: string;
  needs: string[];
  keys: string[];
  /** for_each over a previous task's output: its keys are known only once expanded. */
  dynamic: boolean;
  expanded: boolean;
}

/**
 * A user's action on the live run (run view, `watch`, `orchestrate cancel` / `steer`), as its
 * `control` event recorded it: who did what, and whether the coordinator accepted it.
 */
export interface ControlRecord {
  ts: number;
  action: string;
  /** The instance acted on (its key or label); absent for run-wide actions. */
  instance?: string;
  by: string;
  text?: string;
  ok: boolean;
  message?: string;
}

export type RunStatus = 'running' | 'succeeded' | 'failed' | 'interrupted' | 'budget_exhausted';

export interface RunState {
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
    tasks: new Map(),
    instances: new Map(),
    controls: [],
    eventCount: 0,
  };
}

export function instanceLabel(task: string, key: string): string {
  return key === task || key.startsWith(`${task}/`) || key.startsWith(`${task}[`) || key.startsWith(`${task}.`) ? key : `${task}/${key}`;
}

const idOf = (task: string, key: string) => `${task}\u0000${key}`;

export function getInstance(state: RunState, task: string, key: string): InstanceState | undefined {
  return state.instances.get(idOf(task, key));
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
      attempts: [],
      runningTools: new Map(),
      toolCalls: 0,
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

function membersOf(state: RunState, inst: InstanceState): InstanceState[] {
  const prefix = `${inst.key}@`;
  return [...state.instances.values()].filter((m) => m.task === inst.task && m.key.startsWith(prefix));
}

/** Run total: pair members are left out, their spend is already in their pair's total. */
export function runUsage(state: RunState): UsageSummary {
  let sum = zeroUsage();
  for (const inst of state.instances.values()) if (!pairOf(state, inst)) sum = addUsageSummary(sum, instanceUsage(inst));
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
  running: number;
  queued: number;
  /** Tasks whose instances are not known yet (dynamic for_each not expanded). */
  unexpandedTasks: number;
}

export function countStatuses(state: RunState): StatusCounts {
  const c: StatusCounts = { total: 0, done: 0, failed: 0, cancelled: 0, skipped: 0, running: 0, queued: 0, unexpandedTasks: 0 };
  for (const inst of state.instances.values()) {
    if (pairOf(state, inst)) continue; // a pair counts once, as its instance
    c.total++;
    if (inst.status === 'done') c.done++;
    else if (inst.status === 'failed') c.failed++;
    else if (inst.status === 'cancelled') c.cancelled++;
    else if (inst.status === 'skipped') c.skipped++;
    else if (inst.status === 'running' || inst.status === 'waiting' || inst.status === 'retrying') c.running++;
    else c.queued++;
  }
  for (const t of state.tasks.values()) if (t.dynamic && !t.expanded) c.unexpandedTasks++;
  return c;
}

export function isFinished(inst: InstanceState): boolean {
  return inst.status === 'done' || inst.status === 'failed' || inst.status === 'cancelled' || inst.status === 'skipped';
}

/** The control actions aimed at this instance (by key or label), oldest first. */
export function controlsOf(state: RunState, inst: InstanceState): ControlRecord[] {
  return state.controls.filter((c) => c.instance !== undefined && (c.instance === inst.key || c.instance === inst.label));
}

type ControlEvent = Extract<RunEvent, { type: 'control' }>;

/** A user's action on the run (no instance key of its own: `instance` names the target). */
export function isControlEvent(e: RunEvent): e is ControlEvent {
  return (e as { type: string }).type === 'control';
}

/** A `control` event read loosely: the log may hold it before this build knows its schema. */
function controlRecord(e: { ts: number } & Record<string, unknown>): ControlRecord {
  const str = (v: unknown) => (typeof v === 'string' ? v : undefined);
  const rec: ControlRecord = { ts: e.ts, action: str(e.action) ?? 'unknown', by: str(e.by) ?? 'unknown', ok: e.ok !== false };
  const instance = str(e.instance);
  if (instance !== undefined) rec.instance = instance;
  const text = str(e.text);
  if (text !== undefined) rec.text = text;
  const message = str(e.message) ?? str(e.error);
  if (message !== undefined) rec.message = message;
  return rec;
}

/** A loosely typed child event: the runtime's AgentSessionEvent, forwarded as-is through the log. */
type ChildEvent = { type: string } & Record<string, unknown>;

function num(v: unknown): number {
  return typeof v === 'number' && Number.isFinite(v) ? v : 0;
}

/** The usage of an assistant message as a run-level summary (cost is the message's cost.total). */
function messageUsage(message: unknown): UsageSummary | undefined {
  if (!message || typeof message !== 'object') return undefined;
  const m = message as { role?: unknown; usage?: Record<string, unknown> };
  if (m.role !== 'assistant' || !m.usage || typeof m.usage !== 'object') return undefined;
  const u = m.usage;
  const cost = u.cost && typeof u.cost === 'object' ? num((u.cost as Record<string, unknown>).total) : num(u.cost);
  return {
    input: num(u.input),
    output: num(u.output),
    cacheRead: num(u.cacheRead),
    cacheWrite: num(u.cacheWrite),
    totalTokens: num(u.totalTokens) || num(u.input) + num(u.output) + num(u.cacheRead) + num(u.cacheWrite),
    cost,
    turns: 0,
  };
}

/** A short hint of what a tool call works on: its path, command or pattern argument. */
export function toolHint(toolName: string, args: unknown): string {
  if (!args || typeof args !== 'object') return toolName;
  const a = args as Record<string, unknown>;
  for (const k of ['path', 'file_path', 'command', 'pattern', 'query', 'url', 'to']) {
    const v = a[k];
    if (typeof v === 'string' && v !== '') return `${toolName} ${v.replace(/\s+/g, ' ')}`;
  }
  return toolName;
}

function applyChildEvent(inst: InstanceState, rec: AttemptRecord, ev: ChildEvent): void {
  switch (ev.type) {
    case 'turn_start':
      inst.activity = undefined;
      break;
    case 'turn_end':
      rec.turns++;
      break;
    case 'message_start':
      // The coordinator slims an assistant message_start to {type, role}.
      if (ev.role === 'assistant' || (ev.message as { role?: unknown } | undefined)?.role === 'assistant') inst.activity = 'responding';
      break;
    case 'message_end': {
      const u = messageUsage(ev.message);
      if (u) {
        rec.messageUsage = addUsageSummary(rec.messageUsage, u);
        if (inst.activity === 'responding') inst.activity = undefined;
      }
      break;
    }
    case 'tool_execution_start': {
      const id = typeof ev.toolCallId === 'string' ? ev.toolCallId : String(inst.runningTools.size);
      inst.runningTools.set(id, toolHint(String(ev.toolName ?? 'tool'), ev.args));
      inst.activity = undefined;
      break;
    }
    case 'tool_execution_end':
      if (typeof ev.toolCallId === 'string') inst.runningTools.delete(ev.toolCallId);
      else inst.runningTools.clear();
      inst.toolCalls++;
      break;
    case 'auto_compaction_start':
    case 'compaction_start':
      inst.activity = 'compacting';
      break;
    case 'auto_compaction_end':
    case 'compaction_end':
    case 'auto_retry_end':
      inst.activity = undefined;
      break;
    case 'auto_retry_start':
      inst.activity = `model retry ${num(ev.attempt)}/${num(ev.maxAttempts)} in ${Math.round(num(ev.delayMs) / 100) / 10}s`;
      break;
    default:
      break;
  }
}

/** Folds one event into the state. */
/** A pair's end is its members' end. */
function settleMembers(state: RunState, inst: InstanceState, ts: number, status: InstanceStatus, outcome: AttemptOutcome): void {
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
    state.controls.push(controlRecord(e as unknown as { ts: number } & Record<string, unknown>));
    return;
  }
  switch (e.type) {
    case 'run_start':
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
        state.tasks.set(t.task, { task: t.task, needs: t.needs, keys: [...t.keys], dynamic: t.dynamic, expanded: !t.dynamic });
        for (const k of t.keys) ensureInstance(state, t.task, k, e.ts);
      }
      return;
    case 'run_resume':
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
    case 'run_end':
      state.status = e.status;
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
  if (!state.tasks.has(e.task)) state.tasks.set(e.task, { task: e.task, needs: [], keys: [e.key], dynamic: false, expanded: true });
  else if (!state.tasks.get(e.task)!.keys.includes(e.key)) state.tasks.get(e.task)!.keys.push(e.key);
  const rec = ensureAttempt(inst, e.attempt);

  switch (e.type) {
    case 'instance_queued':
      rec.queuedTs = e.ts;
      if (!isFinished(inst) || e.attempt > 1) inst.status = 'queued';
      return;
    case 'instance_start':
      // An earlier attempt still open was cut short (a resume restarts it).
      for (const a of inst.attempts) if (a !== rec && a.outcome === 'running' && a.startTs !== undefined) closeAttempt(a, e.ts, 'interrupted');
      rec.startTs = e.ts;
      rec.endTs = undefined;
      rec.outcome = 'running';
      inst.status = 'running';
      inst.finalUsage = undefined;
      inst.activity = undefined;
      inst.runningTools.clear();
      inst.failure = undefined;
      inst.error = undefined;
      if (e.sessionFile) inst.sessionFile = e.sessionFile;
      if (e.cwd) inst.cwd = e.cwd;
      if (e.worker) addWorker(inst, e.worker);
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
      return;
    case 'call_usage':
      rec.callUsage = addUsageSummary(rec.callUsage ?? zeroUsage(), { ...e.usage, turns: 0 });
      return;
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
      inst.status = 'retrying';
      inst.failure = e.failure;
      inst.error = e.error;
      inst.runningTools.clear();
      inst.activity = `retry in ${Math.round(e.delayMs / 100) / 10}s`;
      return;
    case 'instance_done':
      settleMembers(state, inst, e.ts, 'done', 'done');
      closeAttempt(rec, e.ts, 'done');
      rec.outcome = 'done';
      inst.finalUsage = e.usage;
      inst.status = 'done';
      inst.output = e.output;
      inst.text = e.text;
      inst.summary = e.summary;
      inst.modifiedFiles = e.modifiedFiles;
      inst.patchFile = e.patchFile;
      inst.branch = e.branch;
      inst.applied = e.applied;
      inst.durationMs = e.durationMs;
      inst.failure = undefined;
      inst.error = undefined;
      inst.runningTools.clear();
      inst.activity = undefined;
      return;
    case 'instance_failed':
      settleMembers(state, inst, e.ts, e.final ? (String(e.failure) === 'cancelled' ? 'cancelled' : 'failed') : 'retrying', e.final ? 'failed' : 'retry');
      closeAttempt(rec, e.ts, e.final ? 'failed' : 'retry');
      if (rec.outcome !== 'retry') rec.outcome = e.final ? 'failed' : 'retry';
      rec.failure = e.failure;
      rec.error = e.error;
      if (e.usage) inst.finalUsage = e.usage;
      // A user's cancel ends the instance as failure class 'cancelled': shown as its own status.
      inst.status = e.final ? (String(e.failure) === 'cancelled' ? 'cancelled' : 'failed') : 'retrying';
      inst.failure = e.failure;
      inst.error = e.error;
      inst.durationMs = e.durationMs;
      inst.runningTools.clear();
      inst.activity = undefined;
      return;
    case 'instance_skipped':
      inst.status = 'skipped';
      inst.skipReason = e.reason;
      // Nothing ran: drop the placeholder attempt so the timeline shows no bar.
      if (rec.startTs === undefined && rec.queuedTs === undefined) inst.attempts = inst.attempts.filter((a) => a !== rec);
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
