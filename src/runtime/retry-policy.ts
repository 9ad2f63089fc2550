// Session-level retry of a whole turn (kernel-spec 9.1), and the one retry budget of a turn. The
// provider retries a failed request itself (before anything streamed) within the budget the
// session gives it (turnRetryBudget); this layer only runs a turn again when ai/ says the provider
// could not (AssistantMessage.errorRetryable: a reply cut after it began streaming, or a stream
// function without a retry loop), dropping the failed reply from context. The classification is
// ai/'s (errorKind); nothing here reads the error's wording.
import type { AssistantMessage, RetryInfo, StreamFunction, StreamOptions } from '../ai/types.js';
import type { RetrySettings } from './defaults.js';

/** True when an error reply is worth running again as a whole turn (ai/ decided; never an overflow). */
export function isRetryableError(message: Pick<AssistantMessage, 'stopReason' | 'errorRetryable'>): boolean {
  return message.stopReason === 'error' && message.errorRetryable === true;
}

/**
 * The provider's retry budget for the next request of a turn that already used `used` retries:
 * the session's maxRetries (or the caller's explicit streamOptions.maxRetries, when smaller), less
 * what is spent; 0 when retries are off. One budget per turn, whichever layer spends it.
 */
export function turnRetryBudget(
  settings: RetrySettings,
  used: number,
  options: Pick<StreamOptions, 'maxRetries'> = {},
): number {
  if (!settings.enabled) return 0;
  const budget =
    options.maxRetries !== undefined ? Math.min(settings.maxRetries, options.maxRetries) : settings.maxRetries;
  return Math.max(0, budget - used);
}

/** The session's side of a turn's budget (SessionRunLoop). */
export interface TurnRetryCounter {
  providerRetryBudget(options: Pick<StreamOptions, 'maxRetries'>): number;
  providerRetried(info: RetryInfo): void;
}

/**
 * A turn's requests carry the turn's one retry budget to the provider (what is left of
 * retry.maxRetries, and its first delay unless the caller set one); each retry the provider makes
 * is counted against it and reported (auto_retry_start).
 */
export function withTurnRetries(
  fn: StreamFunction,
  counter: () => TurnRetryCounter,
  settings: () => RetrySettings,
): StreamFunction {
  return (model, context, options = {}) =>
    fn(model, context, {
      ...options,
      maxRetries: counter().providerRetryBudget(options),
      ...(options.retryBaseDelayMs === undefined ? { retryBaseDelayMs: settings().baseDelayMs } : {}),
      onRetry: (info) => {
        options.onRetry?.(info);
        counter().providerRetried(info);
      },
    });
}

/** Wait before retry `attempt` (1-based): base x 2^(attempt-1), capped. */
export function retryDelay(attempt: number, settings: RetrySettings): number {
  const delay = settings.baseDelayMs * 2 ** Math.max(0, attempt - 1);
  return Math.min(delay, settings.maxDelayMs);
}
