// One call of an SDK provider (Anthropic, OpenAI Chat, OpenAI Responses), request after request
// through the one retry loop (provider-retry.ts), the same for each: a fresh reader per request,
// the response's rate-limit headers reported with its start (tagged with a hash of the key, never
// the key), one request read through the idle watchdog, and the stream ended as done, aborted or
// failed. A provider brings only what differs: how it sends a request and reads its reply.
import type { AssistantMessageEventStream } from './event-stream.js';
import { finishStream } from './finish-stream.js';
import { type AttemptFailure, type AttemptHooks, type AttemptOutcome, runProviderAttempts } from './provider-retry.js';
import { parseRateLimitHeaders, type RateLimitSnapshot, withKeyHash } from './rate-limit-headers.js';
import type { ReplyReader } from './reply-reader.js';
import { type StreamFailure, StreamWatchdog } from './stream-watchdog.js';
import type { AssistantMessage, StreamOptions } from './types.js';

/** What differs between providers in one call. */
export interface ProviderCall<R extends ReplyReader> {
  /** The key the call sends: kept out of error texts, hashed into rate-limit snapshots. */
  apiKey: string;
  /** A reader for the next request; `emitStart` pushes the stream's start event (once per call). */
  newReader(emitStart: () => void): R;
  /** Sends one request and reads its reply into `reader` (see readReply); undefined on success. Never throws. */
  send(reader: R, onHeaders: (headers: Headers) => void): Promise<AttemptFailure | undefined>;
  /** A failure fixed by changing the request (see AttemptHooks.adjust). */
  adjust?: AttemptHooks<AttemptOutcome>['adjust'];
  /** Clears what a failed request left in the reply before the next one. */
  reset(): void;
  /** The call succeeded: last touches to the reply before the stream ends (usage the server did not send). */
  onDone?(reader: R | undefined): void;
}

/** Runs the call to its end and ends `stream` with `output`. */
export async function runProviderCall<R extends ReplyReader>(
  stream: AssistantMessageEventStream,
  output: AssistantMessage,
  options: StreamOptions,
  call: ProviderCall<R>,
): Promise<void> {
  let started = false;
  const emitStart = (): void => {
    if (started) return;
    started = true;
    stream.push({ type: 'start', partial: output });
  };
  let reader: R | undefined;
  const end = await runProviderAttempts(options, {
    send: async (attempt) => {
      const r = call.newReader(emitStart);
      reader = r;
      // The response's rate-limit headers, read before its first event (which reports the start).
      let rateLimits: RateLimitSnapshot | undefined;
      r.onResponseStart = () =>
        options.onAttemptEnd?.({ attempt, started: true, ...(rateLimits ? { rateLimits } : {}) });
      const onHeaders = (h: Headers): void => {
        rateLimits = withKeyHash(parseRateLimitHeaders(h), call.apiKey);
      };
      const failure = await call.send(r, onHeaders);
      if (failure?.rateLimits) failure.rateLimits = withKeyHash(failure.rateLimits, call.apiKey);
      return { failure, responseStarted: r.responseStarted, contentStarted: r.contentStarted };
    },
    ...(call.adjust ? { adjust: call.adjust } : {}),
    reset: () => call.reset(),
    secrets: [call.apiKey],
  });
  if (end.type === 'done') {
    call.onDone?.(reader);
    finishStream(stream, output, options, reader?.stopError);
    return;
  }
  if (end.type === 'failed') Object.assign(output, end.fields);
  finishStream(stream, output, options, end.message);
}

/** One request of a call, as readReply runs it. */
export interface ReplyRequest<T> {
  /** How an idle failure names the server: "The Anthropic API". */
  who: string;
  idleMs: number;
  /** The caller's signal: an abort ends the read without a failure. */
  signal: AbortSignal | undefined;
  reader: ReplyReader;
  /** Sends the request under `signal` (the watchdog's); resolves once the response's headers arrived. */
  open(signal: AbortSignal): Promise<{ data: AsyncIterable<T>; response: { headers: Headers } }>;
  handle(item: T): void;
  onHeaders(headers: Headers): void;
  /** The stream ended by itself: the failure of a reply left incomplete (or a thrown StreamFailure), else undefined. */
  complete(): AttemptFailure | undefined;
  /** The failure a thrown error is; `idle`: the watchdog gave up on a silent stream. */
  describe(err: unknown, idle: boolean): AttemptFailure;
}

/** Sends one request and reads its stream, the idle clock restarting with every event. Never throws. */
export async function readReply<T>(req: ReplyRequest<T>): Promise<AttemptFailure | undefined> {
  const watchdog = new StreamWatchdog(req.idleMs, req.signal);
  const idleFailure = (): StreamFailure => watchdog.idleFailure(req.who, req.reader.contentStarted);
  try {
    const { data, response } = await req.open(watchdog.signal);
    req.onHeaders(response.headers);
    await watchdog.read(data, (item) => req.handle(item));
    // The SDKs end iteration quietly on abort, so the reason is decided here.
    if (watchdog.idle) throw idleFailure();
    if (req.signal?.aborted) return undefined;
    return req.complete();
  } catch (err) {
    if (watchdog.idle) return req.describe(idleFailure(), true);
    return req.describe(err, false);
  } finally {
    watchdog.dispose();
  }
}
