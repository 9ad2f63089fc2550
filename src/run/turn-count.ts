// What one turn is, for everyone who counts them: the summary table, the plain log, `show`, the
// report, result.json and the max_turns cap. A turn is one reply of the agent loop that completed,
// with the tool calls it asked for (the kernel's turn_end): a reply that ended in an error (the
// session retries it) or was aborted is no turn, and the calls that write summaries or compact a
// session are not turns either (they have no turn_end). Model calls are counted apart, as calls.

/** Whether a turn_end with this stop reason counts as a turn. */
export function countsAsTurn(stopReason: unknown): boolean {
  return stopReason !== 'error' && stopReason !== 'aborted';
}
