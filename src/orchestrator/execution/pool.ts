// The worker-thread pool (piscina). One thread runs one agent at a time; threads stay warm
// between instances. Sizing rule: a planner/worker pair needs both members running at once (they
// wait on each other over a MessageChannel), so the pool always has a thread for every agent the
// scheduler may run at the same time: concurrency + one extra per pair slot. With fewer threads a
// pair member would sit in piscina's queue behind its partner, forever.
import { availableParallelism } from 'node:os';
import { fileURLToPath } from 'node:url';
import { Piscina } from 'piscina';
import { ORCHESTRATOR_DEFAULTS } from '../defaults.js';

/** The worker file next to this module: .ts under tsx/vitest, .js from dist/. */
export function siblingWorker(metaUrl: string, base: string): { isTs: boolean; href: string } {
  const isTs = fileURLToPath(metaUrl).endsWith('.ts');
  return { isTs, href: new URL(`./${base}${isTs ? '.ts' : '.js'}`, metaUrl).href };
}

/**
 * Node options for the worker threads. A .js worker inherits the coordinator's (undefined: Node
 * copies them itself, and skips the V8 and per-process ones a thread cannot take; passing
 * process.execArgv explicitly made `node --max-old-space-size=4096 orchestrate ...` fail at the
 * first thread). A .ts worker (tests, `npm run dev`) needs tsx's loader in its thread, since Node
 * 20 cannot strip types: an explicit list, without inspector flags.
 */
export function workerExecArgv(isTs: boolean): string[] | undefined {
  if (!isTs) return undefined;
  const inherited = process.execArgv.filter((a) => !a.startsWith('--inspect'));
  return inherited.some((a) => a.includes('tsx')) ? inherited : [...inherited, '--import', 'tsx'];
}

export interface WorkerPoolOptions {
  /** Agents that may run at once (task instances; a pair counts as one). */
  concurrency: number;
  /** Pair instances that may run at once (each needs a second thread). */
  pairSlots?: number;
  /** Heap limits per thread (default: 512 MB for one agent, 4 GB for a shared thread); exceeding them fails the instance as `crashed`, not the run. */
  resourceLimits?: { maxOldGenerationSizeMb?: number; maxYoungGenerationSizeMb?: number };
  /** Worker module (default: the thread entry, ../worker/worker-entry.cjs from this file's folder; see workerEntry). */
  filename?: string;
  /** Threads created up front (default: all of them, so instances start on warm threads). */
  minThreads?: number;
  /** Where a thread's background failure is reported; without a listener piscina would crash the process. */
  onError?: (err: unknown) => void;
  /**
   * Agents sharing one thread (1 = each agent isolated; coordinator default: defaultAgentsPerThread). More saves memory (a heap of ~20 MB per thread) and
   * thread start-ups, at the cost of isolation: a thread that crashes or runs out of memory takes
   * every agent on it down (each is retried by its own policy); a thread terminated because one
   * agent ignored an abort fails the others as collateral, which is always retried.
   */
  agentsPerThread?: number;
}

/**
 * Worker threads for the default policy: one per CPU core but one, since the coordinator's own
 * thread keeps a core busy with every agent's events, permits and the run log (at least one,
 * at most workerThreadsMax). Agents spend their time waiting on the model, so more threads than
 * that add only start-up (each thread loads its own copy of every module, ~150 ms of CPU) and
 * memory (~20 MB each), not speed.
 */
export function defaultThreadCount(cores = availableParallelism()): number {
  return Math.max(1, Math.min(cores - 1, ORCHESTRATOR_DEFAULTS.workerThreadsMax));
}

/**
 * The default number of agents per thread: the agents that may run at once spread over
 * defaultThreadCount threads. With as many threads as agents, every agent keeps a thread of its own.
 */
export function defaultAgentsPerThread(concurrency: number, pairSlots = 0, cores = availableParallelism()): number {
  return Math.max(1, Math.ceil(agentsAtOnce(concurrency, pairSlots) / defaultThreadCount(cores)));
}

