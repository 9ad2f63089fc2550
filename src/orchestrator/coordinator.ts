// The coordinator (main thread) conducts one run, or one resume of it, through named
// collaborators: the DAG walk (task-walk.ts), budget admission (admission.ts) into the scheduler
// (concurrency, max_parallel, write scopes), one attempt at a time (attempt-runner.ts over
// instance-runner.ts: the local thread pool, thread-pool-executor.ts, or the Redis executor; and
// workspaces.ts: snapshots, worktrees, landing), what follows an attempt (attempt-lifecycle.ts), users' actions
// (control-desk.ts, control-decisions.ts), plan.md and result.json (run-files.ts). They are built
// and joined in coordinator-wiring.ts. Each event the coordinator records goes to run.jsonl, and a
// lifecycle event is applied to its instance by the run fold's core (run/instance-record.ts):
// statuses change in one place. See docs/architecture.md.
//
// Stopping:
// - fail-fast: when a task fails and its on_failure is `fail`, nothing new starts; instances
//   already running are left to finish (their work is paid for and their sessions stay useful);
//   everything not started is skipped. The run ends `failed`.
// - budget: when the run budget is spent, permits are refused, running agents stop at their next
//   model call with sessions intact, nothing new starts. The run ends `budget_exhausted`.
// - interrupt (Ctrl-C / the signal): every agent gets an abort message, threads that do not stop
//   within the grace period are terminated; nothing is marked failed, so `resume` continues
//   every unfinished instance from its session. The run ends `interrupted`.
import { join } from 'node:path';
import { buildPlan, type LoadedRecipe } from '../recipe/index.js';
import { addUsageSummary, zeroUsage, type RunEventInput, type UsageSummary } from '../run/run-events.js';
import {
  applyInstanceEvent,
  instanceOfKey,
  isLifecycleEvent,
  reopenInstance,
  runUsage as loggedRunUsage,
  type RunState,
} from '../run/run-fold.js';
import { countsAsTurn } from '../run/turn-count.js';
import { isTerminal, type InstanceState, type TaskState } from '../run/run-state.js';
import type { RunStore } from '../run/run-store.js';
import type { AgentLaunch } from './execution/agent-launch.js';
import { failedEvent, interrupted, queuedEvent, skippedEvent, type FailedEvent } from './schedule/attempt-lifecycle.js';
import { decideResumeRetry, type StopReason } from './control/control-decisions.js';
import type { CoordinatorOptions, RunOutcome } from './coordinator-options.js';
import { wireCollaborators, type Collaborators } from './coordinator-wiring.js';
import type { SchedulableInstance } from './schedule/scheduler.js';
import { restoredInstances, runResumeEvent, runStartEvent } from './execution/session-start.js';
import { noteEarlierWrites } from './workspace/earlier-changes.js';
import { allSettled, inPlanOrder, pastMaxFailed, runEndStatus, schedulable } from './schedule/task-walk.js';
import type { ThreadPoolExecutor } from './execution/thread-pool-executor.js';

export type { CoordinatorOptions, RunOutcome } from './coordinator-options.js';

export class Coordinator {
  private readonly recipe: LoadedRecipe;
  private readonly store: RunStore;
  private readonly env: Readonly<Record<string, string | undefined>>;
  private readonly tasks = new Map<string, TaskState>();
  private readonly instances = new Map<string, InstanceState>();
  private readonly launches = new Map<string, AgentLaunch[]>();
  private readonly retryTimers = new Map<string, NodeJS.Timeout>();
  /** The collaborators (coordinator-wiring.ts): walk, admission, attempts, desk, files... */
  private readonly c: Collaborators;
  private readonly shellAbort = new AbortController();
  /** The local executor (worker threads); absent when agents run on an external one (`--redis`). */
  private threads: ThreadPoolExecutor | undefined;
  private stopping: StopReason | undefined;
  /** Set when the run's own files cannot be written: the run stops like an interrupt, status failed. */
  private storageError: string | undefined;
  /** end() has begun: nothing is left to stop. */
  private ending = false;
  private inflight = 0;
  private runUsage: UsageSummary = zeroUsage();
  private readonly startedAt = Date.now();
  private finish!: () => void;
  private readonly finished = new Promise<void>((r) => (this.finish = r));
  /** Everything settled and finish() was called: the run ends now, nothing may be retried. */
  private done = false;

