// Coordinator side of one agent attempt on a worker thread: the MessagePort pair, the messages
// coming back (permits, usage, events, send_message, verify), the watchdogs (timeout, idle), and
// stopping (an abort message first so the session ends cleanly, the thread terminated only if
// it does not stop within the grace period). A thread that dies (throw, process.exit, out of
// memory) rejects piscina's promise; that becomes a `crashed` result, and the coordinator lives.
//
// Exact accounting: the task's result and the port's messages travel on different channels, so
// the result may arrive while usage messages are still queued on the port. The instance settles
// only once the worker's last message (`done`, sent as it closes its end) has arrived, or the port
// closed (a dead thread); a port delivers in order, so every usage message came before. As a
// second line, the worker's own total (result.usage) is compared with what arrived: a shortfall is
// charged and logged as one more call_usage, so run totals and budgets never undercount.
import { MessageChannel, type MessagePort } from 'node:worker_threads';
import type { InstanceExecutor } from './instance-executor.js';
import type { Spend } from '../schedule/budget.js';
import { ORCHESTRATOR_DEFAULTS } from '../defaults.js';
import { describeThreadFailure, type FailureReason, failureText } from '../schedule/failure-policy.js';
import type { InstanceTask } from './instance-task.js';
import type { MessageRouter } from '../control/message-router.js';
import type { PermitBroker, PermitRequest } from '../pacing/permit-broker.js';
import type { CallEstimate } from '../pacing/learned-limits.js';
import {
  parseWorkerMessage,
  WorkerResultSchema,
  type CoordinatorMessage,
  type WorkerMessage,
  type WorkerResult,
} from '../protocol.js';
import type { RunEventInput } from '../../run/run-events.js';
import type { LearnedWindow } from '../../ai/learned-windows.js';
import type { TaskBoard } from '../control/task-board.js';
import {
  addUsageSummary,
  usageGap,
  zeroUsage,
  zeroUsage as zeroTotals,
  type BudgetScope,
  type UsageSummary,
} from '../../run/usage-summary.js';
import { mcpRunPort, usesRunScopedMcp } from '../../tools/mcp/run-host-registry.js';

export interface LaunchRef {
  task: string;
  /** The agent's id: instance id, or `<instance>@worker` / `@planner` for pair members. */
  key: string;
  attempt: number;
  parent?: string;
  /** Budget scopes every model call of this agent is charged to. */
  scopes: string[];
}

export interface LaunchContext {
  /** Where the agent runs: the local thread pool (thread-pool-executor.ts) or an executor elsewhere (distributed runs; never shared threads). */
  pool: InstanceExecutor;
  /**
   * Agents may share worker threads. Piscina runs one abortable task per thread, so shared
   * tasks get no abort signal: a hard abort terminates the agent's own thread instead (its
   * co-resident agents die with it and are reported as such).
   */
  shareThreads?: boolean;
  /** Threads terminated by a hard abort, with the agent that caused it (shared by all launches). */
  terminatedThreads?: Map<number, string>;
  /** Shared threads: the agents each live thread runs (from their hello), to tell whether a crash hit several. */
  threadAgents?: Map<number, Set<string>>;
  /** Shared threads that died while running more than one agent. */
  sharedCrashes?: Set<number>;
  broker: PermitBroker;
  router: MessageRouter;
  /** The run's task board (task-board.ts); absent: board calls are refused. */
  board?: Pick<TaskBoard, 'handle'>;
  emit(e: RunEventInput): void;
  /** Spend to reserve for the next call of this agent. */
  estimate(ref: LaunchRef, model: string, call?: CallEstimate): Spend;
  /** Where this agent's calls queue while a provider limit binds (higher first; call-priority.ts). */
  priority?(ref: LaunchRef): number;
  /** Real usage of one call arrived. */
  onUsage(ref: LaunchRef, model: string, tokens: number): void;
  /** Windows the run's agents learned so far, for this agent's session to start with. */
  learnedWindows?(): LearnedWindow[];
  /** Tracing on: the traceparent this agent runs under (InstanceTask.traceparent). */
  traceparent?(): string | undefined;
  /** This agent's server stated a model's window (an overflow): the run records it and tells its other agents. */
  onWindowLearned?(ref: LaunchRef, w: LearnedWindow): void;
  /** A permit was refused because a budget is spent; `scope`: whose (the run's ends the run). */
  onBudgetDenied(ref: LaunchRef, reason: string, scope: BudgetScope): void;
  /** A worker thread runs this agent (its first message arrived): the worker module loads. `worker`: the worker process of a distributed run. */
  onStarted?(ref: LaunchRef, worker?: string): void;
}

