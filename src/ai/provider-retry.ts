// The one retry loop of every HTTP provider (Anthropic, OpenAI Chat, OpenAI Responses): which
// failures get another request, how long to wait, and what the final error says. It owns the
// call's whole retry budget (StreamOptions.maxRetries: 0 = exactly one request), so no layer above
// retries the same failure again: a failure it gave up on is marked not retryable
// (errorRetryable), and only a reply cut after it began streaming, which a provider cannot retry,
// is left to the session to run again. Our own loop (not the SDKs') so callers see every retry
// (onRetry), permits are taken per request (beforeAttempt) and server delays can be capped.
import { sleepUnlessAborted } from '../util/sleep-unless-aborted.js';
import { aiDefaults } from './defaults.js';
import { classifyProviderError, scrubCredentials } from './provider-error.js';
import { parseRateLimitHeaders, type RateLimitSnapshot } from './rate-limit-headers.js';
import type { AssistantMessage, ProviderErrorKind, StreamOptions } from './types.js';

/** A failed attempt, as the retry loop needs to see it. */
export interface AttemptFailure {
  message: string;
  /** undefined: a new request cannot fix it. */
  kind?: ProviderErrorKind;
  /** 'timeout': our own watchdog gave up on a silent stream (AssistantMessage.errorCause). */
  cause?: 'timeout';
  status?: number;
  /** Delay the server asked for (retry-after-ms / retry-after), in ms. */
  serverDelayMs?: number;
  /** The error response's rate-limit headers (rate-limit-headers.ts). */
  rateLimits?: RateLimitSnapshot;
}

/**
 * A provider's error response as the retry loop sees it: "429 rate_limit_error: slow down (request
 * req_1)", its kind, and the delay and rate limits its headers carry. Each SDK's adapter reads the
 * fields; this is the one place they become a failure.
 */
export function errorResponseFailure(e: {
  status: number | undefined;
  type: string | undefined;
  apiMessage: string;
  requestId: string | null | undefined;
  headers: HeaderSource | undefined | null;
}): AttemptFailure {
  const where = e.requestId ? ` (request ${e.requestId})` : '';
  const message = `${e.status !== undefined ? `${e.status} ` : ''}${e.type ? `${e.type}: ` : ''}${e.apiMessage}${where}`;
  const kind = classifyProviderError({ status: e.status, type: e.type, message: e.apiMessage });
  const rateLimits = parseRateLimitHeaders(e.headers);
  return {
    message,
    kind,
    status: e.status,
    serverDelayMs: serverRetryDelayMs(e.headers),
    ...(rateLimits ? { rateLimits } : {}),
  };
}

/** How many retries one call may make and how long it waits between them. */
export interface ProviderRetrySettings {
  maxRetries: number;
  baseDelayMs: number;
  maxRetryDelayMs: number;
  maxBackoffMs: number;
  jitter: number;
}

export function providerRetrySettings(options: StreamOptions = {}): ProviderRetrySettings {
  return {
    maxRetries: Math.max(0, options.maxRetries ?? aiDefaults.maxRetries),
    baseDelayMs: Math.max(0, options.retryBaseDelayMs ?? aiDefaults.retryBaseDelayMs),
    maxRetryDelayMs: Math.max(0, options.maxRetryDelayMs ?? aiDefaults.maxRetryDelayMs),
    maxBackoffMs: aiDefaults.maxBackoffMs,
    jitter: aiDefaults.retryJitter,
  };
}

/** What a final failure tells the caller beyond its text (AssistantMessage errorStatus / errorKind / errorRetryable). */
export type FailureFields = Pick<AssistantMessage, 'errorStatus' | 'errorKind' | 'errorCause' | 'errorRetryable'>;

