// The coordinator (main thread): walks the task DAG, expands fan-outs (dynamic ones from the JSON
// output of the tasks they read), admits ready instances through the scheduler (concurrency,
// max_parallel, writes scopes, budget), runs each attempt on a worker thread (or a shell for
// `run:` steps), applies the failure policy, merges the summaries into plan.md, and writes
// everything to the run store. One instance of this class runs one run (or one resume of it).
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
import { createHash } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import type { Piscina } from 'piscina';
import { parseSummary } from '../session/parse-summary.js';
import type { AgentLaunch, LaunchContext } from './agent-launch.js';
import type { ExternalExecutor, InstanceExecutor } from './instance-executor.js';
import { InstanceRunner } from './instance-runner.js';
import { BudgetLedger, type Spend } from './budget.js';
import { ORCHESTRATOR_DEFAULTS } from './defaults.js';
import { backoffDelay, isFailureClass, shouldRetry, type RetryPolicy } from './failure-policy.js';
import { diffSince } from './git-workspace.js';
import { renderNeedsContext, renderPlan } from '../run/merge-summaries.js';
import { MessageRouter } from './message-router.js';
import { parseJsonOutput } from './output-json.js';
import { CacheWarmup, warmsCache } from './cache-warmup.js';
import { PermitBroker } from './permit-broker.js';
import { createWorkerPool, defaultAgentsPerThread, takeWarmPool, threadsNeeded } from './pool.js';
import type { WorkerResult } from './protocol.js';
import { buildPlan, expandTask, lookupModelPrice, resolveInstance, type LoadedAgent, type LoadedRecipe, type LoadedTask } from '../recipe/index.js';
import { instanceOfKey, type ReplayState } from '../run/replay.js';
import { addUsageSummary, zeroUsage, type FailureClass, type RunEventInput, type UsageSummary } from '../run/run-events.js';
import {
  agentFileToDisplay,
  pathFromRoot,
  expressionScope,
  isFailedOrCancelled,
  isTerminal,
  planInput,
  resultFile,
  type InstanceState,
  type RunStatus,
  type TaskState,
} from '../run/run-state.js';
import type { RunStore } from '../run/run-store.js';
import type { ControlAction, ControlReply, RunControl } from '../run/run-control.js';
import { RunControlServer } from './run-control-server.js';
import { didYouMean } from '../recipe/suggest.js';
import { Scheduler, type Admission, type SchedulableInstance } from './scheduler.js';
import { writeGlobs } from './write-scopes.js';

export interface CoordinatorOptions {
  recipe: LoadedRecipe;
  store: RunStore;
  /** State rebuilt from the log when resuming. */
  replay?: ReplayState;
  /** Command-line overrides, recorded in run_start so a resume runs the same way. */
  overrides?: Record<string, unknown>;
  /** Forward streaming deltas (message_update...) into run.jsonl; off by default (they are large). */
  fullEvents?: boolean;
  /** Rate-limit window (default 60 s: `rate_limit` is per minute); tests scale it down. */
  rateWindowMs?: number;
  /** A pool to run on (kept open afterwards); default: a pool sized for this recipe, closed at the end. */
  pool?: Piscina;
  /**
   * Run agents on this executor instead of local worker threads (distributed runs: `--redis`);
   * kept open afterwards. `run:` tasks still run here.
   */
  executor?: ExternalExecutor;
  /**
   * Agents sharing one worker thread (default: the agents that may run at once spread over one
   * thread per CPU core but one, see defaultAgentsPerThread; 1 isolates every agent on its own thread).
   */
  agentsPerThread?: number;
  /** Worker heap limits (default ORCHESTRATOR_DEFAULTS.workerResourceLimits). */
  resourceLimits?: { maxOldGenerationSizeMb?: number; maxYoungGenerationSizeMb?: number };
  /** Environment for expressions, keys and base URL (default process.env). */
  env?: Readonly<Record<string, string | undefined>>;
  /** Aborting it interrupts the run (Ctrl-C): abort messages, then threads terminated after a grace period. */
  signal?: AbortSignal;
  /** Aborting it terminates every worker thread at once (a second Ctrl-C). */
  killSignal?: AbortSignal;
  /**
   * Listen on the run's control socket (`<run>/control.sock`, owner-only) so `orchestrate watch`,
   * `cancel` and `steer` can drive the run from another process (default true). Start the
   * coordinator only while holding the run's lease: a socket file left there is removed as stale.
   */
  controlSocket?: boolean;
  /** Called once the run starts with this run's in-process control (the run's own live view sends through it). */
  onControl?: (control: RunControl) => void;
  /**
   * Resume only: cancelled instances to run again (`orchestrate resume --retry KEY`); a resume
   * keeps every other cancelled instance cancelled. Each key is logged as a `control` retry.
   */
  retry?: readonly string[];
  /** Who asked for `retry` (the control events' `by`). */
  retryBy?: string;
}

export interface RunOutcome {
  status: RunStatus;
  runId: string;
  dir: string;
  usage: UsageSummary;
  durationMs: number;
  planFile: string;
  resultFile: string;
  tasks: TaskState[];
  /** Why the run stopped on its own files (a log or result that could not be written). */
  error?: string;
  /** Another coordinator took the run over: it is running there, so this one must not suggest a resume. */
  leaseLost?: boolean;
}

function retryPolicy(task: LoadedTask): RetryPolicy {
  const r = task.retries;
  return { count: r.count, initialMs: r.backoff.initialMs, maxMs: r.backoff.maxMs, factor: r.backoff.factor, on: r.on.filter(isFailureClass), jitter: ORCHESTRATOR_DEFAULTS.retryJitter };
}

export class Coordinator {
  private readonly recipe: LoadedRecipe;
  private readonly store: RunStore;
  private readonly env: Readonly<Record<string, string | undefined>>;
  private readonly tasks = new Map<string, TaskState>();
  private readonly instances = new Map<string, InstanceState>();
  private readonly launches = new Map<string, AgentLaunch[]>();
  private readonly retryTimers = new Map<string, NodeJS.Timeout>();
  private readonly lastCallTokens = new Map<string, number>();
  private readonly runner: InstanceRunner;
  private readonly ledger: BudgetLedger;
  private readonly broker: PermitBroker;
  /** A wide fan-out's first call goes out alone, so the rest reads the cached prompt prefix. */
  private readonly warmup = new CacheWarmup();
  private readonly router: MessageRouter;
  private readonly scheduler: Scheduler;
  private readonly shellAbort = new AbortController();
  private pool!: Piscina | InstanceExecutor;
  /** Agents may share worker threads (set with the pool; false: each agent isolated on its own thread). */
  private shareThreads = false;
  /** Shared threads terminated by a hard abort, and which agent caused it. */
  private readonly terminatedThreads = new Map<number, string>();
  private ownsPool = false;
  private planTimer: NodeJS.Timeout | undefined;
  /** Threads of one agent each, for instances whose shared thread crashed (made on first use). */
  private isolatedPool: Piscina | undefined;
  /** Shared mode: the agents on each live thread, and the threads that died while shared. */
  private readonly threadAgents = new Map<number, Set<string>>();
  private readonly sharedCrashes = new Set<number>();
  private stopping: undefined | 'fail-fast' | 'budget' | 'interrupted' | 'no-threads';
  private anyTaskFailed = false;
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
  /** Running instances a user cancelled, and by whom: their attempt ends `cancelled`, never retried. */
  private readonly cancelRequests = new Map<string, string>();
  /** The running `run:` steps' own stop switches (a cancel ends that step alone). */
  private readonly shellCancels = new Map<string, AbortController>();
  private controlServer: RunControlServer | undefined;
  /** This run's control in-process (what the control socket carries for other processes). */
  readonly runControl: RunControl = {
    send: async (a) => {
      try {
        return this.control(a);
      } catch (err) {
        return { ok: false, error: `the coordinator could not carry out ${a.action}: ${err instanceof Error ? err.message : String(err)}` };
      }
    },
  };