export interface LaunchLimits {
  timeoutMs?: number;
  idleTimeoutMs?: number;
}

/** Delay before a waiting permit request is logged as permit_wait (grants are usually instant). */
const PERMIT_WAIT_LOG_MS = 20;
/** Why a finished agent's waiting permit requests end: made once (abort() makes a DOMException each, ~20 µs; #41). */
const AGENT_FINISHED = new Error('the agent finished');
/**
 * Longest wait for the worker's `done` (or the port's close) once the task has returned. Both
 * come with the result in every known path; this only keeps a worker module that never sends
 * them from hanging the run (result.usage still reconciles the totals then).
 */
const PORT_DRAIN_LIMIT_MS = 10_000;

/**
 * How long the worker keeps streaming the text being written after the last peek: a viewer peeks
 * every ~200 ms while the conversation is open, so this only ends it once nobody looks.
 */
export const STREAM_LINGER_MS = 3_000;

export class AgentLaunch {
  readonly result: Promise<WorkerResult>;
  private readonly port: MessagePort;
  private readonly hardAbort = new AbortController();
  /** Cancels this agent's permit requests still waiting in the broker. */
  private readonly permitAbort = new AbortController();
  private readonly slots = new Set<number>();
  private pendingPermits = 0;
  private abortReason: FailureReason | undefined;
  private lastActivity = Date.now();
  private wrapUpSentAt: number | undefined;
  /** False until the worker first reports: starting a thread is not the agent being idle. */
  private alive = false;
  private readonly timers: NodeJS.Timeout[] = [];
  private finished = false;
  /** The worker thread running this agent (reported by the worker's first message). */
  private threadId: number | undefined;
  /** Usage of every call that arrived over the port (what the run totals and budgets were charged). */
  private received: UsageSummary = zeroTotals();
  /** The model of this agent's latest permit request (a reconciled shortfall is logged under it). */
  private lastModel = '';
  private lastProvider: string | undefined;
  /** Resolves on the worker's `done` (its last message) or the port's close: no message can arrive after it. */
  private readonly portDone: Promise<void>;
  private markPortDone: () => void = () => {};
  /** The task failed as a thread failure (crash, terminate, refused before it ran), not as a result. */
  private rejected = false;
  /** Settles the launch when its worker never started (see failUnstarted). */
  private settleUnstarted: (r: WorkerResult) => void = () => {};
  /** The text the agent is writing now (while streaming is on; '' when not writing). Memory only. */
  private partialText = '';
  private partialAt = 0;
  /** Set while streaming is on: turns it off once nobody peeked for STREAM_LINGER_MS. */
  private streamOff: NodeJS.Timeout | undefined;

