// How the coordinator's collaborators are built and joined to each other. Each collaborator gets
// only the verbs it needs (record an event, fail an instance, queue it...), and those verbs are the
// coordinator's: the wiring lives here so coordinator.ts reads as the conductor it is (the run,
// stopping, one attempt) and a new collaborator is added in one place.
import type { LoadedRecipe } from '../recipe/index.js';
import { renderNeedsContext } from '../run/merge-summaries.js';
import type { RunEventInput, UsageSummary } from '../run/run-events.js';
import { planInput, resultView, type InstanceState, type TaskState } from '../run/run-state.js';
import type { RunStore } from '../run/run-store.js';
import { type Admission, agentOf } from './schedule/admission.js';
import type { AgentLaunch } from './execution/agent-launch.js';
import { failedEvent, type FailedEvent } from './schedule/attempt-lifecycle.js';
import { ApprovalGates } from './control/approval-gates.js';
import { AttemptRunner } from './execution/attempt-runner.js';
import { AttemptPicksDesk } from './schedule/attempt-picks.js';
import { judgeAttempts } from './schedule/judge-attempts.js';
import type { BudgetLedger } from './schedule/budget.js';
import { CacheWarmup, warmsCache } from './pacing/cache-warmup.js';
import type { StopReason } from './control/control-decisions.js';
import { ControlDesk } from './control/control-desk.js';
import type { CoordinatorOptions } from './coordinator-options.js';
import { InstanceRunner } from './execution/instance-runner.js';
import { MessageRouter, runDirectory } from './control/message-router.js';
import { LearnedWindowBook } from './pacing/learned-window-book.js';
import type { PermitBroker } from './pacing/permit-broker.js';
import { executionStack, type ExecutionStack } from './execution-stack.js';
import { RunFiles } from './run-files.js';
import { readLearnedLimits } from './pacing/learned-limits-file.js';
import { Scheduler, type SchedulableInstance } from './schedule/scheduler.js';
import { TaskBoard } from './control/task-board.js';
import { TaskWalk } from './schedule/task-walk.js';
import type { ThreadPoolExecutor } from './execution/thread-pool-executor.js';
import { Workspaces } from './workspace/workspaces.js';

/** The run's shared state and the coordinator's verbs, as the collaborators see them. */
export interface CoordinatorHost {
  readonly tasks: Map<string, TaskState>;
  readonly instances: Map<string, InstanceState>;
  readonly launches: Map<string, AgentLaunch[]>;
  readonly retryTimers: Map<string, NodeJS.Timeout>;
  /** Aborted on interrupt: `run:` commands stop. */
  readonly shellSignal: AbortSignal;
  stopping(): StopReason | undefined;
  /** end() has begun or everything settled: no action on the live run is taken any more. */
  ended(): boolean;
  threads(): ThreadPoolExecutor | undefined;
  ordered(): TaskState[];
  record(e: RunEventInput): void;
  fail(e: FailedEvent): void;
  queue(t: TaskState, inst: InstanceState): void;
  advance(): void;
  interrupt(): void;
  /** A task with on_failure: fail failed: nothing new starts. */
  failFast(reason: string): void;
  refuse(s: SchedulableInstance, reason: string): void;
  exhaustBudget(reason: string): void;
  storageFailed(message: string): void;
  addRunUsage(u: UsageSummary): void;
}

export interface Collaborators {
  ledger: BudgetLedger;
  /** Builds the run's worker threads (executionStack's, so a re-run's threads are built alike). */
  threadPool: ExecutionStack['threadPool'];
  admission: Admission;
  broker: PermitBroker;
  /** A wide fan-out's first call goes out alone, so the rest reads the cached prompt prefix. */
  warmup: CacheWarmup;
  router: MessageRouter;
  runner: InstanceRunner;
  /** Every instance's workspace: snapshots, worktrees, diffs, `writes:` and landing, per-repository locks. */
  workspaces: Workspaces;
  scheduler: Scheduler;
  files: RunFiles;
  /** Users' actions on the live run (cancel, steer, retry, interrupt, peek). */
  desk: ControlDesk;
  walk: TaskWalk;
  attempts: AttemptRunner;
  /** Approval gates (`approve:`): instances that wait for a user's answer before they are queued. */
  gates: ApprovalGates;
  /** The run-wide task board agents share (task-board.ts); restored from the log on resume. */
  board: TaskBoard;
  /** `attempts:`: which attempt of an instance lands (attempt-picks.ts). */
  picks: AttemptPicksDesk;
}