function failureFields(f: AttemptFailure, retryable: boolean): FailureFields {
  return {
    ...(f.status !== undefined ? { errorStatus: f.status } : {}),
    ...(f.kind !== undefined ? { errorKind: f.kind } : {}),
    ...(f.cause !== undefined ? { errorCause: f.cause } : {}),
    ...(retryable ? { errorRetryable: true } : {}),
  };
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
 * Delay before retry number `retry` (1-based). A server-requested delay is honoured, clamped to
 * maxRetryDelayMs (0 = no cap); otherwise exponential backoff from baseDelayMs with jitter.
 */
export function retryDelayMs(
  retry: number,
  failure: AttemptFailure,
  settings: ProviderRetrySettings,
  random = Math.random,
): number {
  const cap = settings.maxRetryDelayMs > 0 ? settings.maxRetryDelayMs : Number.POSITIVE_INFINITY;
  // Rounded up, never down: a request sent before the named time is refused again (and at OpenAI
  // counted), and a wait under half a millisecond must not become no wait at all. The tolerance
  // keeps 0.1 s (100.00000000000001 ms in binary) at 100.
  if (failure.serverDelayMs !== undefined) return Math.ceil(Math.min(failure.serverDelayMs, cap) - 1e-6);
  const exp = settings.baseDelayMs * 2 ** (retry - 1);
  const capped = Math.min(exp, settings.maxBackoffMs, cap);
  return Math.round(capped * (1 - settings.jitter * random()));
}

/** How one request went: its failure (undefined = success) and how far its reply got. */
export interface AttemptOutcome {
  failure?: AttemptFailure;
  /** The response's headers arrived (onAttemptEnd was already called with started: true). */
  responseStarted: boolean;
  /** Content reached the caller: a retry would repeat it, so this failure is not retried here. */
  contentStarted: boolean;
}

/** How the loop ended. */
export type AttemptsEnd<O extends AttemptOutcome> =
  | { type: 'done'; outcome: O }
  | { type: 'aborted'; message?: string }
  | { type: 'failed'; message: string; fields: FailureFields };

export interface AttemptHooks<O extends AttemptOutcome> {
  /** Sends request number `attempt` (1-based) and reads its reply. Never throws. */
  send(attempt: number): Promise<O>;
  /** A failure fixed by changing the request rather than waiting (a refused tool_choice form): true sends again at once, uncounted. */
  adjust?(outcome: O): boolean;
  /** Clears what a failed request left in the reply before the next one. */
  reset(): void;
  /** Values never to show in an error text (the API key). */
  secrets?: readonly (string | undefined)[];
}

/** The final text of a failure: what failed and, for a transient one, that the budget is spent. */
function finalText(
  f: AttemptFailure,
  requests: number,
  settings: ProviderRetrySettings,
  contentStarted: boolean,
): string {
  if (f.kind === undefined || contentStarted) return f.message;
  if (settings.maxRetries === 0) return `${f.message} (attempt 1 of 1: retries are off)`;
  return `${f.message} (attempt ${requests} of ${settings.maxRetries + 1} failed; no retries left)`;
}

/**
 * Runs requests until one succeeds, a failure is final, the budget is spent or the signal aborts.
 * Every request first awaits options.beforeAttempt (an orchestrator's permit); a failure before
 * any content streamed is retried after retryDelayMs when its kind is transient.
 */
export async function runProviderAttempts<O extends AttemptOutcome>(
  options: StreamOptions,
  hooks: AttemptHooks<O>,
): Promise<AttemptsEnd<O>> {
  const settings = providerRetrySettings(options);
  const secrets = [options.apiKey, ...(hooks.secrets ?? [])];
  let retries = 0;
  /** 429s waited out without spending the budget (StreamOptions.rateLimitWaits), and how long they took. */
  let waits = 0;
  let waitedMs = 0;
  for (let attempt = 1; ; attempt++) {
    if (options.beforeAttempt) {
      try {
        await options.beforeAttempt({ attempt });
      } catch (err) {
        return { type: 'failed', message: err instanceof Error ? err.message : String(err), fields: {} };
      }
      if (options.signal?.aborted) return { type: 'aborted' };
    }
    const outcome = await hooks.send(attempt);
    if (!outcome.responseStarted) {
      const rateLimits = outcome.failure?.rateLimits;
      options.onAttemptEnd?.({
        attempt,
        started: false,
        status: outcome.failure?.status,
        ...(rateLimits ? { rateLimits } : {}),
      });
    }
    if (!outcome.failure) return options.signal?.aborted ? { type: 'aborted' } : { type: 'done', outcome };
    const failure = { ...outcome.failure, message: scrubCredentials(outcome.failure.message, secrets) };
    if (options.signal?.aborted) return { type: 'aborted', message: failure.message };
    if (hooks.adjust?.(outcome)) {
      hooks.reset();
      continue;
    }
    const transient = failure.kind !== undefined;
    // A limit that is only busy says how long to wait: that wait is not a failed try. One that names
    // no wait (OpenAI sends no retry-after) is backed off exponentially over the call's busy waits:
    // the provider counts every refused request, so a crowd resending at a fixed pace stays refused.
    const busyWaitMs = retryDelayMs(retries + waits + 1, failure, settings);
    const uncounted =
      failure.kind === 'rate_limit' &&
      (failure.serverDelayMs !== undefined || failure.rateLimits !== undefined) &&
      waits < (options.rateLimitWaits ?? 0) &&
      waitedMs + busyWaitMs <= (options.rateLimitWaitMs ?? Number.POSITIVE_INFINITY);
    if (!transient || outcome.contentStarted || (!uncounted && retries >= settings.maxRetries)) {
      return {
        type: 'failed',
        message: finalText(failure, retries + 1, settings, outcome.contentStarted),
        fields: failureFields(failure, transient && outcome.contentStarted),
      };
    }
    if (uncounted) waits++;
    else retries++;
    const delayMs = uncounted ? busyWaitMs : retryDelayMs(Math.max(1, retries), failure, settings);
    if (uncounted) waitedMs += delayMs;
    options.onRetry?.({
      attempt: retries + waits,
      maxRetries: settings.maxRetries,
      delayMs,
      status: failure.status,
      kind: failure.kind!,
      errorMessage: failure.message,
      ...(uncounted ? { uncounted: true } : {}),
    });
    if (!(await sleepUnlessAborted(delayMs, options.signal))) return { type: 'aborted' };
    hooks.reset();
  }
}
