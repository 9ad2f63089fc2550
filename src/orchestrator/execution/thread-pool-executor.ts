// The local InstanceExecutor: agents run on this process's worker threads (piscina, pool.ts),
// the other side of the contract the Redis executor implements for workers elsewhere
// (instance-executor.ts). Besides running a task it owns the thread policy of one run:
// - how many agents share a thread (shared threads cost isolation: a thread that crashes or runs
//   out of memory takes its agents down together, each retried from its session; 1 per thread
//   buys full isolation with a thread start-up per agent);
// - after a shared thread crashed, its instances run on threads of their own (a second pool,
//   made on first use), where a crash can only be their own;
// - a background failure of a thread before any agent ever started means threads cannot start
//   at all (the worker module fails to load): the run is told once (onThreadsCannotStart).
import type { MessagePort } from 'node:worker_threads';
import type { Piscina } from 'piscina';
import type { InstanceExecutor } from './instance-executor.js';
import type { InstanceTask } from './instance-task.js';
import { createWorkerPool, defaultAgentsPerThread, takeWarmPool, threadsNeeded } from './pool.js';

export interface ThreadPoolOptions {
  concurrency: number;
  /** Pair instances that may run at once: each needs a second agent slot. */
  pairSlots: number;
  /** Instances the run has at start (no more threads than that are started up front). */
  instanceCount: number;
  /** A pool to run on (kept open afterwards); default: a pool sized for the run, closed by close(). */
  pool?: Piscina;
  agentsPerThread?: number;
  resourceLimits?: { maxOldGenerationSizeMb?: number; maxYoungGenerationSizeMb?: number };
  /** Every background failure of a thread (logged by the run). */
  onThreadError(err: unknown): void;
  /** Threads failed before any agent started on one: they cannot start at all. */
  onThreadsCannotStart(reason: string): void;
}

/** Where one agent runs: the executor, whether it shares threads, and the shared-thread bookkeeping of the run. */
export interface Placement {
  pool: InstanceExecutor;
  shareThreads: boolean;
  terminatedThreads?: Map<number, string>;
  threadAgents?: Map<number, Set<string>>;
  sharedCrashes?: Set<number>;
}

/** One piscina pool as an InstanceExecutor (piscina's run() is the contract; terminateThread ends one thread). */
class PoolExecutor implements InstanceExecutor {
  constructor(readonly pool: Piscina) {}
  run(task: InstanceTask, options: { transferList: MessagePort[]; signal?: AbortSignal }): Promise<unknown> {
    return this.pool.run(task, options);
  }
  terminateThread(threadId: number): boolean {
    const worker = this.pool.threads.find((t) => t.threadId === threadId);
    if (!worker) return false;
    void worker.terminate();
    return true;
  }
}

export class ThreadPoolExecutor implements InstanceExecutor {
  private readonly shared: PoolExecutor;
  private isolatedPool: PoolExecutor | undefined;
  private readonly ownsPool: boolean;
  /** Agents may share worker threads (false: each agent isolated on its own thread). */
  readonly shareThreads: boolean;
  /** Shared threads terminated by a hard abort, and which agent caused it. */
  private readonly terminatedThreads = new Map<number, string>();
  /** Shared mode: the agents on each live thread, and the threads that died while shared. */
  private readonly threadAgents = new Map<number, Set<string>>();
  private readonly sharedCrashes = new Set<number>();
  /** Some agent started on a worker thread (the worker module loads). */
  private threadsStarted = false;
  private cannotStart = false;

  constructor(private readonly opts: ThreadPoolOptions) {
    if (opts.pool) {
      // A pool handed in reports its threads' failures to this run too (removed by close()).
      opts.pool.on('error', this.onError);
      this.shared = new PoolExecutor(opts.pool);
      this.shareThreads = false;
      this.ownsPool = false;
      return;
    }
    this.ownsPool = true;
    // The CLI's warm threads (startWarmPool) fit the default policy for any recipe.
    const warm = opts.agentsPerThread === undefined && opts.resourceLimits === undefined ? takeWarmPool() : undefined;
    if (warm) {
      warm.on('error', this.onError);
      this.shared = new PoolExecutor(warm);
      this.shareThreads = true;
      return;
    }
    const perThread = Math.max(
      1,
      Math.floor(opts.agentsPerThread ?? defaultAgentsPerThread(opts.concurrency, opts.pairSlots)),
    );
    this.shareThreads = perThread > 1;
    this.shared = new PoolExecutor(
      createWorkerPool({
        concurrency: opts.concurrency,
        pairSlots: opts.pairSlots,
        minThreads: Math.max(
          1,
          Math.min(threadsNeeded(opts.concurrency, opts.pairSlots, perThread), opts.instanceCount || 1),
        ),
        agentsPerThread: perThread,
        resourceLimits: opts.resourceLimits,
        onError: this.onError,
      }),
    );
  }

  run(task: InstanceTask, options: { transferList: MessagePort[]; signal?: AbortSignal }): Promise<unknown> {
    return this.shared.run(task, options);
  }

  /** An agent started on a thread: later thread failures are that thread's, not the module's. */
  started(): void {
    this.threadsStarted = true;
  }

  /** Where an agent of an instance runs: the shared pool, or a thread of its own once its shared thread crashed. */
  placement(isolated: boolean | undefined): Placement {
    const book = {
      terminatedThreads: this.terminatedThreads,
      threadAgents: this.threadAgents,
      sharedCrashes: this.sharedCrashes,
    };
    if (!this.shareThreads || !isolated) return { pool: this.shared, shareThreads: this.shareThreads, ...book };
    this.isolatedPool ??= new PoolExecutor(
      createWorkerPool({
        concurrency: this.opts.concurrency,
        pairSlots: this.opts.pairSlots,
        minThreads: 0,
        agentsPerThread: 1,
        resourceLimits: this.opts.resourceLimits,
        onError: this.onError,
      }),
    );
    return { pool: this.isolatedPool, shareThreads: false, ...book };
  }

  /** Ends the threads this executor made (a pool handed in stays open). */
  async close(): Promise<void> {
    if (this.ownsPool) await this.shared.pool.destroy().catch(() => undefined);
    else this.opts.pool?.off('error', this.onError);
    await this.isolatedPool?.pool.destroy().catch(() => undefined);
  }

  /**
   * A worker thread's background failure (piscina 'error'), logged instead of crashing the run.
   * Before any agent ever started it means threads cannot start: piscina would keep every task
   * waiting forever. Once a thread has run an agent, a failure is one thread's: its agents fail
   * by themselves, and an agent about to start is left alone (failing it could leave it unwatched).
   */
  private readonly onError = (err: unknown): void => {
    this.opts.onThreadError(err);
    if (this.threadsStarted || this.cannotStart) return;
    this.cannotStart = true;
    this.opts.onThreadsCannotStart(`worker threads cannot start: ${String(err)}`);
  };
}
