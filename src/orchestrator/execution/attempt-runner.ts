// Running one attempt of one instance, start to end: the attempt begins (the fold's core marks
// it running), its workspace is prepared (workspaces.ts), its start logged (distributed runs:
// once a worker takes it, remote-starts.ts), the runner runs it (instance-runner.ts), and what it
// returned decides what follows (attempt-lifecycle.ts): done (its work landed, workspaces.ts),
// retried after a backoff, or failed. Also where each of its agents runs and how its calls are budgeted
// (the LaunchContext). The run-wide consequences (fail-fast, budget exhaustion, retry timers) are
// the coordinator's, asked for through AttemptContext.
import { callPriority, dependentCounts } from '../pacing/call-priority.js';
import { existsSync } from 'node:fs';
import type { LoadedRecipe } from '../../recipe/index.js';
import {
  addUsageSummary,
  zeroUsage,
  type FailureClass,
  type RunEventInput,
  type UsageSummary,
} from '../../run/run-events.js';
import { applyInstanceEvent } from '../../run/run-fold.js';
import { agentFileToDisplay, type InstanceState, type TaskState } from '../../run/run-state.js';
import { parseSummary } from '../../session/parse-summary.js';
import type { Admission } from '../schedule/admission.js';
import type { LaunchContext } from './agent-launch.js';
import {
  doneEvent,
  failedEvent,
  interrupted,
  judgeFailedAttempt,
  outputOf,
  skippedEvent,
  startEvent,
  type FailedEvent,
} from '../schedule/attempt-lifecycle.js';
import type { ControlDesk } from '../control/control-desk.js';
import type { StopReason } from '../control/control-decisions.js';
import type { ExternalExecutor } from './instance-executor.js';
import type { InstanceRunner } from './instance-runner.js';
import type { MessageRouter } from '../control/message-router.js';
import type { LearnedWindowBook } from '../pacing/learned-window-book.js';
import type { PermitBroker } from '../pacing/permit-broker.js';
import type { TaskBoard } from '../control/task-board.js';
import type { WorkerResult } from '../protocol.js';
import { RemoteStarts } from '../schedule/remote-starts.js';
import type { ThreadPoolExecutor } from './thread-pool-executor.js';
import type { TrainRepairNeed, Workspaces } from '../workspace/workspaces.js';
import type { AttemptPicksDesk } from '../schedule/attempt-picks.js';

export interface AttemptContext {
  recipe: LoadedRecipe;
  tasks: ReadonlyMap<string, TaskState>;
  runner: InstanceRunner;
  /** Snapshots, worktrees and landing (workspaces.ts). */
  workspaces: Workspaces;
  /** `attempts:`: an attempt's work is recorded, and lands only once it is picked (attempt-picks.ts). */
  picks?: AttemptPicksDesk;
  desk: ControlDesk;
  admission: Admission;
  broker: PermitBroker;
  router: MessageRouter;
  /** The run's learned context windows, shared by its agents. */
  windows?: LearnedWindowBook;
  /** Tracing on: the traceparent of an attempt (CoordinatorOptions.traceparentOf). */
  traceparentOf?: (key: string, attempt: number) => string | undefined;
  /** The run's task board (task-board.ts): agents' board calls are answered by it. */
  board?: TaskBoard;
  /** The local thread pool, or undefined when agents run on `executor`. */
  threads(): ThreadPoolExecutor | undefined;
  executor?: ExternalExecutor;
  stopping(): StopReason | undefined;
  record(e: RunEventInput): void;
  /** An instance's final failure (the coordinator also cancels what max_failed no longer lets start). */
  fail(e: FailedEvent): void;
  /** The run's budget refused a call: nothing new starts. */
  exhaustBudget(reason: string): void;
  /** Queues the instance again after `delayMs` (a retry). */
  retryLater(t: TaskState, inst: InstanceState, delayMs: number): void;
  /** A model call's usage, for the run's total. */
  addRunUsage(usage: UsageSummary): void;
  planChanged(): void;
}

export class AttemptRunner {
  private readonly remoteStarts: RemoteStarts;

  constructor(private readonly ctx: AttemptContext) {
    this.remoteStarts = new RemoteStarts((e) => ctx.record(e));
  }

