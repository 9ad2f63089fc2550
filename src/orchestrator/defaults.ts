// Tunable numbers of the orchestrator (coordinator, workers, failure policy), each with the reason
// for its value. Recipe-level defaults (concurrency, retries, pair rounds) live in
// recipe/defaults.ts so a dry run and a real run agree; these are the run machinery's own. The run
// record's numbers (run folder names, lease timing) live in run/defaults.ts and are included here.
import { RUN_DEFAULTS } from '../run/defaults.js';

export const ORCHESTRATOR_DEFAULTS = {
  ...RUN_DEFAULTS,
  /**
   * Worker thread heap cap. An agent holds one conversation and a few tool outputs (bounded by
   * truncation); 512 MB is generous for that and still stops a runaway tool from taking the
   * machine down with every sibling.
   */
  workerResourceLimits: { maxOldGenerationSizeMb: 512, maxYoungGenerationSizeMb: 64 },
  /**
   * Heap cap of a thread that agents share (the default policy puts every agent of a 2-core
   * machine on one thread): room for dozens of conversations and their session indexes, still
   * short of taking the machine down.
   */
  sharedWorkerResourceLimits: { maxOldGenerationSizeMb: 4096, maxYoungGenerationSizeMb: 64 },
  /** Most worker threads of the default policy (one per core but one; see defaultThreadCount). */
  workerThreadsMax: 8,
  /** Agents one warm thread may take: no limit in practice (the scheduler caps how many run). */
  warmAgentsPerThreadMax: 1_000,
  /** Warm threads are kept this long between instances (re-creating one costs 23-110 ms). */
  workerIdleTimeoutMs: 60_000,
  /** plan.md is a view: rewritten at most this often while instances finish (and at the end). */
  planWriteIntervalMs: 200,
  /**
   * Past this many instances the plan.md interval grows with them (planWriteDelayMs): each
   * rewrite renders every instance, and a run of N instances lasts about N times as long, so a
   * fixed interval made the rewrites O(N^2) in all (5 s of a 250-agent distributed run's 92 s).
   */
  planInstancesPerInterval: 100,
  /** After an abort message, how long a worker gets to stop cleanly before its thread is terminated. */
  abortGraceMs: 3_000,
  /** After the idle-timeout wrap-up steer, how long the agent gets to finish before it is stopped. */
  wrapUpGraceMs: 30_000,
  /** Jitter applied to task-level retry delays: the delay is scaled by a factor in [1 - j, 1]. */
  retryJitter: 0.5,
  /**
   * Spend reserved for one model call before its real usage is known, when the instance has no
   * previous call to go by: roughly a system prompt, tool schemas and a short reply.
   */
  callEstimateTokens: 4_000,
  /** A call's estimate is the instance's last call size times this (context grows each turn). */
  callEstimateGrowth: 1.2,
  /** Output kept of one verify or `run:` command (tail; the rest is summarized as cut). */
  commandOutputChars: 8_000,
  /** Wall-clock limit of one verify command or `run:` step without a task timeout. */
  commandTimeoutMs: 10 * 60_000,
  /** How many times invalid JSON output is sent back to the agent before the instance fails. */
  outputRetries: 1,
  /**
   * The note a resumed or retried instance gets only where no turn is pending: after a failed or
   * aborted reply (it joins that reply's turn), after a finished answer when the previous attempt
   * failed, and for a resumed planner with the worker's new report. A pending turn or cut-off
   * tool calls are continued without it (AgentSession.resume).
   */
  continueNote:
    'The previous attempt at this task stopped before it was finished ({reason}). Your work so far is above. Continue the task from where you left off and finish it.',
  /** The steer sent when an instance has been idle for its idle_timeout. */
  wrapUpNote: 'You have been idle for {seconds}s. Finish now: wrap up what you have and give your final answer.',
} as const;

export type OrchestratorDefaults = typeof ORCHESTRATOR_DEFAULTS;
