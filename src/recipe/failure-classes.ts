// The failure classes a recipe may name in `retries.on`. The run's full list (run/usage-summary.ts)
// is this one plus the classes a recipe never retries, so every class a recipe names is one an
// attempt can end with.

/**
 * Why a task instance failed, as `retries.on` selects the ones to retry. budget and aborted are
 * never retried (the run's list has them); loop, max_turns, compaction, not_approved and
 * write_scope only when listed here (a retry of a deterministic loop pays for it again).
 */
export const RETRY_FAILURE_CLASSES = [
  'rate_limit',
  'overloaded',
  'timeout',
  'stalled',
  'crashed',
  'verify_failed',
  'error',
  // A guard of the agent runtime stopped the agent (see runtime/run-limits.ts): it repeated itself,
  // used up its max_turns, or compacted over and over without getting anywhere.
  'loop',
  'max_turns',
  'compaction',
  // A planner/worker pair ran out of max_rounds without the planner approving.
  'not_approved',
  // Files outside the task's writes: changed (by bash, verify or a run: step); they were reverted.
  'write_scope',
  // An MCP server the agent names could not start or stopped for good (not `optional: true`):
  // worth a retry for a server that is down for a while (a remote one), so it may be listed; not
  // retried by default.
  'mcp_unavailable',
] as const;