  constructor(
    private readonly ctx: LaunchContext,
    readonly ref: LaunchRef,
    task: Omit<InstanceTask, 'port'>,
    limits: LaunchLimits,
  ) {
    const { port1, port2 } = new MessageChannel();
    this.port = port1;
    port1.on('message', (raw: unknown) => this.receive(raw));
    this.portDone = new Promise((resolve) => {
      this.markPortDone = resolve;
      port1.once('close', () => resolve());
    });
    ctx.router.register({ id: ref.key, task: ref.task, post: (m) => this.post(m) });
    if (limits.timeoutMs) {
      const ms = limits.timeoutMs;
      this.timers.push(
        setTimeout(
          () =>
            this.abort({
              failure: 'timeout',
              detail: `the instance ran longer than its timeout (${Math.round(ms / 1000)}s)`,
            }),
          ms,
        ),
      );
    }
    if (limits.idleTimeoutMs) this.watchIdle(limits.idleTimeoutMs);
    // scope: run MCP servers live in this thread, one per run; threads reach them over a port of their own.
    const local = !('description' in ctx.pool);
    const mcpPort = local && usesRunScopedMcp(task.agent) ? mcpRunPort(task.runId) : undefined;
    const windows = ctx.learnedWindows?.() ?? [];
    const traceparent = ctx.traceparent?.();
    const full: InstanceTask = {
      ...task,
      port: port2,
      ...(mcpPort ? { mcpPort } : {}),
      ...(windows.length ? { learnedWindows: windows } : {}),
      ...(traceparent ? { traceparent } : {}),
    };
    const transferList: MessagePort[] = [port2];
    if (task.peerPort) transferList.push(task.peerPort);
    if (mcpPort) transferList.push(mcpPort);
    if (ctx.shareThreads) this.hardAbort.signal.addEventListener('abort', () => this.terminateThread(), { once: true });
    const unstarted = new Promise<WorkerResult>((resolve) => (this.settleUnstarted = resolve));
    const ran = this.ctx.pool
      .run(full, ctx.shareThreads ? { transferList } : { transferList, signal: this.hardAbort.signal })
      .then(
        (raw: unknown): WorkerResult => {
          const parsed = WorkerResultSchema.safeParse(raw);
          if (parsed.success) return parsed.data;
          return {
            ok: false as const,
            failure: 'crashed',
            error: `the worker returned a malformed result: ${parsed.error.issues[0]?.message ?? 'invalid'}`,
            usage: zeroUsage(),
          };
        },
        (err: unknown): WorkerResult => {
          this.rejected = true;
          if (this.abortReason) return { ok: false, ...this.abortOutcome(this.abortReason), usage: zeroUsage() };
          const culprit = this.threadId !== undefined ? ctx.terminatedThreads?.get(this.threadId) : undefined;
          if (culprit !== undefined && culprit !== ref.key) {
            return {
              ok: false,
              failure: 'crashed',
              collateral: true,
              error: `its worker thread was stopped because ${culprit}, which shared it, did not stop when aborted`,
              usage: zeroUsage(),
            };
          }
          const d = describeThreadFailure(err);
          if (this.crashedShared()) {
            return {
              ok: false,
              failure: d.failure,
              sharedCrash: true,
              error: `${d.error} (its worker thread also ran other agents, so which one caused it is unknown: retried on a thread of its own, not counted as a retry)`,
              usage: zeroUsage(),
            };
          }
          return { ok: false, failure: d.failure, error: d.error, usage: zeroUsage() };
        },
      );
    this.result = Promise.race([ran, unstarted]).then(async (r) => {
      await this.drain(port2);
      this.reconcile(r);
      await this.cleanup();
      // A thread that was stopped by our abort reports why, whatever the agent made of it.
      if (!r.ok && this.abortReason && (r.failure === 'aborted' || r.failure === 'error'))
        return { ...r, ...this.abortOutcome(this.abortReason) };
      return r;
    });
  }

  /**
   * Fails the launch as `crashed` when no worker thread ever took it (no first message): the
   * coordinator calls this when worker threads cannot start at all (a module that fails to
   * load), where piscina would keep the task waiting forever. False when the agent runs.
   */
  failUnstarted(error: string): boolean {
    if (this.threadId !== undefined || this.finished) return false;
    this.rejected = true;
    this.settleUnstarted({ ok: false, failure: 'crashed', error, usage: zeroUsage() });
    return true;
  }

  /**
   * A viewer looks at this agent: streaming goes on (and stays on while peeks keep coming); the
   * text being written now, '' when none, and when it last changed.
   */
  peek(): { text: string; at: number } {
    if (!this.finished) {
      if (this.streamOff) clearTimeout(this.streamOff);
      else this.post({ type: 'stream', on: true });
      this.streamOff = setTimeout(() => this.stopStreaming(), STREAM_LINGER_MS);
      this.streamOff.unref();
    }
    return { text: this.partialText, at: this.partialAt };
  }

  private stopStreaming(): void {
    if (this.streamOff) clearTimeout(this.streamOff);
    this.streamOff = undefined;
    this.partialText = '';
    this.post({ type: 'stream', on: false });
  }

