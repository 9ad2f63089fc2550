// Tunable numbers of the session layer, each with the reason for its value.

export const SESSION_DEFAULTS = {
  /** Current file format. v1 had no ids, v2 no `custom` role (it was `hookMessage`). */
  formatVersion: 3,
  /** Entry ids are 8 hex chars: short enough to read in a file, 2^32 values per session. */
  entryIdHexLength: 8,
  /** Collision re-draws before falling back to a full UUID (never reached in practice). */
  entryIdMaxTries: 100,
  /** Size of the file reader's chunk: the whole file is never held in memory as one string. */
  readChunkBytes: 1 << 20,
  /**
   * Batched writes go out at the next microtask checkpoint, or at once when the staged lines pass
   * this many bytes: a tight loop of appends still writes every ~150 entries, and the
   * unwritten window stays small. One write(2) per batch instead of per line.
   */
  writeBatchBytes: 256 * 1024,
  /** Secret values shorter than this are not redacted: a 3-character value would garble every text. */
  redactMinChars: 4,

  compaction: {
    enabled: true,
    /** Room left for the next reply and the summary request itself. */
    reserveTokens: 16_384,
    /** Recent context kept verbatim after a compaction (~10 typical turns). */
    keepRecentTokens: 20_000,
    /**
     * keepRecentTokens is clamped to this share of the threshold so a compaction always summarizes
     * something; a tail that cannot be cut this small (a reply with huge tool results) keeps only
     * its last turn, when that fits the threshold beside the system prompt, else nothing.
     */
    maxKeepShareOfThreshold: 0.5,
    /**
     * ...and to this share of the context window: on a small window a fixed 20k tail is a third
     * of it, and the context is back at the threshold a few turns after each compaction.
     */
    maxKeepShareOfWindow: 0.2,
    /** Summary reply budget as a share of reserveTokens (13,107 by default). */
    summaryMaxTokensShare: 0.8,
    /** Split-turn prefix summary budget as a share of reserveTokens (8,192 by default). */
    turnPrefixMaxTokensShare: 0.5,
    /** Tool results are cut to this many characters in the summary request: their gist is enough. */
    toolResultChars: 2_000,
  },

  /** Retries of the summary call inside one compaction job. */
  summaryRetry: {
    /** Total attempts (first call included). */
    maxAttempts: 3,
    /** First backoff; doubles per attempt. Overloaded APIs recover in seconds. */
    baseDelayMs: 2_000,
    maxDelayMs: 30_000,
  },

  branchSummary: {
    /** Used when the model does not say its context window. */
    fallbackContextWindow: 128_000,
    reserveTokens: 16_384,
    /** Summary entries (already dense) may still be added until this share of the budget is used. */
    summaryEntriesUntilShare: 0.9,
    /** A branch summary is a short note, not a full handoff. */
    maxTokens: 2_048,
  },
} as const;

export interface CompactionSettings {
  enabled: boolean;
  reserveTokens: number;
  keepRecentTokens: number;
}

export const DEFAULT_COMPACTION_SETTINGS: CompactionSettings = {
  enabled: SESSION_DEFAULTS.compaction.enabled,
  reserveTokens: SESSION_DEFAULTS.compaction.reserveTokens,
  keepRecentTokens: SESSION_DEFAULTS.compaction.keepRecentTokens,
};

export interface RetrySettings {
  maxAttempts: number;
  baseDelayMs: number;
  maxDelayMs: number;
}