  constructor(private readonly opts: CoordinatorOptions) {
    this.recipe = opts.recipe;
    this.store = opts.store;
    // Display events are written at the end of the event-loop turn, so a failure can surface there.
    this.store.onWriteError = (err) => {
      if (!this.storageError) this.storageFailed(`cannot write the run log ${this.store.logFile}: ${err.message}`);
    };
    this.env = opts.env ?? process.env;
    this.ledger = new BudgetLedger(this.recipe.budget);
    const rateLimits: Record<string, number> = { ...this.recipe.rateLimit.perModel };
    if (this.recipe.rateLimit.default !== undefined) rateLimits['*'] = this.recipe.rateLimit.default;
    this.broker = new PermitBroker({ rateLimits, budget: this.ledger, windowMs: opts.rateWindowMs, gate: this.warmup });
    this.router = new MessageRouter({
      instancesOf: (task) => {
        const t = this.tasks.get(task);
        if (!t) return undefined;
        return t.task.kind === 'pair' ? t.instances.flatMap((i) => [`${i.id}@worker`, `${i.id}@planner`]) : t.instances.map((i) => i.id);
      },
      hasInstance: (id) => this.instances.has(instanceOfKey(id)),
      isFinished: (id) => {
        const s = this.instances.get(instanceOfKey(id))?.status;
        return s !== undefined && isTerminal(s);
      },
    });
    this.runner = new InstanceRunner({
      recipe: this.recipe,
      store: this.store,
      env: this.env,
      fullEvents: opts.fullEvents ?? false,
      launches: this.launches,
      shellSignal: this.shellAbort.signal,
      shellSignalFor: (inst) => this.shellSignalFor(inst),
      emit: (e) => this.emit(e),
      launchContext: (inst) => this.launchContext(inst),
      contextFor: (t) => this.contextFor(t),
      siblings: () => [...this.instances.values()].map((inst) => ({ task: this.tasks.get(inst.task)!, inst })),
    });
    this.scheduler = new Scheduler({
      concurrency: this.recipe.concurrency,
      admit: (i, running) => this.admit(i, running),
      onRefused: (i, reason) => this.refuse(i, reason),
    });
  }

  // ---- events and files -----------------------------------------------------------------------------

  private emit(e: RunEventInput): void {
    this.store.append(e); // a failed write reaches storageFailed through store.onWriteError
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
    return [...this.tasks.values()].sort((a, b) => a.level - b.level);
  }

  /**
   * plan.md is rewritten as instances finish, at most every planWriteIntervalMs (a wide fan-out
   * would otherwise render the whole plan once per instance: quadratic), and at once at the end.
   */
  private schedulePlanWrite(): void {
    if (this.planTimer) return;
    this.planTimer = setTimeout(() => {
      this.planTimer = undefined;
      if (!this.ending) this.writePlan();
    }, ORCHESTRATOR_DEFAULTS.planWriteIntervalMs);
  }

  private writePlan(status?: string): void {
    if (this.planTimer) clearTimeout(this.planTimer);
    this.planTimer = undefined;
    try {
      this.store.writeFile('plan.md', renderPlan(planInput(this.recipe, this.ordered(), status ?? (this.stopping ? `stopping (${this.stopping})` : 'running'))));
    } catch {
      // plan.md is a view; the log holds the truth and the next instance rewrites it
    }
  }

  // ---- the run ---------------------------------------------------------------------------------------

  async run(): Promise<RunOutcome> {
    const plan = buildPlan(this.recipe, { env: this.env });
    if (!plan.ok) throw new Error(plan.problems.map((p) => `${p.file}:${p.line}:${p.col}: ${p.message}`).join('\n'));
    for (const pt of plan.plan.tasks) {
      const task = this.recipe.tasks.find((t) => t.id === pt.id)!;
      this.tasks.set(task.id, { task, level: pt.level, status: 'waiting', expanded: false, instances: [] });
    }
    const replay = this.opts.replay;
    if (replay) {
      this.restore(replay);
      // A kill between logging an instance done and removing its landed worktree left it behind.
      for (const inst of this.instances.values()) if (inst.status === 'done') await this.runner.dropWorktree(this.tasks.get(inst.task)!, inst);
    } else {
      this.emit({
        type: 'run_start',
        recipe: this.recipe.file,
        name: this.recipe.name,
        recipeHash: recipeHash(this.recipe.file),
        inputs: this.recipe.inputValues,
        plan: plan.plan.tasks.map((t) => ({ task: t.id, keys: t.instances.map((i) => i.id), needs: t.needs, dynamic: t.fanOut === 'dynamic' })),
        ...(this.opts.overrides && Object.keys(this.opts.overrides).length ? { overrides: this.opts.overrides } : {}),
        ...this.budgetField(),
      });
    }
    this.pool = this.opts.executor ?? this.opts.pool ?? this.makePool(plan.plan.instanceCount);
    this.ownsPool = !this.opts.pool && !this.opts.executor;
    // A pool handed in reports its threads' failures to this run too (removed at the end).
    if (this.opts.pool) this.opts.pool.on('error', this.onWorkerError);
    const onSignal = () => this.interrupt();
    const onKill = () => {
      this.interrupt();
      this.kill();
    };
    if (this.opts.signal?.aborted) this.interrupt();
    else this.opts.signal?.addEventListener('abort', onSignal, { once: true });
    this.opts.killSignal?.addEventListener('abort', onKill, { once: true });
    this.writePlan();
    if (this.opts.controlSocket !== false) await this.listenForControl();
    this.opts.onControl?.(this.runControl);
    this.advance();
    await this.finished;
    this.opts.signal?.removeEventListener('abort', onSignal);
    this.opts.killSignal?.removeEventListener('abort', onKill);
    return this.end();
  }

