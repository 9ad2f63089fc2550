// Tunable numbers of the provider layer, each with the reason for its value.
import type { ThinkingLevel } from './types.js';

export const aiDefaults = {
  /** Provider-level retries of 429/529/5xx/connection failures (4 calls in all): rides out short blips. */
  maxRetries: 3,
  /** First backoff delay; doubles per retry. 1 s is the SDK's own order of magnitude for overload. */
  retryBaseDelayMs: 1000,
  /** Ceiling for our exponential backoff, so the 4th retry of a long chain does not wait minutes. */
  maxBackoffMs: 30_000,
  /** Backoff is scaled by a random factor in [1 - jitter, 1] so parallel agents do not retry in lockstep. */
  retryJitter: 0.25,
  /** Cap for a server-requested delay (retry-after); longer requests are clamped to it (0 = no cap). */
  maxRetryDelayMs: 60_000,
  /**
   * After a model of a fallback chain fails for good (overloaded, 5xx, down, rate limit with its
   * retries spent), the agent's next calls skip it for this long, then try it again: a minute lets
   * an overload pass without paying the failing retries on every call in between.
   */
  fallbackCooldownMs: 60_000,
  /** A stream silent this long is abandoned; the API sends pings every few seconds, so 2 min means dead. */
  streamIdleTimeoutMs: 120_000,
  /** Without options.maxTokens we ask for a third of the model's output limit (kernel-spec 2.6). */
  maxTokensDivisor: 3,
  /** Base output budget before thinking is added (kernel-spec 2.5). */
  baseMaxTokensCap: 32_000,
  /** Thinking budgets per level; xhigh clamps to high for budget-based models (kernel-spec 2.5). */
  thinkingBudgets: { minimal: 1024, low: 2048, medium: 8192, high: 16384, xhigh: 16384 } satisfies Record<
    ThinkingLevel,
    number
  >,
  /** The API rejects thinking budgets below this. */
  minThinkingBudget: 1024,
  /** Anthropic tool_use ids must match [A-Za-z0-9_-]{1,64}. */
  toolCallIdMaxLength: 64,
  /** Scripted provider: characters per streamed delta; small enough to exercise chunking, large enough to be cheap. */
  scriptedChunkSize: 24,
  /** Deterministic token count: chars / 4, the same rule as the token estimate (kernel-spec 12). */
  charsPerToken: 4,
  /** Streamed tool arguments are re-parsed on every delta up to this size (a live preview is cheap there). */
  partialArgumentsEagerChars: 16_384,
  /** Beyond it, only when the JSON grew by this factor: O(n) parsing in all instead of O(n^2). */
  partialArgumentsGrowth: 1.25,
} as const;

/** Beta features requested on every Anthropic call (kernel-spec 2.6). */
export const anthropicBetas = {
  fineGrainedToolStreaming: 'fine-grained-tool-streaming-2025-05-14',
  interleavedThinking: 'interleaved-thinking-2025-05-14',
} as const;