  constructor(private readonly opts: CoordinatorOptions) {
    this.recipe = opts.recipe;
    this.store = opts.store;
    // Display events are written at the end of the event-loop turn, so a failure can surface there.
    this.store.onWriteError = (err) => {
      if (!this.storageError) this.storageFailed(`cannot write the run log ${this.store.logFile}: ${err.message}`);
    };
    this.env = opts.env ?? process.env;
    this.c = wireCollaborators(opts, {
      ...{ tasks: this.tasks, instances: this.instances, launches: this.launches, retryTimers: this.retryTimers },
      shellSignal: this.shellAbort.signal,
      stopping: () => this.stopping,
      ended: () => this.ending || this.done,
      threads: () => this.threads,
      ordered: () => this.ordered(),
      record: (e) => this.record(e),
      fail: (e) => this.fail(e),
      queue: (t, inst) => this.queue(t, inst),
      advance: () => this.advance(),
      interrupt: () => this.interrupt(),
      failFast: (reason) => {
        this.stopping = 'fail-fast';
        this.stopNewWork(reason);
      },
      refuse: (i, reason) => this.refuse(i, reason),
      exhaustBudget: (reason) => this.exhaustBudget(reason),
      storageFailed: (m) => this.storageFailed(m),
      addRunUsage: (u) => (this.runUsage = addUsageSummary(this.runUsage, u)),
    });
  }

  /** Logs an event; the fold's core applies a lifecycle event (or an accepted retry) to its instance: the one place a status changes. */
  private record(e: RunEventInput): void {
    this.store.append(e); // a failed write reaches storageFailed through store.onWriteError
    if (isLifecycleEvent(e)) {
      const inst = this.instances.get(e.key);
      if (inst) applyInstanceEvent(inst, e);
      // An instance waiting for its turn in the merge train (land_order: task) may now land.
      this.c.workspaces.train?.wake();
    } else if (e.type === 'control') {
      if (e.action === 'retry' && e.ok && e.instance !== undefined) {
        const inst = this.instances.get(instanceOfKey(e.instance));
        if (inst) reopenInstance(inst);
      }
      // A cancel of work waiting for its turn in the merge train ends its wait.
      this.c.workspaces.train?.wake();
    }
    // An agent that failed for good no longer works on its board tasks: they go back to pending.
    if (e.type === 'instance_failed' && e.final) this.c.board.releaseInstance(e.key, `failed (${e.failure})`);
    // The run's turns, counted as every view counts them (run/turn-count.ts).
    if (e.type === 'agent_event' && e.event.type === 'turn_end' && countsAsTurn(e.event.stopReason))
      this.runUsage = { ...this.runUsage, turns: (this.runUsage.turns ?? 0) + 1 };
  }

  /**
   * The run cannot record what it does: every agent stops (sessions kept, nothing marked failed,
   * as on Ctrl-C), so once the disk is fixed `orchestrate resume` continues from what was written.
   */
  private storageFailed(message: string): void {
    this.storageError = message;
    if (!this.ending) this.interrupt();
  }

  private ordered(): TaskState[] {
    return inPlanOrder(this.tasks.values());
  }

  // ---- the run ---------------------------------------------------------------------------------------

  async run(): Promise<RunOutcome> {
    const plan = buildPlan(this.recipe, { env: this.env });
    if (!plan.ok) throw new Error(plan.problems.map((p) => `${p.file}:${p.line}:${p.col}: ${p.message}`).join('\n'));
    for (const pt of plan.plan.tasks) {
      const task = this.recipe.tasks.find((t) => t.id === pt.id)!;
      this.tasks.set(task.id, { task, level: pt.level, status: 'waiting', expanded: false, instances: [] });
    }
    if (this.opts.replay) {
      this.restore(this.opts.replay);
      // What the instances that run again changed before: scheduled like overlapping writes: (earlier-changes.ts).
      await noteEarlierWrites(this.store.dir, this.instances.values());
      // A kill between logging an instance done and removing its landed worktree left it behind.
      for (const inst of this.instances.values())
        if (inst.status === 'done' && !this.c.picks.holdsWorktree(inst))
          await this.c.workspaces.drop(this.tasks.get(inst.task)!, inst);
    } else {
      this.record(runStartEvent(this.recipe, plan.plan, this.opts.overrides));
      this.c.board.seed(this.recipe.board);
    }
    if (!this.opts.executor) {
      this.threads = this.c.threadPool({
        concurrency: this.recipe.concurrency,
        pairs: this.recipe.tasks.some((t) => t.kind === 'pair'),
        instanceCount: plan.plan.instanceCount,
        ...(this.opts.pool ? { pool: this.opts.pool } : {}),
        agentsPerThread: this.opts.agentsPerThread,
        resourceLimits: this.opts.resourceLimits,
        onThreadError: (err) =>
          this.record({
            type: 'agent_event',
            task: '*',
            key: '*',
            attempt: 1,
            event: { type: 'worker_error', error: String(err) },
          }),
        onThreadsCannotStart: (reason) => this.threadsCannotStart(reason),
      });
    }
    const onSignal = () => this.interrupt();
    const onKill = () => {
      this.interrupt();
      this.kill();
    };
    if (this.opts.signal?.aborted) this.interrupt();
    else this.opts.signal?.addEventListener('abort', onSignal, { once: true });
    this.opts.killSignal?.addEventListener('abort', onKill, { once: true });
    this.c.files.writePlan();
    if (this.opts.controlSocket !== false) await this.c.desk.listen();
    this.opts.onControl?.(this.c.desk.runControl);
    this.advance();
    await this.finished;
    this.opts.signal?.removeEventListener('abort', onSignal);
    this.opts.killSignal?.removeEventListener('abort', onKill);
    return this.end();
  }