  /** The run budget for run_start / run_resume (live meters read it), when the recipe has one. */
  private budgetField(): { budget?: { usd?: number; tokens?: number } } {
    const b = this.recipe.budget;
    if (b.usd === undefined && b.tokens === undefined) return {};
    return { budget: { ...(b.usd !== undefined ? { usd: b.usd } : {}), ...(b.tokens !== undefined ? { tokens: b.tokens } : {}) } };
  }

  /** Pair instances that may run at once: each needs a second agent slot. */
  private pairSlots(): number {
    return this.recipe.tasks.some((t) => t.kind === 'pair') ? this.recipe.concurrency : 0;
  }

  /**
   * A worker thread's background failure (piscina 'error'), logged instead of crashing the run.
   * Before any agent ever started on a thread it means threads cannot start at all (the worker
   * module fails to load): piscina would keep every task waiting forever, so the waiting agents
   * fail as crashed and nothing new starts. Once a thread has run an agent, a failure is one
   * thread's: its agents' tasks fail by themselves, and an agent about to start is left alone
   * (failing it could leave it running unwatched).
   */
  private readonly onWorkerError = (err: unknown): void => {
    this.emit({ type: 'agent_event', task: '*', key: '*', attempt: 1, event: { type: 'worker_error', error: String(err) } });
    if (this.threadsStarted || this.stopping === 'no-threads' || this.stopping === 'interrupted') return;
    const reason = `worker threads cannot start: ${String(err)}`;
    // Final: a retry would wait for a thread just the same.
    this.stopping = 'no-threads';
    this.stopNewWork(reason);
    for (const list of this.launches.values()) for (const l of list) l.failUnstarted(`crashed: ${reason}`);
  };
  /** Some agent started on a worker thread in this run (the worker module loads). */
  private threadsStarted = false;
  /** Distributed runs: instance_start events waiting for the worker that takes the instance. */
  private readonly pendingStarts = new Map<string, Extract<RunEventInput, { type: 'instance_start' }>>();
  /** Distributed runs: the worker each agent (by key) runs on, to tell a takeover from a first start. */
  private readonly agentWorkers = new Map<string, string>();

  /** A worker process took an agent of `inst`: the deferred instance_start names it; later ones are instance_worker events. */
  private workerStarted(inst: InstanceState, agent: string, worker: string): void {
    const previous = this.agentWorkers.get(`${agent}#${inst.attempt}`);
    this.agentWorkers.set(`${agent}#${inst.attempt}`, worker);
    const start = this.pendingStarts.get(inst.id);
    if (start) {
      this.pendingStarts.delete(inst.id);
      this.emit({ ...start, worker });
      return;
    }
    this.emit({ type: 'instance_worker', task: inst.task, key: inst.id, attempt: inst.attempt, parent: inst.task, agent, worker, ...(previous !== undefined ? { takeover: true } : {}) });
  }

  private makePool(instanceCount: number): Piscina {
    const concurrency = this.recipe.concurrency;
    const pairSlots = this.pairSlots();
    const onError = this.onWorkerError;
    // The CLI's warm threads (startWarmPool) fit the default policy for any recipe.
    const warm = this.opts.agentsPerThread === undefined && this.opts.resourceLimits === undefined ? takeWarmPool() : undefined;
    if (warm) {
      this.shareThreads = true;
      warm.on('error', onError);
      return warm;
    }
    // Shared threads cost isolation: a thread that crashes or runs out of memory takes its agents
    // down together, and each of them is retried from its session (collateral failures always
    // are). --agents-per-thread 1 buys full isolation with a thread (and its start-up) per agent.
    const perThread = Math.max(1, Math.floor(this.opts.agentsPerThread ?? defaultAgentsPerThread(concurrency, pairSlots)));
    this.shareThreads = perThread > 1;
    return createWorkerPool({
      concurrency,
      pairSlots,
      minThreads: Math.max(1, Math.min(threadsNeeded(concurrency, pairSlots, perThread), instanceCount || 1)),
      agentsPerThread: perThread,
      resourceLimits: this.opts.resourceLimits,
      onError,
    });
  }

  private restore(replay: ReplayState): void {
    const changed = replay.start !== undefined && replay.start.recipeHash !== recipeHash(this.recipe.file);
    const overrides = this.opts.overrides && Object.keys(this.opts.overrides).length ? { overrides: this.opts.overrides } : {};
    this.emit({ type: 'run_resume', ...(replay.lastStatus ? { previousStatus: replay.lastStatus } : {}), ...(changed ? { recipeChanged: true } : {}), ...this.budgetField(), ...overrides });
    this.runUsage = replay.spend;
    this.ledger.charge(['run'], { usd: replay.spend.cost, tokens: replay.spend.totalTokens });
    for (const r of replay.instances.values()) {
      const t = this.tasks.get(r.task);
      if (!t) continue;
      this.ledger.charge([`instance:${r.id}`], { usd: r.usage.cost, tokens: r.usage.totalTokens });
      const inst: InstanceState = {
        id: r.id,
        task: r.task,
        index: 0,
        status: r.status === 'done' ? 'done' : r.status === 'cancelled' ? 'cancelled' : 'pending',
        attempt: r.attempt,
        usage: r.usage,
        modifiedFiles: r.modifiedFiles ?? [],
        readFiles: [],
        durationMs: r.durationMs ?? 0,
        sessionFiles: [],
      };
      if (r.status === 'done') {
        inst.restored = true;
        inst.output = r.output;
        if (r.text !== undefined) inst.text = r.text;
        if (r.patchFile) inst.patchFile = r.patchFile;
        if (r.branch) inst.branch = r.branch;
        if (r.applied) inst.applied = true;
        if (r.summary) {
          inst.summaryText = r.summary;
          inst.summary = parseSummary(r.summary);
          inst.readFiles = inst.summary.readFiles;
        }
      } else if (r.error) {
        inst.error = r.error;
        // A cancel is the user's decision: the resume keeps it (a retry through the control channel runs it again).
        if (r.status === 'cancelled') inst.failure = 'cancelled';
      }
      if (r.attemptFailures?.length) inst.attemptFailures = [...r.attemptFailures];
      if (r.unchargedAttempts) inst.unchargedAttempts = r.unchargedAttempts;
      if (r.isolated) inst.isolated = true;
      if (r.git?.baseTree && r.git.repoRoot) inst.git = { root: r.git.repoRoot, commit: r.git.baseCommit, tree: r.git.baseTree, worktree: r.git.worktree };
      this.instances.set(r.id, inst);
    }
    for (const key of this.opts.retry ?? []) this.retryOnResume(key);
  }

