// Tunable numbers of the runtime layer, each with the reason for its value.
export const RUNTIME_DEFAULTS = {
  /** Session-level retries of transient provider errors (kernel-spec 9.1). */
  retry: {
    enabled: true,
    /** 3 retries = 4 calls: rides out an overloaded minute without looping forever. */
    maxRetries: 3,
    /** First wait; doubles per retry (2 s, 4 s, 8 s), the order of magnitude overloads clear in. */
    baseDelayMs: 2_000,
    /** No single wait is longer than this, however many retries are configured. */
    maxDelayMs: 60_000,
  },
  /** Used when neither the session, the caller nor the model says otherwise (kernel-spec 12). */
  thinkingLevel: 'medium' as const,
  /** Where new session files go: `<home>/sessions/--<cwd>--/`; home is ORCHESTRATE_HOME or ~/.orchestrate. */
  homeDirName: '.orchestrate',
  sessionsDirName: 'sessions',
  /** Extractive summaries quote at most this many characters of one message: gist, not transcript. */
  extractiveQuoteChars: 400,
  /** Extractive summaries list at most this many done items: enough to orient, bounded in size. */
  extractiveMaxItems: 40,
  /** RPC lines longer than this are refused (a runaway client must not exhaust memory). */
  rpcMaxLineBytes: 64 * 1024 * 1024,
  /** json/rpc modes: message_update lines carry the full message snapshot while under this many streamed characters... */
  eventSnapshotEagerChars: 16_384,
  /** ...and beyond it only when the message grew by this factor since the last snapshot (O(n) output in all). */
  eventSnapshotGrowth: 1.25,
} as const;

export interface RetrySettings {
  enabled: boolean;
  maxRetries: number;
  baseDelayMs: number;
  maxDelayMs: number;
}

export const DEFAULT_RETRY_SETTINGS: RetrySettings = { ...RUNTIME_DEFAULTS.retry };
