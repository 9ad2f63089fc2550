// Tunable numbers of the recipe layer, each with the reason for its value. The coordinator reads
// the same object so a dry run and a real run agree on defaults.

import { DEFAULT_MODEL_ID } from '../ai/models.js';
import type { RETRY_FAILURE_CLASSES } from './failure-classes.js';

export const RECIPE_DEFAULTS = {
  /** Model used when neither the CLI, the agent, the recipe nor ORCHESTRATE_MODEL names one (the ai layer's default). */
  model: DEFAULT_MODEL_ID,
  /** Provider when neither the CLI nor the recipe names one. */
  provider: 'anthropic' as const,
  /** Parallel task instances per run: enough to overlap I/O without tripping per-model 429s. */
  concurrency: 4,
  /**
   * Fan-outs of this many instances or more warm the prompt cache with their first call before
   * the rest of the wave starts: from 4 on, the 3+ prefix writes saved (1.25x -> 0.1x of ~2k
   * tokens each) outweigh holding the wave back for one time-to-first-token.
   */
  cacheWarmupMinInstances: 4,
  /** Longest instance key kept verbatim; longer keys get a hash suffix so file names stay short. */
  maxKeyLength: 48,
  /** Task-level retries: none unless asked, since a retry repeats paid model calls. */
  retries: {
    count: 0,
    /** Exponential backoff: 2 s doubling up to 60 s mirrors the provider retry schedule. */
    backoff: { initialMs: 2_000, maxMs: 60_000, factor: 2 },
    /**
     * Transient classes only: verify_failed and plain errors repeat the same mistake if retried
     * blindly, and a loop, a max_turns cap or a pair that never approved would be paid for again.
     */
    on: ['rate_limit', 'overloaded', 'timeout', 'stalled', 'crashed'] as const,
  },
  /** Pair rounds when `pair.max_rounds` is absent: plan, correct once, confirm. */
  pairMaxRounds: 3,
  /** land: train: re-runs of an instance whose work conflicts or breaks verify on the tip (`max_repairs`). */
  maxRepairs: 2,
  /** A pair out of rounds without approval failed its review: say so (class not_approved). */
  pairOnMaxRounds: 'fail' as const,
  /** Compaction defaults follow the kernel (kernel-spec section 12). */
  compaction: { enabled: true, reserveTokens: 16_384, keepRecentTokens: 20_000 },
  /**
   * Dry-run cost heuristic. An agent instance runs between `turns.low` and `turns.high` model
   * calls; each call re-sends the whole context, which grows by the reply plus the tool results
   * of the previous turn. Input tokens over n turns = n*C + g*n(n-1)/2 (C = starting context,
   * g = growth per turn); output tokens = n * outputPerTurn. Prompt caching is ignored, so the
   * high figure is a true upper bound for that many turns.
   */
  estimate: {
    turns: { low: 2, high: 12 },
    outputTokensPerTurn: { low: 200, high: 1_500 },
    toolResultTokensPerTurn: { low: 300, high: 3_000 },
    /** The runtime's own system prompt (tool list, guidelines, date, cwd) before the agent's text. */
    runtimeSystemTokens: 800,
    /** One built-in tool's name, description and JSON Schema as sent to the model. */
    toolSchemaTokens: 250,
    /** A merged upstream summary injected by `context: summaries`, per needed task. */
    summaryTokensPerNeed: 1_500,
    /** The handoff summary an instance's model writes when it ends (also its output tokens). */
    handoffSummaryTokens: 1_500,
    /** The summarizer's own instructions around the conversation it summarizes. */
    summarizerPromptTokens: 600,
    /** An upstream output referenced in a prompt that is not known before the run. */
    unknownOutputTokens: 500,
    /** Extra turns an agent spends fixing its work after each failed verify. */
    verifyFixTurns: 4,
    /** Instances assumed for a fan-out over a task output whose schema gives no maxItems. */
    dynamicFanOut: { low: 1, high: 10 },
  },
} as const;

/** A failure class `retries.on` may list: the one list in failure-classes.ts, which the schema checks against. */
export type RetryFailureClass = (typeof RETRY_FAILURE_CLASSES)[number];