  /** `resume --retry KEY`: a cancelled instance runs again with this resume (logged like a live retry). */
  private retryOnResume(key: string): void {
    const inst = this.instances.get(instanceOfKey(key));
    const by = this.opts.retryBy ?? 'resume';
    let error: string | undefined;
    if (!inst) {
      const near = didYouMean(key, [...this.instances.keys()]);
      error = `run ${this.store.runId} has no instance "${key}" in its log${near ? `; did you mean "${near}"?` : ''}`;
    } else if (inst.status !== 'cancelled') {
      error = inst.status === 'done' ? `${inst.id} is done; nothing to retry` : `${inst.id} was not cancelled; a resume runs it again anyway`;
    }
    this.emit({ type: 'control', action: 'retry', instance: key, by, ok: error === undefined, message: error ?? `${inst!.id} runs again with this resume` });
    if (error !== undefined || !inst) return;
    inst.status = 'pending';
    delete inst.failure;
    delete inst.error;
  }

  /** Activates every waiting task whose needs have all settled; skips those a failure blocks. */
  private advance(): void {
    for (const t of this.ordered()) {
      if (t.status !== 'waiting') continue;
      const needs = t.task.needs.map((n) => this.tasks.get(n)!);
      if (!needs.every((n) => n.status === 'done' || n.status === 'failed' || n.status === 'skipped')) continue;
      const blocker = needs.find((n) => n.status === 'skipped' || (n.status === 'failed' && n.task.onFailure === 'fail'));
      if (this.stopping) this.skipTask(t, `not started: the run is stopping (${this.stopping})`);
      else if (blocker) this.skipTask(t, `${blocker.task.id} ${blocker.status === 'skipped' ? 'was skipped' : 'failed'}`);
      else this.activate(t);
    }
    this.checkDone();
  }

  private skipTask(t: TaskState, reason: string): void {
    if (this.stopping === 'interrupted') return;
    t.status = 'skipped';
    t.reason = reason;
    if (!t.expanded) {
      // Unexpanded fan-outs have no instances yet: one entry stands for the whole task.
      const inst = this.newInstance(t, t.task.id, 0);
      t.instances = [inst];
    }
    for (const i of t.instances) if (!isTerminal(i.status)) this.skipInstance(i, reason);
    this.schedulePlanWrite();
  }

  private skipInstance(i: InstanceState, reason: string): void {
    i.status = 'skipped';
    i.error = reason;
    this.emit({ type: 'instance_skipped', task: i.task, key: i.id, attempt: Math.max(1, i.attempt), parent: i.task, reason });
  }

  private newInstance(t: TaskState, id: string, index: number, item?: unknown, key?: string): InstanceState {
    const existing = this.instances.get(id);
    const inst: InstanceState = existing ?? { id, task: t.task.id, index, status: 'pending', attempt: 0, usage: zeroUsage(), modifiedFiles: [], readFiles: [], durationMs: 0, sessionFiles: [] };
    inst.index = index;
    if (item !== undefined) inst.item = item;
    if (key !== undefined) inst.key = key;
    this.instances.set(id, inst);
    return inst;
  }

  private activate(t: TaskState): void {
    const scope = expressionScope(this.recipe, this.tasks, this.env);
    const exp = expandTask(t.task, scope);
    t.status = 'active';
    t.expanded = true;
    if (!exp.ok) {
      const inst = this.newInstance(t, t.task.id, 0);
      t.instances = [inst];
      this.finalFail(inst, 'error', exp.error);
      return;
    }
    t.instances = exp.instances.map((s) => this.newInstance(t, s.id, s.index, s.item, s.key));
    if (t.task.forEach) this.emit({ type: 'task_expanded', task: t.task.id, keys: t.instances.map((i) => i.id) });
    const toRun = t.instances.filter((i) => i.status !== 'done' && i.status !== 'cancelled').map((i) => i.id);
    if (t.task.forEach && warmsCache(this.recipe.cacheWarmup, this.agentOf(t.task)?.provider ?? this.recipe.provider, toRun.length)) this.warmup.arm(t.task.id, toRun);
    this.ledgerLimits(t);
    for (const [n, inst] of t.instances.entries()) {
      if (inst.status === 'done' || inst.status === 'cancelled') continue;
      const r = resolveInstance(t.task, exp.instances[n]!, scope);
      if (!r.ok) {
        this.finalFail(inst, 'error', r.error);
        continue;
      }
      inst.resolved = r.instance;
      inst.resolved.env = { ...this.recipe.env, ...r.instance.env };
      this.queue(t, inst);
    }
    this.settle(t);
  }

  private ledgerLimits(t: TaskState): void {
    for (const i of t.instances) this.ledger.setLimits(`instance:${i.id}`, t.task.budget);
  }

  private queue(t: TaskState, inst: InstanceState): void {
    // A stop (budget, fail-fast) can come while a fan-out is being queued (its first instance
    // refused); the scheduler takes nothing any more, so the rest would wait forever.
    if (this.stopping && this.stopping !== 'interrupted') {
      this.skipInstance(inst, `not started: the run is stopping (${this.stopping})`);
      return;
    }
    inst.status = 'pending';
    this.emit({ type: 'instance_queued', task: t.task.id, key: inst.id, attempt: inst.attempt + 1, parent: t.task.id });
    const sched: SchedulableInstance = {
      id: inst.id,
      task: t.task.id,
      writes: writeGlobs(inst.resolved?.cwd ?? t.task.dir, inst.resolved?.writes ?? []),
      order: t.level,
      threads: t.task.kind === 'pair' ? 2 : 1,
    };
    if (t.task.maxParallel !== undefined) sched.maxParallel = t.task.maxParallel;
    this.scheduler.submit(sched, () => this.runInstance(t, inst));
  }

  // ---- admission (budget reservations) ----------------------------------------------------------------

  private sliceOf(t: LoadedTask, model: string, provider: string): Spend {
    if (t.budget.usd !== undefined || t.budget.tokens !== undefined) return { usd: t.budget.usd ?? 0, tokens: t.budget.tokens ?? 0 };
    return this.callEstimate(undefined, model, provider);
  }

  private admit(s: SchedulableInstance, running: readonly SchedulableInstance[]): Admission {
    if (this.stopping) return { wait: `the run is stopping (${this.stopping})` };
    const lim = this.recipe.budget;
    if (lim.usd === undefined && lim.tokens === undefined) return undefined;
    const t = this.tasks.get(s.task)!.task;
    const agent = this.agentOf(t);
    const need = this.sliceOf(t, agent?.model ?? this.recipe.model, agent?.provider ?? this.recipe.provider);
    // Every running instance may still spend the rest of its slice.
    for (const r of running) {
      const rt = this.tasks.get(r.task)!.task;
      const ra = this.agentOf(rt);
      const slice = this.sliceOf(rt, ra?.model ?? this.recipe.model, ra?.provider ?? this.recipe.provider);
      const spent = this.ledger.spend(`instance:${r.id}`);
      need.usd += Math.max(0, slice.usd - spent.usd);
      need.tokens += Math.max(0, slice.tokens - spent.tokens);
    }
    const v = this.ledger.check(['run'], need);
    if (v.ok) return undefined;
    if (running.length > 0) return { wait: `budget reserved by running instances: ${v.reason}` };
    return { refuse: v.reason };
  }