/** Agents that may run at once: one per concurrency slot, plus the second member of each pair. */
function agentsAtOnce(concurrency: number, pairSlots: number): number {
  return concurrency + Math.min(pairSlots, concurrency);
}

/** Threads for `agents` agents running at once, `perThread` to a thread (agents waiting on each other still always get a slot). */
export function threadsNeeded(concurrency: number, pairSlots = 0, perThread = 1): number {
  return Math.max(1, Math.ceil(agentsAtOnce(concurrency, pairSlots) / Math.max(1, perThread)));
}

export function createWorkerPool(opts: WorkerPoolOptions): Piscina {
  const perThread = Math.max(1, Math.floor(opts.agentsPerThread ?? 1));
  // Piscina runs at most ONE abortable task per thread (worker_pool isRunningAbortableTask), so
  // shared threads only work when their tasks carry no abort signal: AgentLaunch then stops a
  // stuck agent by terminating its thread (see LaunchContext.shareThreads). Every agent still
  // gets a slot (threadsNeeded), so a pair never waits in piscina's queue for its partner.
  const maxThreads = threadsNeeded(opts.concurrency, opts.pairSlots, perThread);
  return newPiscina(opts, maxThreads, perThread, Math.min(maxThreads, opts.minThreads ?? maxThreads));
}

/**
 * Warm start: a worker thread spends ~150-250 ms loading its modules, and the CLI spends about as
 * long loading the recipe machinery before it knows how many threads a recipe needs. So when it
 * is about to run a recipe with the default thread policy, the CLI starts defaultThreadCount
 * threads first, and the coordinator adopts them. Their threads take any number
 * of agents (piscina's least-busy balancer spreads them; the scheduler caps how many run), so
 * the pool fits every recipe, pairs included. A pool nobody adopted is destroyed by the CLI.
 */
let warm: Piscina | undefined;

export function startWarmPool(cores = availableParallelism()): void {
  const threads = defaultThreadCount(cores);
  warm ??= newPiscina({}, threads, ORCHESTRATOR_DEFAULTS.warmAgentsPerThreadMax, threads);
}

/** The warm pool, handed over once (the taker owns and destroys it); undefined when none was started. */
export function takeWarmPool(): Piscina | undefined {
  const pool = warm;
  warm = undefined;
  return pool;
}

/** Ends a warm pool that no run adopted (a recipe error, a missing API key). */
export async function discardWarmPool(): Promise<void> {
  await takeWarmPool()
    ?.destroy()
    .catch(() => undefined);
}

/**
 * The file each thread starts with: worker/worker-entry.cjs (worker-entry.cts under tsx), a CommonJS
 * file that imports the ES worker module; see there why piscina must not require() it directly.
 */
export function workerEntry(metaUrl: string = import.meta.url): { isTs: boolean; href: string } {
  const { isTs } = siblingWorker(metaUrl, 'worker');
  return { isTs, href: new URL(`../worker/worker-entry${isTs ? '.cts' : '.cjs'}`, metaUrl).href };
}

function newPiscina(
  opts: Pick<WorkerPoolOptions, 'filename' | 'resourceLimits' | 'onError'>,
  maxThreads: number,
  perThread: number,
  minThreads: number,
): Piscina {
  const filename = opts.filename ?? workerEntry().href;
  const isTs = /\.[cm]?ts$/.test(filename);
  const pool = new Piscina({
    filename,
    maxThreads,
    concurrentTasksPerWorker: perThread,
    minThreads,
    idleTimeout: ORCHESTRATOR_DEFAULTS.workerIdleTimeoutMs,
    resourceLimits:
      opts.resourceLimits ??
      (perThread > 1 ? ORCHESTRATOR_DEFAULTS.sharedWorkerResourceLimits : ORCHESTRATOR_DEFAULTS.workerResourceLimits),
    ...(isTs ? { execArgv: workerExecArgv(isTs) } : {}),
    // The coordinator ends threads itself (abort, destroy); a long close would hang Ctrl-C.
    closeTimeout: ORCHESTRATOR_DEFAULTS.abortGraceMs,
  });
  pool.on('error', (err: unknown) => opts.onError?.(err));
  return pool;
}