  /** Another agent of the run learned a model's window (learned-window-book.ts). */
  shareWindow(learned: LearnedWindow): void {
    this.post({ type: 'window_learned', learned });
  }

  private post(m: CoordinatorMessage): void {
    if (this.finished) return;
    try {
      this.port.postMessage(m);
    } catch {
      // the thread is gone; its result says how
    }
  }

  private touch(): void {
    this.lastActivity = Date.now();
    this.wrapUpSentAt = undefined;
    this.alive = true;
  }

  private watchIdle(idleMs: number): void {
    const grace = Math.min(ORCHESTRATOR_DEFAULTS.wrapUpGraceMs, idleMs);
    const tick = Math.max(20, Math.min(1_000, Math.floor(idleMs / 4)));
    this.timers.push(
      setInterval(() => {
        const now = Date.now();
        if (!this.alive) return;
        // Waiting for a permit is waiting for us, not a stall.
        if (this.pendingPermits > 0) this.lastActivity = now;
        if (now - this.lastActivity < idleMs) return;
        if (this.wrapUpSentAt === undefined) {
          this.wrapUpSentAt = now;
          const text = ORCHESTRATOR_DEFAULTS.wrapUpNote.replace('{seconds}', String(Math.round(idleMs / 1000)));
          this.post({ type: 'wrap_up', text });
          this.ctx.emit({
            type: 'agent_event',
            ...this.refFields(),
            event: { type: 'wrap_up_requested', idleMs: now - this.lastActivity, graceMs: grace },
          });
          return;
        }
        if (now - this.wrapUpSentAt >= grace)
          this.abort({
            failure: 'stalled',
            detail: `no progress for ${Math.round((now - this.lastActivity) / 1000)}s, even after a wrap-up request`,
          });
      }, tick),
    );
  }

  /** Asks the agent to stop (session intact); terminates the thread if it does not within the grace period. */
  abort(reason: FailureReason): void {
    if (this.finished || this.abortReason) return;
    this.abortReason = reason;
    this.post({ type: 'abort', failure: reason.failure, detail: reason.detail });
    const t = setTimeout(
      () => this.hardAbort.abort(new Error(failureText(reason))),
      ORCHESTRATOR_DEFAULTS.abortGraceMs,
    );
    this.timers.push(t);
  }

  /**
   * Shared threads: true when this agent's thread died while it ran other agents too (or before
   * this agent even started on it); false when the crash can only be this agent's own.
   */
  private crashedShared(): boolean {
    if (!this.ctx.shareThreads) return false;
    const id = this.threadId;
    if (id === undefined) return true;
    if ((this.ctx.threadAgents?.get(id)?.size ?? 1) > 1) this.ctx.sharedCrashes?.add(id);
    return this.ctx.sharedCrashes?.has(id) === true;
  }

  /** Shared threads: ends this agent's own thread (piscina replaces it). */
  private terminateThread(): void {
    if (this.finished || this.threadId === undefined) return;
    const id = this.threadId;
    // The executor's own thread (the local thread pool's; executors elsewhere have none to end).
    // The culprit is noted first: the agents that shared the thread read it when it exits.
    this.ctx.terminatedThreads?.set(id, this.ref.key);
    if (!this.ctx.pool.terminateThread?.(id)) this.ctx.terminatedThreads?.delete(id);
  }

  /** Terminates the thread now (Ctrl-C after the grace period, or shutdown). */
  kill(reason: FailureReason): void {
    if (this.finished) return;
    this.abortReason ??= reason;
    this.hardAbort.abort(new Error(failureText(reason)));
  }

  /** A failed result's reason fields for a stop our abort caused. */
  private abortOutcome(reason: FailureReason): { failure: FailureReason['failure']; error: string; detail: string } {
    return { failure: reason.failure, error: failureText(reason), detail: reason.detail };
  }