  private refuse(s: SchedulableInstance, reason: string): void {
    const inst = this.instances.get(s.id);
    if (!inst) return;
    this.finalFail(inst, 'budget', `Budget exhausted before this instance could start: ${reason}`);
    this.exhaustBudget(reason);
    this.settle(this.tasks.get(inst.task)!);
  }

  private callEstimate(key: string | undefined, model: string, provider: string): Spend {
    const last = key ? this.lastCallTokens.get(key) : undefined;
    let tokens = last !== undefined ? Math.ceil(last * ORCHESTRATOR_DEFAULTS.callEstimateGrowth) : ORCHESTRATOR_DEFAULTS.callEstimateTokens;
    // A first call never reserves more than a small share of the run's token budget.
    if (last === undefined && this.recipe.budget.tokens !== undefined) tokens = Math.min(tokens, Math.max(1, Math.floor(this.recipe.budget.tokens / 20)));
    const price = lookupModelPrice(model, provider, this.recipe.models);
    return { tokens, usd: (tokens * price.input) / 1e6 };
  }

  private exhaustBudget(reason: string): void {
    if (this.stopping === 'budget' || this.stopping === 'interrupted') return;
    const first = this.stopping === undefined;
    this.stopping = 'budget';
    if (first) this.emit({ type: 'budget_exhausted', reason });
    this.stopNewWork(`budget exhausted: ${reason}`);
  }

  /** Nothing new starts; what waits is skipped (running instances go on). */
  private stopNewWork(reason: string): void {
    for (const s of this.scheduler.stop()) {
      const inst = this.instances.get(s.id);
      if (inst && !isTerminal(inst.status)) this.skipInstance(inst, `not started: ${reason}`);
    }
    for (const [id, timer] of this.retryTimers) {
      clearTimeout(timer);
      this.retryTimers.delete(id);
      const inst = this.instances.get(id);
      if (inst && !isTerminal(inst.status)) this.finalFail(inst, inst.failure ?? 'error', `${inst.error ?? 'failed'} (not retried: ${reason})`);
    }
    for (const t of this.tasks.values()) this.settle(t);
    this.advance();
  }

  interrupt(): void {
    if (this.stopping === 'interrupted') return;
    this.stopping = 'interrupted';
    this.scheduler.stop();
    this.broker.drain('the run was interrupted');
    for (const [id, timer] of this.retryTimers) {
      clearTimeout(timer);
      this.retryTimers.delete(id);
      const inst = this.instances.get(id);
      if (inst) inst.status = 'interrupted';
    }
    this.shellAbort.abort();
    for (const list of this.launches.values()) for (const l of list) l.abort('aborted: the run was interrupted');
    this.checkDone();
  }

  // ---- driving the live run (cancel / steer / retry; see run-control.ts) ----------------------------------

  /** Listens on the control socket; a run whose socket cannot be made goes on without it (the log says why). */
  private async listenForControl(): Promise<void> {
    try {
      this.controlServer = await RunControlServer.start({ runDir: this.store.dir, handle: (a) => this.control(a) });
    } catch (err) {
      this.emit({ type: 'agent_event', task: '*', key: '*', attempt: 1, event: { type: 'control_unavailable', error: err instanceof Error ? err.message : String(err) } });
    }
  }

  /**
   * Carries out one action on the live run (the socket server and the run's own live view call
   * it). Every action, accepted or refused, is logged as a `control` event before its effects.
   */
  control(a: ControlAction): ControlReply {
    // A read, not an action: nothing logged.
    if (a.action === 'peek') return this.peek(a.instance);
    const by = a.by?.trim() || 'unknown';
    if (this.ending || this.done) {
      const next = a.action === 'retry' ? `; failed instances run again with: orchestrate resume ${this.store.runId} (a cancelled one: orchestrate resume ${this.store.runId} --retry ${a.instance})` : '';
      return { ok: false, error: `run ${this.store.runId} has ended${next}` };
    }
    const decided = this.decideControl(a, by);
    this.emit({
      type: 'control',
      action: a.action,
      ...(a.action !== 'cancel_run' ? { instance: a.instance } : {}),
      by,
      ...(a.action === 'steer' ? { text: a.text } : {}),
      ok: decided.ok,
      message: decided.ok ? decided.message : decided.error,
    });
    if (!decided.ok) return { ok: false, error: decided.error };
    decided.apply();
    return { ok: true, message: decided.message };
  }

  /**
   * The text an instance's agent is writing now ('' when none); keeps that agent streaming it
   * for a while (AgentLaunch.peek). A pair's key: the member that wrote last; a member's key: it.
   */
  private peek(key: string): ControlReply {
    if (this.ending || this.done) return { ok: false, error: `run ${this.store.runId} has ended` };
    const found = this.controlTarget(key);
    if ('error' in found) return { ok: false, error: found.error };
    const member = key.includes('@') ? key : undefined;
    let best = { text: '', at: -1 };
    for (const l of this.launches.get(found.inst.id) ?? []) {
      if (member !== undefined && l.ref.key !== member) continue;
      const p = l.peek();
      if (p.text !== '' && p.at > best.at) best = p;
    }
    return { ok: true, message: best.text };
  }

  private decideControl(a: Exclude<ControlAction, { action: 'peek' }>, by: string): { ok: true; message: string; apply: () => void } | { ok: false; error: string } {
    if (a.action === 'cancel_run') {
      if (this.stopping === 'interrupted') return { ok: false, error: `run ${this.store.runId} is already being interrupted` };
      return {
        ok: true,
        message: `interrupting run ${this.store.runId}: agents stop with their sessions kept; continue it with: orchestrate resume ${this.store.runId}`,
        apply: () => this.interrupt(),
      };
    }
    const found = this.controlTarget(a.instance);
    if ('error' in found) return { ok: false, error: found.error };
    const { inst, t } = found;
    if (a.action === 'cancel') return this.decideCancel(t, inst, by);
    if (a.action === 'steer') return this.decideSteer(t, inst, a.instance, a.text);
    return this.decideRetry(t, inst);
  }

