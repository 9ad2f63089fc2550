// Tunable constants of the agent layer, each with the reason for its value.

export const agentDefaults = {
  /**
   * Received arguments echoed back in an "invalid arguments" result are cut here: enough for the
   * model to see what it sent, small enough that a huge bad payload does not flood the context.
   */
  maxReceivedArgumentsChars: 2000,
  /**
   * A failed tool call's text is cut (head and tail kept) past this many characters. Above the
   * tools' own 50 KB output limit, so only runaway texts are cut: an OS or regex error that
   * echoes a huge argument back (a 200 KB pattern, a 100 KB path) would flood the context.
   */
  maxErrorTextChars: 60_000,
  /** One queued message per turn lets each interjection get its own model reply. */
  steeringMode: 'one-at-a-time' as 'all' | 'one-at-a-time',
  /** Same reasoning as steeringMode: follow-ups are answered one by one. */
  followUpMode: 'one-at-a-time' as 'all' | 'one-at-a-time',
} as const;

/** Result text of a tool call dropped because the user interjected (the model sees it). */
export const SKIPPED_FOR_STEERING_TEXT = 'Skipped due to queued user message.';
/** Result text of a tool call that was never started because the run was aborted. */
export const SKIPPED_FOR_ABORT_TEXT = 'Skipped: the run was aborted before this tool call started.';
/** Default reason when a beforeToolCall hook blocks without saying why. */
export const BLOCKED_DEFAULT_TEXT = 'Tool execution was blocked';
