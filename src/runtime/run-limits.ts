// What bounds one agent: the loop detector's thresholds, the caps on turns, spend and
// compactions, and the error a prompt ends with when one of them stopped it. Every delivery form
// and every orchestrated instance runs through AgentSession, so these hold everywhere.

/** Why a guard stopped a run. */
export type RunStopKind = 'loop' | 'max_turns' | 'budget' | 'compaction';

/**
 * A prompt that a guard or a cap ended. The session stays consistent (every message is in the
 * file) and can take another prompt; the caller decides what the stop means (the CLI exits 1,
 * the orchestrator fails the instance with the failure class of the same name).
 */
export class RunStoppedError extends Error {
  override readonly name = 'RunStoppedError';
  constructor(
    readonly kind: RunStopKind,
    message: string,
  ) {
    super(message);
  }
}

export function isRunStoppedError(err: unknown): err is RunStoppedError {
  return err instanceof Error && err.name === 'RunStoppedError' && typeof (err as RunStoppedError).kind === 'string';
}

export interface LoopDetectionSettings {
  enabled: boolean;
  /** The same tool call (name + canonical arguments) this many times in a row is a loop. */
  identicalCalls: number;
  /** A cycle of 2 or 3 calls (A B A B ...) repeated this many times in a row is a loop. */
  cycleRepeats: number;
  /**
   * The same assistant text (whitespace collapsed, at least 80 characters) this many replies in a
   * row is a loop.
   */
  repeatedText: number;
  /**
   * After the warning, the model gets this many more turns to break the pattern; repeating it
   * once more within them stops the run.
   */
  graceTurns: number;
}

export interface RunLimits {
  /** Model calls of the agent loop per prompt (retries and summary calls are not turns); 0 = no cap. */
  maxTurns: number;
  /** Spend of this session object in USD (every call: turns, retries, summaries); undefined = no cap. */
  budgetUsd?: number;
  /** Tokens of this session object (input + output + cache); undefined = no cap. */
  budgetTokens?: number;
  /** Automatic compactions within one prompt; one more stops the run. */
  maxCompactionsPerPrompt: number;
}

export const DEFAULT_LOOP_DETECTION: LoopDetectionSettings = {
  enabled: true,
  // 4 identical calls: a model re-reading one file twice, or retrying a command once after a fix
  // elsewhere, stays well under it; a stuck model reaches it within a few cents.
  identicalCalls: 4,
  // A B A B A B: three full rounds of the same pair (or triple) without anything else between.
  cycleRepeats: 3,
  // Three identical answers in a row are never progress.
  repeatedText: 3,
  // One warning, then two turns to do something else.
  graceTurns: 2,
};

export const DEFAULT_RUN_LIMITS: RunLimits = {
  // A long refactor is 50-100 turns; 200 stops a runaway long before it costs real money.
  maxTurns: 200,
  // Each compaction must earn its keep (see compaction guard); 8 in one prompt is a thrash.
  maxCompactionsPerPrompt: 8,
};