  /** The instance a key names (a pair member's key names its pair), or why there is none. */
  private controlTarget(key: string): { inst: InstanceState; t: TaskState } | { error: string } {
    const inst = this.instances.get(instanceOfKey(key));
    if (inst) return { inst, t: this.tasks.get(inst.task)! };
    const waiting = this.tasks.get(key);
    if (waiting) return { error: `task ${key} has not started yet (it waits for ${waiting.task.needs.join(', ') || 'its turn'}); its instances are not known until it does` };
    const known = [...this.instances.keys()];
    const near = didYouMean(key, known);
    const close = near ? [near] : known.filter((k) => k.includes(key) || key.includes(k));
    const hint = close.length ? `did you mean ${close.slice(0, 5).map((k) => `"${k}"`).join(', ')}?` : known.length ? `instances: ${known.slice(0, 12).join(', ')}${known.length > 12 ? ', ...' : ''}` : 'no instance has started yet';
    return { error: `run ${this.store.runId} has no instance "${key}"; ${hint}` };
  }

  private decideCancel(t: TaskState, inst: InstanceState, by: string): { ok: true; message: string; apply: () => void } | { ok: false; error: string } {
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
        if (this.cancelRequests.has(id)) return { ok: false, error: `${id} is already being cancelled (by ${this.cancelRequests.get(id)})` };
        return {
          ok: true,
          message: t.task.kind === 'run' ? `cancelling ${id}: its command is stopped; it ends cancelled, and the run goes on` : `cancelling ${id}: its agent is asked to stop; it ends cancelled with its session kept, and the run goes on`,
          apply: () => {
            this.cancelRequests.set(id, by);
            this.abortLaunches(id, by);
            this.shellCancels.get(id)?.abort();
          },
        };
      case 'retrying':
      case 'pending':
        return {
          ok: true,
          message: `cancelled ${id} (${inst.status === 'retrying' ? 'waiting to retry' : 'not started'}); the run goes on`,
          apply: () => {
            const timer = this.retryTimers.get(id);
            if (timer) clearTimeout(timer);
            this.retryTimers.delete(id);
            this.scheduler.cancelWaiting((x) => x.id === id);
            this.finalFail(inst, 'cancelled', `cancelled by ${by}`, 'cancelled');
            this.settle(t);
            this.advance();
          },
        };
    }
  }

  /** A `run:` step's signal: the run's (interrupt) or its own (cancel); already aborted when cancelled before it began. */
  private shellSignalFor(inst: InstanceState): AbortSignal {
    const own = new AbortController();
    this.shellCancels.set(inst.id, own);
    if (this.cancelRequests.has(inst.id)) own.abort();
    return AbortSignal.any([this.shellAbort.signal, own.signal]);
  }

  private abortLaunches(id: string, by: string): void {
    for (const l of this.launches.get(id) ?? []) l.abort(`cancelled: by ${by}`);
  }

  private decideSteer(t: TaskState, inst: InstanceState, key: string, text: string): { ok: true; message: string; apply: () => void } | { ok: false; error: string } {
    if (inst.status !== 'running') return { ok: false, error: `${inst.id} is not running (${inst.status}); only a running agent can be steered` };
    if (t.task.kind === 'run') return { ok: false, error: `${inst.id} is a run: step, not an agent; it cannot be steered` };
    // A pair is steered through its worker unless a member is named.
    const target = key.includes('@') ? key : t.task.kind === 'pair' ? `${inst.id}@worker` : inst.id;
    if (!this.router.runningIds.includes(target)) return { ok: false, error: `${target} has no running agent right now (starting, or between attempts); try again in a moment` };
    return {
      ok: true,
      message: `delivered to ${target}: the agent reads it after its current step`,
      apply: () => {
        this.router.send('user', target, text);
      },
    };
  }

  private decideRetry(t: TaskState, inst: InstanceState): { ok: true; message: string; apply: () => void } | { ok: false; error: string } {
    if (inst.status !== 'failed' && inst.status !== 'cancelled') return { ok: false, error: `${inst.id} is ${inst.status}; only a failed or cancelled instance can be retried` };
    if (this.stopping) return { ok: false, error: `run ${this.store.runId} is stopping (${this.stopping}); nothing new starts. Once it has ended: orchestrate resume ${this.store.runId}` };
    if (!inst.resolved) return { ok: false, error: `${inst.id} failed before it could start (${inst.error ?? 'unknown'}); fix the recipe, then: orchestrate resume ${this.store.runId}` };
    return {
      ok: true,
      message: `retrying ${inst.id}: attempt ${inst.attempt + 1} continues from its session`,
      apply: () => {
        // Its task settles again when the new attempt ends; dependants already skipped stay skipped (a resume runs them).
        t.status = 'active';
        delete t.reason;
        delete inst.failure;
        delete inst.error;
        this.cancelRequests.delete(inst.id);
        this.anyTaskFailed = [...this.tasks.values()].some((x) => x.status === 'failed');
        this.queue(t, inst);
      },
    };
  }

  // ---- one instance --------------------------------------------------------------------------------------

  private agentOf(t: LoadedTask): LoadedAgent | undefined {
    const name = t.agent ?? t.pair?.worker;
    return name ? this.recipe.agents[name] : undefined;
  }

  private async runInstance(t: TaskState, inst: InstanceState): Promise<void> {
    this.inflight++;
    try {
      if (inst.status === 'cancelled') return;
      if (this.stopping) {
        if (this.stopping !== 'interrupted') this.skipInstance(inst, `not started: the run is stopping (${this.stopping})`);
        return;
      }
      inst.attempt++;
      inst.status = 'running';
      inst.startedAt ??= Date.now();
      const attemptStart = Date.now();
      const prepError = await this.runner.prepareWorkspace(t, inst);
      const resumedFromLeaf = t.task.kind !== 'run' && this.runner.sessionFilesOf(t, inst).some((f) => existsSync(f));
      inst.sessionFiles = t.task.kind === 'run' ? [] : this.runner.sessionFilesOf(t, inst);
      const start: Extract<RunEventInput, { type: 'instance_start' }> = {
        type: 'instance_start',
        task: t.task.id,
        key: inst.id,
        attempt: inst.attempt,
        parent: t.task.id,
        cwd: inst.workCwd ?? inst.resolved!.cwd,
        ...(inst.sessionFiles[0] ? { sessionFile: inst.sessionFiles[0] } : {}),
        ...(resumedFromLeaf ? { resumedFromLeaf } : {}),
        ...(inst.git ? { baseTree: inst.git.tree, repoRoot: inst.git.root, ...(inst.git.commit ? { baseCommit: inst.git.commit } : {}), ...(inst.git.worktree ? { worktree: inst.git.worktree } : {}) } : {}),
      };
      // Distributed runs: instance_start waits for the worker that takes the agent, so it can name it.
      const remote = this.opts.executor !== undefined && t.task.kind !== 'run' && !prepError;
      if (remote) this.pendingStarts.set(inst.id, start);
      else this.emit(start);
      let result: WorkerResult;
      try {
        const cancelledBy = this.cancelRequests.get(inst.id);
        if (cancelledBy !== undefined) result = { ok: false, failure: 'cancelled', error: `cancelled by ${cancelledBy}`, usage: zeroUsage() };
        else if (prepError) result = { ok: false, failure: 'error', error: prepError, usage: zeroUsage() };
        else result = await this.runner.run(t, inst);
      } finally {
        // No worker ever took it (the run stopped while it was queued): the start is logged all the same.
        const pending = this.pendingStarts.get(inst.id);
        if (pending) {
          this.pendingStarts.delete(inst.id);
          this.emit(pending);
        }
      }
      inst.usage = addUsageSummary(inst.usage, result.usage);
      inst.durationMs += Date.now() - attemptStart;
      // A cancel that came too late (the attempt had already succeeded) changes nothing.
      if (result.ok) {
        this.cancelRequests.delete(inst.id);
        await this.complete(t, inst, result);
      } else this.failAttempt(t, inst, result);
    } catch (err) {
      // A bug in the coordinator must not hang the run: the instance fails with the reason.
      this.finalFail(inst, 'error', `coordinator error: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}`);
    } finally {
      this.shellCancels.delete(inst.id);
      this.inflight--;
      this.settle(t);
      this.advance();
    }
  }

  private contextFor(t: TaskState): string | undefined {
    if (t.task.context !== 'summaries' || t.task.needs.length === 0) return undefined;
    return renderNeedsContext(planInput(this.recipe, this.ordered()), t.task.needs) || undefined;
  }

  /** The pool `inst` runs on: the shared one, or one thread per agent once its shared thread crashed. */
  private poolFor(inst: InstanceState): { pool: Piscina | InstanceExecutor; shared: boolean } {
    if (!this.shareThreads || !inst.isolated) return { pool: this.pool, shared: this.shareThreads };
    this.isolatedPool ??= createWorkerPool({
      concurrency: this.recipe.concurrency,
      pairSlots: this.pairSlots(),
      minThreads: 0,
      agentsPerThread: 1,
      resourceLimits: this.opts.resourceLimits,
      onError: this.onWorkerError,
    });
    return { pool: this.isolatedPool, shared: false };
  }

  private launchContext(inst: InstanceState): LaunchContext {
    const { pool, shared } = this.poolFor(inst);
    return {
      pool,
      shareThreads: shared,
      terminatedThreads: this.terminatedThreads,
      threadAgents: this.threadAgents,
      sharedCrashes: this.sharedCrashes,
      broker: this.broker,
      router: this.router,
      emit: (e) => {
        if (e.type === 'call_usage') this.runUsage = addUsageSummary(this.runUsage, { ...e.usage, turns: 1 });
        this.emit(e);
      },
      estimate: (ref, model) => {
        const t = this.tasks.get(ref.task)!.task;
        return this.callEstimate(ref.key, model, this.agentOf(t)?.provider ?? this.recipe.provider);
      },
      onUsage: (ref, _model, tokens) => this.lastCallTokens.set(ref.key, tokens),
      onStarted: (ref, worker) => {
        this.threadsStarted = true;
        // Cancelled before its agent was running: stop it now that it can hear.
        if (this.cancelRequests.has(inst.id)) this.abortLaunches(inst.id, this.cancelRequests.get(inst.id)!);
        if (worker !== undefined) this.workerStarted(inst, ref.key, worker);
      },
      onBudgetDenied: (_ref, reason) => {
        if (/^run budget/.test(reason)) this.exhaustBudget(reason);
      },
    };
  }

  private async complete(t: TaskState, inst: InstanceState, result: Extract<WorkerResult, { ok: true }>): Promise<void> {
    inst.text = result.text;
    if (t.task.output === 'json') {
      const parsed = parseJsonOutput(result.text, t.task.outputSchema);
      inst.output = parsed.ok ? parsed.value : result.text;
    } else inst.output = t.task.kind === 'run' ? result.text.trimEnd() : result.text;
    if (result.summary) {
      inst.summaryText = result.summary;
      inst.summary = parseSummary(result.summary);
    }
    const modified = new Set<string>();
    for (const f of inst.summary?.modifiedFiles ?? []) modified.add(agentFileToDisplay(this.recipe.dir, inst, f));
    inst.readFiles = (inst.summary?.readFiles ?? []).map((f) => agentFileToDisplay(this.recipe.dir, inst, f));
    let landed: { branch?: string; applied?: boolean } = {};
    if (inst.git) {
      const cwd = inst.workCwd ?? inst.resolved!.cwd;
      const d = await this.runner.withGitLock(inst.git.root, () => diffSince(cwd, inst.git!.tree));
      if (d && d.patch.trim()) {
        inst.patchFile = `patches/${inst.id}.diff`;
        try {
          this.store.writeFile(inst.patchFile, d.patch);
        } catch (err) {
          this.storageFailed(`cannot write ${join(this.store.dir, inst.patchFile)}: ${err instanceof Error ? err.message : String(err)}`);
        }
        for (const f of d.files) modified.add(pathFromRoot(this.recipe.dir, join(inst.git.root, f)));
      }
      // isolation: worktree with merge: branch or apply: the work lands before the instance is done.
      const land = await this.runner.landWork(t, inst, d?.patch, join(this.store.dir, `patches/${inst.id}.diff`), result.text);
      if (!land.ok) {
        this.failAttempt(t, inst, { ok: false, failure: 'patch_conflict', error: land.error, usage: zeroUsage() });
        return;
      }
      if (land.branch) landed = { branch: land.branch };
      else if (land.applied) landed = { applied: true };
      Object.assign(inst, landed);
    }
    inst.modifiedFiles = [...modified].sort();
    inst.status = 'done';
    delete inst.failure;
    delete inst.error;
    this.emit({
      type: 'instance_done',
      task: t.task.id,
      key: inst.id,
      attempt: inst.attempt,
      parent: t.task.id,
      output: inst.output ?? null,
      text: result.text,
      usage: inst.usage,
      ...(result.summary ? { summary: result.summary } : {}),
      ...(inst.modifiedFiles.length ? { modifiedFiles: inst.modifiedFiles } : {}),
      ...(inst.patchFile ? { patchFile: inst.patchFile } : {}),
      ...landed,
      durationMs: inst.durationMs,
      ...(result.rounds !== undefined ? { rounds: result.rounds } : {}),
      ...(result.approved !== undefined ? { approved: result.approved } : {}),
    });
    this.schedulePlanWrite();
    await this.runner.dropWorktree(t, inst);
  }

  private failAttempt(t: TaskState, inst: InstanceState, result: Extract<WorkerResult, { ok: false }>): void {
    const failure: FailureClass = isFailureClass(result.failure) ? result.failure : 'error';
    const cancelledBy = this.cancelRequests.get(inst.id);
    if (cancelledBy !== undefined) {
      this.cancelRequests.delete(inst.id);
      this.finalFail(inst, 'cancelled', `cancelled by ${cancelledBy}`, 'cancelled');
      return;
    }
    if (this.stopping === 'interrupted') {
      // Not a failure of the work: resume continues it from its session.
      inst.status = 'interrupted';
      inst.error = 'the run was interrupted';
      return;
    }
    inst.failure = failure;
    inst.error = result.error;
    recordAttemptFailure(inst, failure, result.error);
    const policy = retryPolicy(t.task);
    // Not this instance's doing: a shared thread stopped for another agent (collateral), or a
    // shared thread that crashed, where nobody can tell which agent did it. Either way it gets
    // another attempt that its retry policy does not count, continuing from its session; after
    // a crash it runs on a thread of its own, where a crash is its own.
    const uncharged = result.collateral === true || result.sharedCrash === true;
    if (uncharged) inst.unchargedAttempts = (inst.unchargedAttempts ?? 0) + 1;
    const isolate = result.sharedCrash === true && !inst.isolated;
    if (isolate) inst.isolated = true;
    const charged = inst.attempt - (inst.unchargedAttempts ?? 0);
    if (!this.stopping && (uncharged || shouldRetry(policy, failure, charged))) {
      const delayMs = backoffDelay(policy, Math.max(1, charged));
      inst.status = 'retrying';
      this.emit({
        type: 'instance_retry', task: t.task.id, key: inst.id, attempt: inst.attempt, parent: t.task.id, failure, error: result.error, delayMs,
        ...(uncharged ? { uncharged: true } : {}),
        ...(isolate ? { isolated: true } : {}),
      });
      this.retryTimers.set(
        inst.id,
        setTimeout(() => {
          this.retryTimers.delete(inst.id);
          if (this.stopping) return;
          this.queue(t, inst);
        }, delayMs),
      );
      return;
    }
    this.finalFail(inst, failure, result.error);
    if (failure === 'budget' && /run budget/.test(result.error)) this.exhaustBudget(result.error.replace(/^Budget exhausted:\s*/, ''));
  }

  private finalFail(inst: InstanceState, failure: FailureClass, error: string, status: 'failed' | 'cancelled' = 'failed'): void {
    inst.status = status;
    inst.failure = failure;
    inst.error = error;
    recordAttemptFailure(inst, failure, error);
    this.emit({ type: 'instance_failed', task: inst.task, key: inst.id, attempt: Math.max(1, inst.attempt), parent: inst.task, failure, error, final: true, usage: inst.usage, durationMs: inst.durationMs });
    const t = this.tasks.get(inst.task)!;
    const failed = t.instances.filter((i) => isFailedOrCancelled(i.status)).length;
    // A fan-out past max_failed cancels its instances that have not started.
    if (t.task.maxFailed !== undefined && failed > t.task.maxFailed) {
      for (const s of this.scheduler.cancelWaiting((x) => x.task === t.task.id)) {
        const i = this.instances.get(s.id);
        if (i && !isTerminal(i.status)) this.skipInstance(i, `cancelled: ${t.task.id} has ${failed} failed instances (max_failed ${t.task.maxFailed})`);
      }
    }
    this.schedulePlanWrite();
  }

  /** Marks a task done or failed once all its instances have settled. */
  private settle(t: TaskState): void {
    if (t.status !== 'active' || !t.instances.every((i) => isTerminal(i.status))) return;
    const failed = t.instances.filter((i) => isFailedOrCancelled(i.status)).length;
    const tolerated = t.task.maxFailed ?? 0;
    if (failed > tolerated) {
      t.status = 'failed';
      this.anyTaskFailed = true;
      if (t.task.onFailure === 'fail' && !this.stopping) {
        this.stopping = 'fail-fast';
        this.stopNewWork(`task ${t.task.id} failed (on_failure: fail)`);
      }
    } else t.status = 'done';
    this.schedulePlanWrite();
  }

  private checkDone(): void {
    const allSettled = [...this.tasks.values()].every((t) => t.status === 'done' || t.status === 'failed' || t.status === 'skipped');
    const idle = this.inflight === 0 && this.launches.size === 0 && this.retryTimers.size === 0;
    if ((allSettled && idle) || (this.stopping === 'interrupted' && idle)) {
      this.done = true;
      this.finish();
    }
  }

  private async end(): Promise<RunOutcome> {
    this.ending = true;
    await this.controlServer?.close().catch(() => undefined);
    let status: RunStatus = this.storageError
      ? 'failed'
      : this.stopping === 'interrupted'
        ? 'interrupted'
        : this.stopping === 'budget' ? 'budget_exhausted' : this.anyTaskFailed || [...this.instances.values()].some((i) => isFailedOrCancelled(i.status)) ? 'failed' : 'succeeded';
    this.broker.close();
    if (this.ownsPool && 'destroy' in this.pool) await this.pool.destroy().catch(() => undefined);
    else this.opts.pool?.off('error', this.onWorkerError);
    await this.isolatedPool?.destroy().catch(() => undefined);
    const endedAt = Date.now();
    this.writePlan(status);
    const result = resultFile({ runId: this.store.runId, recipe: this.recipe, status, startedAt: this.startedAt, endedAt, usage: this.runUsage, tasks: this.ordered(), runDir: this.store.dir });
    const resultPath = join(this.store.dir, 'result.json');
    try {
      this.store.writeFile('result.json', `${JSON.stringify(result, null, 2)}\n`);
    } catch (err) {
      this.storageError ??= `cannot write ${resultPath}: ${err instanceof Error ? err.message : String(err)}`;
    }
    this.emit({ type: 'run_end', status, usage: this.runUsage, durationMs: endedAt - this.startedAt });
    // A record that could not be completed fails the run, whatever the agents did.
    if (this.storageError) status = 'failed';
    return {
      status,
      runId: this.store.runId,
      dir: this.store.dir,
      usage: this.runUsage,
      durationMs: endedAt - this.startedAt,
      planFile: join(this.store.dir, 'plan.md'),
      resultFile: resultPath,
      tasks: this.ordered(),
      ...(this.storageError ? { error: `${this.storageError}. The run was stopped; what was written before is intact. Fix the disk, then: orchestrate resume ${this.store.dir}` } : {}),
    };
  }

  /** Terminates every thread now (a second Ctrl-C). */
  kill(): void {
    for (const list of this.launches.values()) for (const l of list) l.kill('aborted: the run was killed');
  }
}

/** Notes why an attempt failed (once per attempt: a later "not retried" note keeps the first cause). */
function recordAttemptFailure(inst: InstanceState, failure: FailureClass, error: string): void {
  const attempt = Math.max(1, inst.attempt);
  const list = (inst.attemptFailures ??= []);
  if (list.at(-1)?.attempt !== attempt) list.push({ attempt, failure, error });
}

function recipeHash(file: string): string {
  try {
    return createHash('sha256').update(readFileSync(resolve(file))).digest('hex').slice(0, 16);
  } catch {
    return 'unknown';
  }
}