  /** Resume: run_resume, the spend so far charged again, the instances taken from the fold of the log, then `--retry` keys. */
  private restore(fold: RunState): void {
    this.record(runResumeEvent(this.recipe, fold, this.opts.overrides, this.opts.inputs));
    this.runUsage = { ...fold.spend, turns: loggedRunUsage(fold).turns ?? 0 };
    this.c.ledger.charge(['run'], { usd: fold.spend.cost, tokens: fold.spend.totalTokens });
    for (const inst of restoredInstances(fold, (task) => this.tasks.get(task)?.task.attempts !== undefined)) {
      if (!this.tasks.has(inst.task)) continue;
      this.c.ledger.charge([`instance:${inst.id}`], { usd: inst.usage.cost, tokens: inst.usage.totalTokens });
      this.instances.set(inst.id, inst);
    }
    for (const key of this.opts.retry ?? []) {
      const d = decideResumeRetry(this.store.runId, this.instances, key);
      this.record({
        type: 'control',
        action: 'retry',
        instance: key,
        by: this.opts.retryBy ?? 'resume',
        ok: d.ok,
        message: d.ok ? d.message : d.error,
      });
    }
  }

  /** Threads failed before any agent started on one: the waiting agents fail as crashed and nothing new starts (a retry would wait just the same). */
  private threadsCannotStart(reason: string): void {
    if (this.stopping === 'no-threads' || this.stopping === 'interrupted') return;
    this.stopping = 'no-threads';
    this.stopNewWork(reason);
    for (const list of this.launches.values()) for (const l of list) l.failUnstarted(`crashed: ${reason}`);
  }

  // ---- the DAG walk (task-walk.ts) ------------------------------------------------------------------------

  private advance(): void {
    this.c.walk.advance();
    // A task settled (attempts: once its pick landed): work waiting for its turn behind it may land.
    this.c.workspaces.train?.wake();
    this.checkDone();
  }

  private queue(t: TaskState, inst: InstanceState): void {
    // A stop (budget, fail-fast) can come while a fan-out is being queued (its first instance
    // refused); the scheduler takes nothing any more, so the rest would wait forever.
    if (this.stopping && this.stopping !== 'interrupted')
      return void this.record(skippedEvent(inst, `not started: the run is stopping (${this.stopping})`));
    this.record(queuedEvent(inst));
    this.c.scheduler.submit(schedulable(t, inst), () => this.runInstance(t, inst));
  }

  private checkDone(): void {
    // A pick being made or landed (attempts:) holds the end too: its events belong before run_end.
    const idle = this.inflight === 0 && this.launches.size === 0 && this.retryTimers.size === 0 && this.c.picks.idle();
    if (idle && (allSettled(this.tasks) || this.stopping === 'interrupted')) {
      // A publish gate (publish.approve) waits before the run ends, or publishes once approved.
      if (this.c.gates.holdsEnd(this.stopping !== undefined || this.storageError !== undefined)) return;
      this.done = true;
      this.finish();
    }
  }

  // ---- stopping --------------------------------------------------------------------------------------

  /** The scheduler refused an instance for good: the budget cannot fit it even with nothing running. */
  private refuse(s: SchedulableInstance, reason: string): void {
    const inst = this.instances.get(s.id);
    if (!inst) return;
    this.fail(failedEvent(inst, 'budget', `Budget exhausted before this instance could start: ${reason}`));
    this.exhaustBudget(reason);
    this.c.walk.settle(this.tasks.get(inst.task)!);
  }

