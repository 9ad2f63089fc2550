// Provider-level retry policy: which failures are worth another attempt, and how long to wait.
// Our own loop (not the SDK's) so callers see every retry (onRetry) and can cap server delays.
import { aiDefaults } from './defaults.js';
import type { RetryInfo, StreamOptions } from './types.js';

/** A failed attempt, as the retry loop needs to see it. */
export interface AttemptFailure {
  message: string;
  /** undefined: not retryable. */
  kind?: RetryInfo['kind'];
  status?: number;
  /** Delay the server asked for (retry-after-ms / retry-after), in ms. */
  serverDelayMs?: number;
}

export interface RetryPolicy {
  maxRetries: number;
  baseDelayMs: number;
  maxRetryDelayMs: number;
  maxBackoffMs: number;
  jitter: number;
}

export function retryPolicy(options: StreamOptions = {}): RetryPolicy {
  return {
    maxRetries: Math.max(0, options.maxRetries ?? aiDefaults.maxRetries),
    baseDelayMs: Math.max(0, options.retryBaseDelayMs ?? aiDefaults.retryBaseDelayMs),
    maxRetryDelayMs: Math.max(0, options.maxRetryDelayMs ?? aiDefaults.maxRetryDelayMs),
    maxBackoffMs: aiDefaults.maxBackoffMs,
    jitter: aiDefaults.retryJitter,
  };
}

/**
 * What a final failure tells the caller beyond its text (AssistantMessage errorStatus / errorKind),
 * so a caller classifies it by the status the provider saw, not by words in the message.
 */
export function failureFields(f: Pick<AttemptFailure, 'status' | 'kind'>): {
  errorStatus?: number;
  errorKind?: RetryInfo['kind'];
} {
  return {
    ...(f.status !== undefined ? { errorStatus: f.status } : {}),
    ...(f.kind !== undefined ? { errorKind: f.kind } : {}),
  };
}

/** Retry kind for an HTTP status: 429, 529, other 5xx; anything else is final. */
export function retryKindForStatus(status: number): RetryInfo['kind'] | undefined {
  if (status === 429) return 'rate_limit';
  if (status === 529) return 'overloaded';
  if (status >= 500 && status <= 599) return 'server';
  return undefined;
}

/** Retry kind for an error `type` in an API error body (used for SSE errors, which have no status). */
export function retryKindForErrorType(type: string | undefined): RetryInfo['kind'] | undefined {
  if (type === 'rate_limit_error') return 'rate_limit';
  if (type === 'overloaded_error') return 'overloaded';
  if (type === 'api_error') return 'server';
  return undefined;
}

interface HeaderSource {
  get(name: string): string | null;
}

/** The delay a response asks for: retry-after-ms, else retry-after (seconds or an HTTP date). */
export function serverRetryDelayMs(headers: HeaderSource | undefined | null, now = Date.now()): number | undefined {
  if (!headers) return undefined;
  const ms = Number(headers.get('retry-after-ms') ?? Number.NaN);
  if (Number.isFinite(ms) && ms > 0) return ms;
  const after = headers.get('retry-after');
  if (after === null) return undefined;
  const seconds = Number(after);
  if (Number.isFinite(seconds)) return seconds > 0 ? seconds * 1000 : undefined;
  const date = Date.parse(after);
  return Number.isFinite(date) && date > now ? date - now : undefined;
}

/**
 * Delay before retry number `attempt` (1-based). A server-requested delay is honoured, clamped to
 * maxRetryDelayMs (0 = no cap); otherwise exponential backoff from baseDelayMs with jitter.
 */
export function retryDelayMs(
  attempt: number,
  failure: AttemptFailure,
  policy: RetryPolicy,
  random = Math.random,
): number {
  const cap = policy.maxRetryDelayMs > 0 ? policy.maxRetryDelayMs : Number.POSITIVE_INFINITY;
  if (failure.serverDelayMs !== undefined) return Math.round(Math.min(failure.serverDelayMs, cap));
  const exp = policy.baseDelayMs * 2 ** (attempt - 1);
  const capped = Math.min(exp, policy.maxBackoffMs, cap);
  return Math.round(capped * (1 - policy.jitter * random()));
}

/** Waits, resolving false early if the signal aborts. */
export function sleepUnlessAborted(ms: number, signal?: AbortSignal): Promise<boolean> {
  if (signal?.aborted) return Promise.resolve(false);
  return new Promise((resolve) => {
    const onAbort = (): void => {
      clearTimeout(timer);
      resolve(false);
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve(true);
    }, ms);
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}
