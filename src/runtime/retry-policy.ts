// Session-level retry of transient provider failures (kernel-spec 9.1). The provider already
// retries before anything streamed; this layer retries a whole failed turn (a stream cut mid-way,
// an overload that outlasted the provider's own retries), dropping the failed reply from context.
import { isOverflowErrorText } from '../ai/overflow.js';
import type { AssistantMessage } from '../ai/types.js';
import type { RetrySettings } from './defaults.js';

// Wordings of transient failures across providers, proxies and Node's fetch.
const RETRYABLE: readonly RegExp[] = [
  /overloaded/i,
  /rate.?limit/i,
  /too many requests/i,
  /\b429\b/,
  /\b50[0234]\b/,
  /\b529\b/,
  /service.?unavailable/i,
  /server.?error/i,
  /internal.?error/i,
  /connection.?(error|refused|reset|lost|closed)/i,
  // A stream that ended before message_stop, or went silent (the provider's idle watchdog).
  /ended before the message was complete/i,
  /sent nothing for \d+ ?ms/i,
  /other side closed/i,
  /fetch failed/i,
  /upstream.?connect/i,
  /reset before headers/i,
  /\bterminated\b/i,
  /retry delay/i,
  /ECONNRESET|ETIMEDOUT|EPIPE/,
];

/** True when an error reply is worth running again: transient, and not a context overflow. */
export function isRetryableError(message: Pick<AssistantMessage, 'stopReason' | 'errorMessage'>): boolean {
  if (message.stopReason !== 'error' || !message.errorMessage) return false;
  if (isOverflowErrorText(message.errorMessage)) return false;
  return RETRYABLE.some((re) => re.test(message.errorMessage!));
}

/** Wait before retry `attempt` (1-based): base x 2^(attempt-1), capped. */
export function retryDelay(attempt: number, settings: RetrySettings): number {
  const delay = settings.baseDelayMs * 2 ** Math.max(0, attempt - 1);
  return Math.min(delay, settings.maxDelayMs);
}

/** Sleeps `ms`; resolves false at once when `signal` aborts (before or during the wait). */
export function sleepUnlessAborted(ms: number, signal: AbortSignal): Promise<boolean> {
  if (signal.aborted) return Promise.resolve(false);
  if (ms <= 0) return Promise.resolve(true);
  return new Promise((resolve) => {
    const onAbort = (): void => {
      clearTimeout(timer);
      resolve(false);
    };
    const timer = setTimeout(() => {
      signal.removeEventListener('abort', onAbort);
      resolve(true);
    }, ms);
    signal.addEventListener('abort', onAbort, { once: true });
  });
}