  /**
   * Waits until every message the worker sent has been received: its last one is `done` (sent
   * when it closes its end); a dead or terminated thread closes the port instead. A task refused
   * before it reached a thread never took the port along: closing our copy of it then closes the
   * channel (on a port that was transferred, close() does nothing).
   */
  private async drain(workerPort: MessagePort): Promise<void> {
    workerPort.close();
    // Never started on a thread (no hello; e.g. the worker module failed to load): nothing to wait for.
    if (this.rejected && this.threadId === undefined) return;
    let timer: NodeJS.Timeout | undefined;
    const limit = new Promise<void>((resolve) => {
      timer = setTimeout(resolve, PORT_DRAIN_LIMIT_MS);
    });
    await Promise.race([this.portDone, limit]);
    clearTimeout(timer);
  }

  /**
   * The worker counted more usage than arrived over the port (a worker module that did not
   * close its port in time): charge the difference to the budget and log it as one call_usage.
   */
  private reconcile(r: WorkerResult): void {
    const gap = usageGap(r.usage, this.received);
    if (!gap) return;
    this.received = addUsageSummary(this.received, gap);
    const scopes = this.ctx.broker.scopesOf({ scopes: this.ref.scopes, provider: this.lastProvider });
    this.ctx.broker.budget.charge(scopes, { usd: gap.cost, tokens: gap.totalTokens });
    this.ctx.onUsage(this.ref, this.lastModel, gap.totalTokens);
    this.ctx.emit({
      type: 'call_usage',
      ...this.refFields(),
      model: this.lastModel,
      ...this.providerField(this.lastProvider),
      usage: gap,
    });
  }

  private async cleanup(): Promise<void> {
    for (const t of this.timers) clearTimeout(t);
    if (this.streamOff) clearTimeout(this.streamOff);
    this.streamOff = undefined;
    this.partialText = '';
    this.finished = true;
    this.ctx.router.unregister(this.ref.key);
    if (this.threadId !== undefined) {
      const agents = this.ctx.threadAgents?.get(this.threadId);
      agents?.delete(this.ref.key);
      if (agents?.size === 0) this.ctx.threadAgents?.delete(this.threadId);
    }
    this.permitAbort.abort(AGENT_FINISHED);
    this.releaseSlots();
    this.port.close();
  }

  private releaseSlots(): void {
    for (const slot of this.slots) this.ctx.broker.release(slot);
    this.slots.clear();
  }

  private refFields(): { task: string; key: string; attempt: number; parent?: string } {
    const ref = this.ref;
    return { task: ref.task, key: ref.key, attempt: ref.attempt, ...(ref.parent ? { parent: ref.parent } : {}) };
  }