  private exhaustBudget(reason: string): void {
    if (this.stopping === 'budget' || this.stopping === 'interrupted') return;
    const first = this.stopping === undefined;
    this.stopping = 'budget';
    if (first) this.record({ type: 'budget_exhausted', reason });
    this.stopNewWork(`budget exhausted: ${reason}`);
  }

  /** Nothing new starts; what waits is skipped (running instances go on). */
  private stopNewWork(reason: string): void {
    for (const s of this.c.scheduler.stop()) {
      const inst = this.instances.get(s.id);
      if (inst && !isTerminal(inst.status)) this.record(skippedEvent(inst, `not started: ${reason}`));
    }
    this.c.gates.stop(reason);
    for (const [id, timer] of this.retryTimers) {
      clearTimeout(timer);
      this.retryTimers.delete(id);
      const inst = this.instances.get(id);
      if (inst && !isTerminal(inst.status))
        this.fail(failedEvent(inst, inst.failure ?? 'error', `${inst.error ?? 'failed'} (not retried: ${reason})`));
    }
    for (const t of this.tasks.values()) this.c.walk.settle(t);
    this.advance();
  }

  interrupt(): void {
    if (this.stopping === 'interrupted') return;
    this.stopping = 'interrupted';
    this.c.scheduler.stop();
    this.c.gates.pause();
    this.c.broker.drain('the run was interrupted');
    for (const [id, timer] of this.retryTimers) {
      clearTimeout(timer);
      this.retryTimers.delete(id);
      const inst = this.instances.get(id);
      if (inst) interrupted(inst);
    }
    this.shellAbort.abort();
    // Work waiting for its turn in the merge train stops waiting (kept for the resume to land).
    this.c.workspaces.train?.wake();
    for (const list of this.launches.values())
      for (const l of list) l.abort({ failure: 'aborted', detail: 'the run was interrupted' });
    this.checkDone();
  }

  /** Terminates every thread now (a second Ctrl-C). */
  kill(): void {
    for (const list of this.launches.values())
      for (const l of list) l.kill({ failure: 'aborted', detail: 'the run was killed' });
  }

  // ---- one attempt ---------------------------------------------------------------------------------------

  private async runInstance(t: TaskState, inst: InstanceState): Promise<void> {
    this.inflight++;
    try {
      await this.c.attempts.run(t, inst);
    } catch (err) {
      // A bug in the coordinator must not hang the run: the instance fails with the reason.
      this.fail(
        failedEvent(
          inst,
          'error',
          `coordinator error: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}`,
        ),
      );
    } finally {
      this.c.desk.forget(inst.id);
      this.inflight--;
      this.c.walk.settle(t);
      this.advance();
      // After the walk: a cancel's reply names the instance's end once the log has it.
      this.c.desk.attemptEnded(inst.id);
    }
  }

  /** Logs an instance's final failure; a fan-out past max_failed cancels its instances that have not started. */
  private fail(e: FailedEvent): void {
    this.record(e);
    const t = this.tasks.get(e.task)!;
    const reason = pastMaxFailed(t);
    if (reason) {
      for (const s of this.c.scheduler.cancelWaiting((x) => x.task === t.task.id)) {
        const i = this.instances.get(s.id);
        if (i && !isTerminal(i.status)) this.record(skippedEvent(i, reason));
      }
    }
    this.c.files.planChanged();
  }

  private async end(): Promise<RunOutcome> {
    this.ending = true;
    this.c.gates.pause();
    this.c.files.close();
    await this.c.desk.close();
    let status = runEndStatus(this.tasks, this.instances.values(), this.stopping, this.storageError !== undefined);
    this.c.broker.close();
    await this.threads?.close();
    const endedAt = Date.now();
    const written = await this.c.files.finish({ status, startedAt: this.startedAt, endedAt, usage: this.runUsage });
    if (written.error) this.storageError ??= written.error;
    this.record({ type: 'run_end', status, usage: this.runUsage, durationMs: endedAt - this.startedAt });
    // A record that could not be completed fails the run, whatever the agents did.
    if (this.storageError) status = 'failed';
    const dir = this.store.dir;
    const error = this.storageError
      ? {
          error: `${this.storageError}. The run was stopped; what was written before is intact. Fix the disk, then: orchestrate resume ${dir}`,
        }
      : {};
    return {
      status,
      runId: this.store.runId,
      dir,
      usage: this.runUsage,
      durationMs: endedAt - this.startedAt,
      planFile: join(dir, 'plan.md'),
      resultFile: written.resultPath,
      tasks: this.ordered(),
      ...error,
    };
  }
}