  /** Runs one attempt of `inst` to its end: done, retried later, or failed. */
  async run(t: TaskState, inst: InstanceState): Promise<void> {
    const c = this.ctx;
    const stopping = c.stopping();
    if (inst.status === 'cancelled') return;
    if (stopping) {
      if (stopping !== 'interrupted') c.record(skippedEvent(inst, `not started: the run is stopping (${stopping})`));
      return;
    }
    // Finished work that waited for its turn in the merge train when the run stopped: its agent
    // does not run again; its kept answer and the work in its worktree land in its turn.
    const kept = c.workspaces.train?.keptWork(inst.id);
    if (kept) return this.landKept(t, inst, kept);
    // The attempt begins now; its start is logged once the workspace is ready (distributed: once a worker takes it).
    applyInstanceEvent(inst, {
      type: 'instance_start',
      task: inst.task,
      key: inst.id,
      parent: inst.task,
      attempt: inst.attempt + 1,
    });
    inst.startedAt ??= Date.now();
    const attemptStart = Date.now();
    const prepared = await c.workspaces.prepare(t, inst);
    inst.sessionFiles = t.task.kind === 'run' ? [] : c.runner.sessionFilesOf(t, inst);
    const start = startEvent(
      inst,
      inst.sessionFiles.some((f) => existsSync(f)),
    );
    if (c.executor !== undefined && t.task.kind !== 'run' && prepared.ok) this.remoteStarts.defer(start);
    else c.record(start);
    let result: WorkerResult;
    try {
      const cancelledBy = c.desk.cancelledBy(inst.id);
      if (cancelledBy !== undefined)
        result = { ok: false, failure: 'cancelled', error: `cancelled by ${cancelledBy}`, usage: zeroUsage() };
      else if (!prepared.ok)
        result = { ok: false, failure: prepared.failure, error: prepared.detail, usage: zeroUsage() };
      else result = await c.runner.run(t, inst);
    } finally {
      this.remoteStarts.settle(inst.id);
    }
    inst.usage = addUsageSummary(inst.usage, result.usage);
    inst.durationMs = (inst.durationMs ?? 0) + Date.now() - attemptStart;
    if (!result.ok) return this.failed(t, inst, result);
    // A cancel that came too late (the attempt had already succeeded) changes nothing.
    c.desk.forget(inst.id);
    await this.complete(t, inst, result);
  }

  /**
   * Resume of an instance whose agent had finished and whose work waited for its turn (a `waiting`
   * train car): the attempt it was in goes on (its start logged again under the same attempt, no
   * agent runs), its worktree is made whole, and its work lands through the train as if the
   * agent had just ended.
   */
  private async landKept(t: TaskState, inst: InstanceState, kept: { text: string; summary?: string }): Promise<void> {
    const attempt = Math.max(1, inst.attempt);
    applyInstanceEvent(inst, { type: 'instance_start', task: inst.task, key: inst.id, parent: inst.task, attempt });
    // Its worktree holds the work: one made again would hold none, and the instance would land nothing.
    const wt = inst.git?.worktree;
    if (wt && !existsSync(wt)) {
      const detail = `the worktree ${wt}, which held the finished work of ${inst.id} while it waited for its turn in the merge train, is gone; its work is in patches/${inst.id}.diff, and a resume runs its agent again`;
      this.ctx.workspaces.train?.step(inst, 'failed', { failure: 'workspace', error: detail });
      return this.ctx.fail(failedEvent(inst, 'workspace', detail));
    }
    const prepared = await this.ctx.workspaces.prepare(t, inst);
    this.ctx.record(startEvent(inst, false));
    if (!prepared.ok)
      return this.failed(t, inst, { ok: false, failure: prepared.failure, error: prepared.detail, usage: zeroUsage() });
    await this.complete(t, inst, {
      ...{ ok: true, text: kept.text, usage: zeroUsage(), modifiedFiles: [], readFiles: [], verifyAttempts: 0 },
      ...(kept.summary ? { summary: kept.summary } : {}),
    });
  }

  private dependentsOfTasks: Map<string, number> | undefined;
  /** How many tasks wait for each task (the run's graph does not change while it runs). */
  private dependents(): Map<string, number> {
    this.dependentsOfTasks ??= dependentCounts([...this.ctx.tasks.values()].map((t) => t.task));
    return this.dependentsOfTasks;
  }

  /** Where and how an agent of `inst` runs: its executor (shared threads, or a thread of its own) and its calls' permits. */
  launchContext(inst: InstanceState): LaunchContext {
    const c = this.ctx;
    const placement = c.threads()?.placement(inst.isolated) ?? { pool: c.executor!, shareThreads: false };
    return {
      ...placement,
      broker: c.broker,
      router: c.router,
      ...(c.board ? { board: c.board } : {}),
      emit: (e) => {
        // A call is no turn: the coordinator counts turns from turn_end (run/turn-count.ts).
        if (e.type === 'call_usage') c.addRunUsage({ ...e.usage, turns: 0 });
        c.record(e);
      },
      estimate: (ref, model, call) => c.admission.callEstimate(ref.key, c.tasks.get(ref.task)!.task, model, call),
      priority: (ref) => callPriority(this.dependents().get(ref.task) ?? 0, ref.key),
      onUsage: (ref, _model, tokens) => c.admission.noteCall(ref.key, tokens),
      onStarted: (ref, worker) => {
        c.threads()?.started();
        c.desk.started(inst.id);
        if (worker !== undefined)
          this.remoteStarts.workerTook({ task: inst.task, key: inst.id, attempt: inst.attempt }, ref.key, worker);
      },
      learnedWindows: () => c.windows?.list() ?? [],
      ...(c.traceparentOf ? { traceparent: () => c.traceparentOf?.(inst.id, inst.attempt) } : {}),
      onWindowLearned: (ref, w) => c.windows?.learned(ref.key, w),
      onBudgetDenied: (_ref, reason, scope) => {
        if (scope === 'run') c.exhaustBudget(reason);
      },
    };
  }

