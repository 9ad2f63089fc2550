// Tunable numbers of `orchestrate mcp serve`, each with the reason for its value. Here, below both
// entry points, because the CLI's flags (--progress-ms) default to them and the server (src/mcp/) uses them.

export const MCP_SERVER_DEFAULTS = {
  /**
   * While a tool waits for a run, a progress notification goes out at least this often. Clients
   * reset their request timeout on progress (Claude Code, the SDK with resetTimeoutOnProgress);
   * 1 s keeps a client with a 2 s timeout waiting and costs one small message a second.
   */
  progressMs: 1_000,
  /** How often a waiting tool reads the run's log for new events (a file read; the run is another process). */
  pollMs: 100,
  /**
   * Longest wait for a started run process to take its run folder (load the CLI, the recipe, take
   * the lease). A cold start on a loaded 2-core machine takes seconds; this only catches a hang.
   */
  startTimeoutMs: 120_000,
  /** Events one run_events call returns when the client gives no limit. */
  eventsPageSize: 200,
  /** Most events one run_events call may return. */
  eventsPageMax: 2_000,
  /** Most bytes of run.jsonl one run_events call reads (a page ends early rather than flood the client). */
  eventsPageBytes: 1 << 20,
  /** Conversation items show_instance returns when the client gives no limit (the latest ones). */
  conversationItems: 50,
  /** Characters of a launch log quoted in an error about a run process that failed to start. */
  launchLogChars: 4_000,
} as const;

/**
 * Event types run_events leaves out unless asked for by name: the agents' own stream (tool
 * calls, messages) and per-call bookkeeping, thousands per run; what is left tells the run's story.
 */
export const NOISY_EVENT_TYPES: readonly string[] = ['agent_event', 'permit_wait', 'permit_grant', 'call_usage'];