  private receive(raw: unknown): void {
    const parsed = parseWorkerMessage(raw);
    const ref = this.ref;
    const base = this.refFields();
    if (!parsed.ok) {
      this.ctx.emit({ type: 'agent_event', ...base, event: { type: 'protocol_error', error: parsed.error } });
      return;
    }
    const m: WorkerMessage = parsed.message;
    if (!this.alive) this.touch();
    switch (m.type) {
      case 'permit_request':
        this.lastModel = m.model;
        this.lastProvider = m.provider;
        this.requestPermit(m.requestId, m.model, base, m.provider, m.call, m.keyHash);
        break;
      case 'permit_started':
        this.ctx.broker.started(m.slotId, m.at, m.heard);
        this.touch();
        break;
      case 'usage':
        this.slots.delete(m.slotId);
        this.ctx.broker.usage(m.slotId, m.usage);
        if (m.usage.totalTokens > 0 || m.usage.cost > 0) {
          this.received = addUsageSummary(this.received, m.usage);
          this.ctx.onUsage(ref, m.model, m.usage.totalTokens);
          this.ctx.emit({
            type: 'call_usage',
            ...base,
            model: m.model,
            ...this.providerField(m.provider),
            usage: m.usage,
          });
        }
        break;
      case 'rate_limited':
        this.ctx.broker.pause(m.model, m.delayMs, m.provider);
        this.ctx.emit({
          type: 'rate_limited',
          ...base,
          model: m.model,
          delayMs: m.delayMs,
          ...(m.status !== undefined ? { status: m.status } : {}),
        });
        break;
      case 'call_fallback':
        this.ctx.emit({ ...base, ...m });
        break;
      case 'event':
        this.touch();
        this.ctx.emit({ type: 'agent_event', ...base, event: m.event });
        break;
      case 'progress':
        this.touch();
        break;
      case 'partial':
        this.touch();
        // One sent before the worker saw `stream off` may arrive after it: that text is stale (the
        // message may end unseen), and would be shown at the next peek while nothing is written.
        if (!this.streamOff) break;
        this.partialText = m.text;
        this.partialAt = Date.now();
        break;
      case 'hello':
        // Another worker took this agent over (its first one died): calls granted to the old one never report back.
        if (this.threadId !== undefined) this.releaseSlots();
        this.threadId = m.threadId;
        // A worker that took the agent over does not know someone is watching.
        if (this.streamOff) this.post({ type: 'stream', on: true });
        this.ctx.onStarted?.(ref, m.worker);
        if (this.ctx.shareThreads && this.ctx.threadAgents) {
          const agents = this.ctx.threadAgents.get(m.threadId) ?? new Set<string>();
          agents.add(ref.key);
          this.ctx.threadAgents.set(m.threadId, agents);
        }
        // A hard abort that came before the worker said where it runs.
        if (this.ctx.shareThreads && this.hardAbort.signal.aborted) this.terminateThread();
        break;
      case 'send': {
        const r = this.ctx.router.send(ref.key, m.to, m.text);
        this.ctx.emit({ type: 'message', ...base, from: ref.key, to: m.to, text: m.text });
        if (m.requestId !== undefined)
          this.post({
            type: 'send_result',
            requestId: m.requestId,
            delivered: r.delivered,
            queued: r.queued,
            ...(r.error ? { error: r.error } : {}),
          });
        break;
      }
      case 'board': {
        this.touch();
        const answer = this.ctx.board
          ? this.ctx.board.handle(ref.key, m.request)
          : { ok: false as const, error: 'this run has no task board' };
        this.post({ type: 'board_result', requestId: m.requestId, answer });
        break;
      }
      case 'done':
        this.markPortDone();
        break;
      case 'window_learned':
        this.ctx.onWindowLearned?.(ref, m.learned);
        break;
      case 'verify':
        this.touch();
        this.ctx.emit({ type: 'verify', ...base, command: m.command, ok: m.ok, output: m.output });
        break;
    }
  }

  private providerField(provider: string | undefined): { provider?: string } {
    return provider !== undefined ? { provider } : {};
  }

  private requestPermit(
    requestId: number,
    model: string,
    base: { task: string; key: string; attempt: number; parent?: string },
    provider?: string,
    call?: CallEstimate,
    keyHash?: string,
  ): void {
    this.pendingPermits++;
    let logged = false;
    const req: PermitRequest = {
      model,
      ...this.providerField(provider),
      scopes: this.ref.scopes,
      estimate: this.ctx.estimate(this.ref, model, call),
      ...(call ? { call } : {}),
      ...(keyHash !== undefined ? { keyHash } : {}),
      // Calls that unblock the most waiting work go first while a limit binds.
      priority: this.ctx.priority?.(this.ref) ?? 0,
      signal: this.permitAbort.signal,
    };
    const waitLog = setTimeout(() => {
      logged = true;
      this.ctx.emit({ type: 'permit_wait', ...base, model, reason: this.ctx.broker.waitReason(req) });
    }, PERMIT_WAIT_LOG_MS);
    void this.ctx.broker.request(req).then((o) => {
      clearTimeout(waitLog);
      this.pendingPermits--;
      this.touch();
      if (o.ok) {
        if (this.finished) {
          this.ctx.broker.release(o.slotId);
          return;
        }
        this.slots.add(o.slotId);
        if (logged) this.ctx.emit({ type: 'permit_grant', ...base, model, waitedMs: o.waitedMs });
        this.post({ type: 'permit_grant', requestId, slotId: o.slotId });
      } else {
        if (o.reason !== 'aborted') this.ctx.emit({ type: 'permit_deny', ...base, model, reason: o.reason });
        if (o.budget) this.ctx.onBudgetDenied(this.ref, o.reason, o.budget);
        this.post({ type: 'permit_deny', requestId, reason: o.reason, budget: o.budget });
      }
    });
  }
}
