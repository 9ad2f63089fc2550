// Tunable numbers of the display layer (live view, plain log, summaries, HTML report), each with
// the reason for its value.

export const DISPLAY_DEFAULTS = {
  /** Minimum time between two live frames: 10 redraws/s looks live and costs nothing. */
  frameIntervalMs: 100,
  /** Elapsed times tick even without events; once a second is what a clock needs. */
  tickIntervalMs: 1_000,
  /** Finished instances get one row each up to this many; beyond it they collapse to a count. */
  maxFinishedRows: 6,
  /** Rows kept free below the frame so it never scrolls the terminal (cursor-up cannot reach scrolled lines). */
  reservedRows: 1,
  /** Width assumed when a stream reports none (pipes, tests). */
  fallbackColumns: 80,
  fallbackRows: 30,
  /** Cells of the overall progress bar and of the budget meter. */
  progressBarCells: 20,
  budgetBarCells: 12,
  /** Width of the instance column in the live view and summaries (longer keys are cut with "…"). */
  labelWidth: 22,
  /** An output shown in a summary or table row is cut to this many characters. */
  outputPreviewChars: 60,
  /** An error shown in one line is cut to this many characters. */
  errorPreviewChars: 160,
  /** Tool arguments shown in `show --instance` are cut to this many characters. */
  toolArgsChars: 200,
  /** Tool results shown in `show --instance` (terminal) are cut to this many characters. */
  toolResultChars: 400,
  /** The HTML report keeps this much of each tool result / message text (a report must stay openable). */
  reportTextChars: 4_000,
  /** The plain log notes the budget once as spending crosses each of these fractions. */
  budgetMilestones: [0.5, 0.8, 0.95],
  /** Runs listed after an "unknown run" error. */
  recentRunsInErrors: 5,
} as const;