  private async complete(
    t: TaskState,
    inst: InstanceState,
    result: Extract<WorkerResult, { ok: true }>,
  ): Promise<void> {
    const { recipe, workspaces } = this.ctx;
    inst.text = result.text;
    inst.output = outputOf(t.task, result.text);
    if (result.summary) inst.handoff = parseSummary(result.summary);
    const modified = new Set<string>();
    for (const f of inst.handoff?.modifiedFiles ?? []) modified.add(agentFileToDisplay(recipe.dir, inst, f));
    inst.readFiles = (inst.handoff?.readFiles ?? []).map((f) => agentFileToDisplay(recipe.dir, inst, f));
    if (t.task.attempts && this.ctx.picks) {
      await this.ctx.picks.candidateDone(t, inst, result, modified);
      this.ctx.planChanged();
      return;
    }
    const land = await workspaces.land(t, inst, result.text, result.summary);
    if (land.patchFile) inst.patchFile = land.patchFile;
    if (!land.ok && land.repair) return this.repair(t, inst, land, land.repair, result);
    // The merge train's final refusal (repairs used up): no retry would land it either.
    if (!land.ok && land.failure === 'verify_failed')
      return this.ctx.fail(failedEvent(inst, land.failure, land.detail));
    if (!land.ok)
      return this.failed(t, inst, { ok: false, failure: land.failure, error: land.detail, usage: zeroUsage() });
    for (const f of land.files) modified.add(f);
    this.ctx.record(doneEvent(inst, result, [...modified].sort(), land));
    this.ctx.planChanged();
    await workspaces.drop(t, inst);
  }

  /**
   * The merge train refused the work (a conflict, or verify broken on the merged tree) and it has
   * repairs left: its agent runs again on the new tip (workspaces.ts startRepair), as a retry that
   * does not count against `retries`. A picked attempt (attempts:) the train refused comes here too.
   */
  async repair(
    t: TaskState,
    inst: InstanceState,
    land: { failure: FailureClass; detail: string },
    need: TrainRepairNeed,
    earlier: { summary?: string },
  ): Promise<void> {
    const c = this.ctx;
    const started = await c.workspaces.startRepair(t, inst, need, earlier);
    if (!started.ok)
      return this.failed(t, inst, { ok: false, failure: started.failure, error: started.detail, usage: zeroUsage() });
    c.record({
      type: 'instance_retry',
      task: inst.task,
      key: inst.id,
      attempt: Math.max(1, inst.attempt),
      parent: inst.task,
      failure: land.failure,
      error: `${land.detail}; repair ${c.workspaces.train?.repairs(inst.id) ?? 1} of ${t.task.maxRepairs} on the new tip`,
      delayMs: 0,
      uncharged: true,
    });
    c.retryLater(t, inst, 0);
  }

  private async failed(t: TaskState, inst: InstanceState, result: Extract<WorkerResult, { ok: false }>): Promise<void> {
    const c = this.ctx;
    const cancelledBy = c.desk.cancelledBy(inst.id);
    c.desk.forget(inst.id);
    const v = judgeFailedAttempt({ inst, task: t.task, result, cancelledBy, stopping: c.stopping() });
    if (v.kind === 'interrupted') return void interrupted(inst, 'the run was interrupted');
    if (v.kind === 'retry') {
      c.record(v.event);
      c.retryLater(t, inst, v.event.delayMs);
      return;
    }
    // attempts: an attempt that ends here never lands; its work stays in the run folder as a patch.
    if (t.task.attempts && c.picks) {
      const patchFile = await c.picks.keepWork(inst);
      if (patchFile) v.event.patchFile = patchFile;
    }
    c.fail(v.event);
    if (v.kind === 'failed' && v.runBudgetSpent !== undefined) c.exhaustBudget(v.runBudgetSpent);
    if (t.task.attempts && c.picks) await c.picks.endedAfterPick(t, inst);
  }
}