export function wireCollaborators(opts: CoordinatorOptions, host: CoordinatorHost): Collaborators {
  const recipe: LoadedRecipe = opts.recipe;
  const store: RunStore = opts.store;
  const env = opts.env ?? process.env;
  const warmup = new CacheWarmup();
  const { ledger, admission, broker, threadPool } = executionStack({
    recipe,
    ...(opts.replay ? { replay: opts.replay } : {}),
    taskOf: (id) => host.tasks.get(id)!.task,
    stopping: () => host.stopping(),
    ...(opts.rateWindowMs !== undefined ? { windowMs: opts.rateWindowMs } : {}),
    gate: warmup,
    // A resume paces by the limits the run learned before (no first-call probe); what is learned is kept.
    ...(opts.replay
      ? { learnedBefore: { records: readLearnedLimits(store.dir), idleMs: Date.now() - opts.replay.lastTs } }
      : {}),
    onLearned: () => files.learnedLimitsChanged(),
  });
  const router = new MessageRouter(runDirectory(host.tasks, host.instances));
  const siblings = () => [...host.instances.values()].map((inst) => ({ task: host.tasks.get(inst.task)!, inst }));
  const workspaces = new Workspaces({
    recipeDir: recipe.dir,
    store,
    siblings,
    storageFailed: (m) => host.storageFailed(m),
    record: (e) => host.record(e),
    ...(opts.replay ? { restoredTrain: opts.replay.train } : {}),
    // Recipe order (not the plan's): land_order: task lands by it.
    tasks: () => recipe.tasks.flatMap((task) => host.tasks.get(task.id) ?? []),
    // Finished work waiting for its turn (land_order: task) runs no agent: its slot goes to the
    // work it waits for; its writes scope still keeps out what lands after it.
    yieldSlot: (inst, holds) => scheduler.release(inst.id, (other) => holds(other.task)),
    stopWaiting: (inst) => {
      const by = desk.cancelledBy(inst.id);
      if (by !== undefined) return { reason: `cancelled by ${by}`, cancelled: true };
      return host.stopping() === 'interrupted' ? { reason: 'the run was interrupted', cancelled: false } : undefined;
    },
    // The train's verify on a merged tree is confined as the task's verify is in its worktree.
    verifySandbox: (t) => {
      const agent = recipe.agents[t.task.agent ?? ''];
      return { mode: agent?.sandbox ?? recipe.sandbox, network: agent?.network ?? recipe.network ?? false };
    },
  });
  const runner: InstanceRunner = new InstanceRunner({
    recipe,
    store,
    workspaces,
    env,
    fullEvents: opts.fullEvents ?? false,
    launches: host.launches,
    shellSignal: host.shellSignal,
    shellSignalFor: (inst) => desk.shellSignal(inst, host.shellSignal),
    emit: (e) => host.record(e),
    launchContext: (inst) => attempts.launchContext(inst),
    // An instance under repair (the merge train) has a session of its own per repair.
    sessionFile: (agentKey) => store.sessionFile(workspaces.sessionKey(agentKey)),
    contextFor: (t) =>
      t.task.context === 'summaries' && t.task.needs.length > 0
        ? renderNeedsContext(planInput(recipe, resultView(host.ordered())), t.task.needs) || undefined
        : undefined,
  });
  const scheduler = new Scheduler({
    concurrency: recipe.concurrency,
    admit: (i, running) => admission.admit(i, running),
    onRefused: (i, reason) => host.refuse(i, reason),
  });
  const files = new RunFiles({
    recipe,
    store,
    tasks: () => host.ordered(),
    liveStatus: () => {
      const stopping = host.stopping();
      return stopping ? `stopping (${stopping})` : 'running';
    },
    ...(opts.replay ? { providersBefore: opts.replay.providers } : {}),
    learnedLimits: () => broker.learned?.records() ?? [],
  });
  const desk: ControlDesk = new ControlDesk({
    runId: store.runId,
    runDir: store.dir,
    instances: host.instances,
    tasks: host.tasks,
    launches: host.launches,
    router,
    stopping: () => host.stopping(),
    ended: () => host.ended(),
    record: (e) => host.record(e),
    interrupt: () => host.interrupt(),
    retry: (inst, t) => {
      // Its task settles again when the new attempt ends; dependants already skipped stay skipped (a resume runs them).
      t.status = 'active';
      delete t.reason;
      host.queue(t, inst);
    },
    answerApproval: (a, by) => gates.answer(a, by),
    cancelWaiting: (inst, t, by) => {
      clearTimeout(host.retryTimers.get(inst.id));
      host.retryTimers.delete(inst.id);
      scheduler.cancelWaiting((x) => x.id === inst.id);
      host.fail(failedEvent(inst, 'cancelled', `cancelled by ${by}`));
      walk.settle(t);
      host.advance();
    },
  });
  const board = new TaskBoard({
    record: (e) => host.record(e),
    ...(opts.replay ? { restored: opts.replay.board } : {}),
  });
  const walk: TaskWalk = new TaskWalk({
    recipe,
    env,
    tasks: host.tasks,
    instances: host.instances,
    stopping: () => host.stopping(),
    record: (e) => host.record(e),
    fail: (e) => host.fail(e),
    expanded: (t) => {
      const toRun = t.instances.filter((i) => i.status !== 'done' && i.status !== 'cancelled').map((i) => i.id);
      const provider = agentOf(recipe, t.task)?.provider ?? recipe.provider;
      if (t.task.forEach && warmsCache(recipe.cacheWarmup, provider, toRun.length)) warmup.arm(t.task.id, toRun);
      for (const i of t.instances) ledger.setLimits(`instance:${i.id}`, t.task.budget);
    },
    queue: (t, inst) => {
      if (!gates.holds(t, inst)) host.queue(t, inst);
    },
    taskFailed: (t) => {
      if (t.task.onFailure !== 'fail' || host.stopping()) return;
      host.failFast(`task ${t.task.id} failed (on_failure: fail)`);
    },
    planChanged: () => files.planChanged(),
    boardItems: (t) => board.forEachItems(TaskBoard.forEachExpanded(t.task.id, (id) => host.instances.has(id))),
    pickAttempts: (t) => picks.pickAttempts(t),
  });
  const picks: AttemptPicksDesk = new AttemptPicksDesk({
    recipe,
    store,
    workspaces,
    stopping: () => host.stopping(),
    record: (e) => host.record(e),
    cancel: (id, by) => void desk.handle({ action: 'cancel', instance: id, by }),
    settled: (t) => {
      walk.settle(t);
      host.advance();
    },
    // The repair prompt gets the attempt's handoff summary (instance_done), as any other repair does.
    repair: (t, inst, land, need) =>
      attempts.repair(t, inst, land, need, inst.summary !== undefined ? { summary: inst.summary } : {}),
    judge: (t, group, candidates, prompt) =>
      judgeAttempts(
        { recipe, store, runner, record: (e) => host.record(e) },
        t,
        group,
        candidates,
        t.task.attempts?.judgeAgent ?? t.task.agent ?? '',
        prompt,
      ),
    ...(opts.replay ? { replay: opts.replay.picks } : {}),
  });
  // A gate at the run's end (the publish gate, offered by the layer that composes the run) is one of the gates from the start.
  const endGate = opts.endGate?.({
    runId: store.runId,
    runDir: store.dir,
    recipe,
    env,
    ...(opts.replay ? { replay: opts.replay } : {}),
    record: (e) => host.record(e),
    advance: () => host.advance(),
  });
  const gates = new ApprovalGates(
    {
      runId: store.runId,
      tasks: host.tasks,
      record: (e) => host.record(e),
      queue: (t, inst) => host.queue(t, inst),
      settle: (t) => {
        walk.settle(t);
        host.advance();
      },
    },
    opts.replay,
    endGate,
  );
  // Context windows an agent learns from its server reach the run's other agents and the log.
  const windows = new LearnedWindowBook({
    record: (e) => host.record(e),
    broadcast: (w) => {
      for (const list of host.launches.values()) for (const launch of list) launch.shareWindow(w);
    },
    ...(opts.replay ? { restored: opts.replay.learnedWindows } : {}),
  });
  const attempts: AttemptRunner = new AttemptRunner({
    windows,
    ...(opts.traceparentOf ? { traceparentOf: opts.traceparentOf } : {}),
    ...{ recipe, tasks: host.tasks, runner, workspaces, picks, desk, admission, broker, router, board },
    threads: () => host.threads(),
    ...(opts.executor ? { executor: opts.executor } : {}),
    stopping: () => host.stopping(),
    record: (e) => host.record(e),
    fail: (e) => host.fail(e),
    exhaustBudget: (reason) => host.exhaustBudget(reason),
    retryLater: (t, inst, delayMs) => {
      const timer = setTimeout(() => {
        host.retryTimers.delete(inst.id);
        if (!host.stopping()) host.queue(t, inst);
      }, delayMs);
      host.retryTimers.set(inst.id, timer);
    },
    addRunUsage: (u) => host.addRunUsage(u),
    planChanged: () => files.planChanged(),
  });
  return {
    ...{
      ledger,
      admission,
      broker,
      threadPool,
      warmup,
      router,
      runner,
      workspaces,
      scheduler,
      files,
      desk,
      walk,
      attempts,
    },
    ...{ gates, board, picks },
  };
}
