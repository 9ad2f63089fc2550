// The Anthropic Messages provider through the official SDK. The SDK is imported lazily (it costs
// ~250 ms), its own retries are off (maxRetries: 0) and our loop retries 429/529/5xx/connection
// failures while nothing has streamed yet. Every failure ends as an assistant message.
import { finishStream } from './finish-stream.js';
import type Anthropic from '@anthropic-ai/sdk';
import { buildAnthropicRequest, effectiveBaseUrl } from './anthropic-request.js';
import { AnthropicStreamReader } from './anthropic-stream.js';
import { aiDefaults } from './defaults.js';
import { AssistantMessageEventStream, emptyAssistantMessage } from './event-stream.js';
import {
  failureFields,
  type AttemptFailure,
  retryDelayMs,
  retryKindForErrorType,
  retryKindForStatus,
  retryPolicy,
  serverRetryDelayMs,
  sleepUnlessAborted,
} from './provider-retry.js';
import type { AssistantMessage, Context, Model, StreamOptions } from './types.js';
import { emptyUsage } from './usage.js';

type Sdk = typeof import('@anthropic-ai/sdk');

let sdkPromise: Promise<Sdk> | undefined;
function loadSdk(): Promise<Sdk> {
  sdkPromise ??= import('@anthropic-ai/sdk');
  return sdkPromise;
}

export const MISSING_API_KEY_MESSAGE =
  'No Anthropic API key: set ANTHROPIC_API_KEY (or pass apiKey in the options). ' +
  'To run offline without a key, use the scripted provider: --provider scripted --script FILE.';

// One client per key and URL: clients hold connection pools worth reusing across turns.
const clients = new Map<string, Anthropic>();
function clientFor(sdk: Sdk, apiKey: string, baseURL: string): Anthropic {
  const key = `${baseURL}\n${apiKey}`;
  let client = clients.get(key);
  if (!client) {
    client = new sdk.default({ apiKey, baseURL, maxRetries: 0 });
    clients.set(key, client);
  }
  return client;
}

/** Marks a failure our own code detected (idle stream, cut stream), as opposed to an SDK error. */
class StreamFailure extends Error {
  constructor(
    message: string,
    readonly retryable: boolean,
  ) {
    super(message);
  }
}

const CONNECTION_ERROR_TEXT = /terminated|ECONNRESET|ECONNREFUSED|EPIPE|socket|other side closed|fetch failed|network/i;

/** Describes a thrown error for the retry loop and for the final errorMessage. */
export function describeAnthropicError(err: unknown, sdk: Sdk): AttemptFailure {
  if (err instanceof StreamFailure) return { message: err.message, kind: err.retryable ? 'connection' : undefined };
  if (err instanceof sdk.APIConnectionError) {
    return { message: `Could not reach the Anthropic API: ${err.message}${causeText(err)}`, kind: 'connection' };
  }
  if (err instanceof sdk.APIError) {
    const body = err.error as { error?: { type?: string; message?: string } } | undefined;
    const type = err.type ?? body?.error?.type ?? undefined;
    const apiMessage = err.apiMessage ?? body?.error?.message ?? err.message;
    const status = typeof err.status === 'number' ? err.status : undefined;
    const where = err.requestID ? ` (request ${err.requestID})` : '';
    const message = `${status !== undefined ? `${status} ` : ''}${type ? `${type}: ` : ''}${apiMessage}${where}`;
    const kind = status !== undefined ? retryKindForStatus(status) : retryKindForErrorType(type);
    return { message, kind, status, serverDelayMs: serverRetryDelayMs(err.headers) };
  }
  const message = (err instanceof Error ? err.message : String(err)) + causeText(err);
  if (CONNECTION_ERROR_TEXT.test(message))
    return { message: `The connection to the Anthropic API was lost: ${message}`, kind: 'connection' };
  return { message };
}

function causeText(err: unknown): string {
  const cause = (err as { cause?: unknown }).cause;
  return cause instanceof Error ? ` (${cause.message})` : '';
}

/** Streams one reply from the Messages API. Returns at once; never throws. */
export function streamAnthropic(
  model: Model,
  context: Context,
  options: StreamOptions = {},
): AssistantMessageEventStream {
  const stream = new AssistantMessageEventStream(model);
  const output = emptyAssistantMessage(model);
  run(model, context, options, stream, output).catch((err: unknown) => {
    // Last resort: a bug in this file must still end the stream.
    finish(stream, output, options, `Anthropic provider failed: ${err instanceof Error ? err.message : String(err)}`);
  });
  return stream;
}

const finish = finishStream;

async function run(
  model: Model,
  context: Context,
  options: StreamOptions,
  stream: AssistantMessageEventStream,
  output: AssistantMessage,
): Promise<void> {
  const apiKey = options.apiKey || process.env[model.apiKeyEnv ?? 'ANTHROPIC_API_KEY'];
  if (!apiKey)
    return finish(
      stream,
      output,
      options,
      model.apiKeyEnv
        ? `No API key for provider "${model.provider}": set ${model.apiKeyEnv}.`
        : MISSING_API_KEY_MESSAGE,
    );
  if (options.signal?.aborted) return finish(stream, output, options);

  const sdk = await loadSdk();
  const client = clientFor(sdk, apiKey, effectiveBaseUrl(model));
  const request = buildAnthropicRequest(model, context, options);
  let params = request.params;
  if (options.onPayload) params = (options.onPayload(params, model) as typeof params | undefined) ?? params;

  const policy = retryPolicy(options);
  const idleMs = options.streamIdleTimeoutMs ?? aiDefaults.streamIdleTimeoutMs;
  let started = false;
  const emitStart = (): void => {
    if (started) return;
    started = true;
    stream.push({ type: 'start', partial: output });
  };

  for (let attempt = 0; ; attempt++) {
    const reader = new AnthropicStreamReader(model, output, stream, emitStart);
    // The caller (an orchestrator) may hold every request until it has a permit for it.
    if (options.beforeAttempt) {
      try {
        await options.beforeAttempt({ attempt: attempt + 1 });
      } catch (err) {
        return finish(stream, output, options, err instanceof Error ? err.message : String(err));
      }
      if (options.signal?.aborted) return finish(stream, output, options);
    }
    reader.onResponseStart = () => options.onAttemptEnd?.({ attempt: attempt + 1, started: true });
    const failure = await attemptOnce(sdk, client, params, request.headers, options, idleMs, reader);
    if (!reader.responseStarted)
      options.onAttemptEnd?.({ attempt: attempt + 1, started: false, status: failure?.status });
    if (!failure) {
      if (options.signal?.aborted) return finish(stream, output, options);
      return finish(stream, output, options, reader.stopError);
    }
    if (options.signal?.aborted) return finish(stream, output, options, failure.message);
    const retryable = failure.kind !== undefined && !reader.contentStarted && attempt < policy.maxRetries;
    if (!retryable) {
      const suffix =
        attempt > 0 && failure.kind !== undefined && !reader.contentStarted
          ? ` (gave up after ${attempt} ${attempt === 1 ? 'retry' : 'retries'})`
          : '';
      Object.assign(output, failureFields(failure));
      return finish(stream, output, options, failure.message + suffix);
    }
    const delayMs = retryDelayMs(attempt + 1, failure, policy);
    options.onRetry?.({
      attempt: attempt + 1,
      maxRetries: policy.maxRetries,
      delayMs,
      status: failure.status,
      kind: failure.kind!,
      errorMessage: failure.message,
    });
    if (!(await sleepUnlessAborted(delayMs, options.signal))) return finish(stream, output, options);
    // Nothing but message_start can have arrived: start the next attempt from a clean slate.
    output.usage = emptyUsage();
    output.stopReason = 'stop';
  }
}

/** One HTTP request and its stream. Resolves undefined on success, else the failure. */
async function attemptOnce(
  sdk: Sdk,
  client: Anthropic,
  params: Anthropic.MessageCreateParamsStreaming,
  headers: Record<string, string>,
  options: StreamOptions,
  idleMs: number,
  reader: AnthropicStreamReader,
): Promise<AttemptFailure | undefined> {
  const controller = new AbortController();
  const onAbort = (): void => controller.abort();
  options.signal?.addEventListener('abort', onAbort, { once: true });
  let idle = false;
  const timer = setTimeout(() => {
    idle = true;
    controller.abort();
  }, idleMs);
  try {
    const events = await client.messages.create(params, { signal: controller.signal, maxRetries: 0, headers });
    timer.refresh();
    for await (const ev of events) {
      timer.refresh();
      reader.handle(ev);
    }
    // The SDK ends iteration quietly on abort, so the reason is decided here.
    if (idle) throw idleFailure(idleMs, reader);
    if (options.signal?.aborted) return undefined;
    if (!reader.sawMessageStop) {
      throw new StreamFailure(
        'The Anthropic stream ended before the message was complete (connection closed mid-reply).',
        true,
      );
    }
    return undefined;
  } catch (err) {
    if (idle) return describeAnthropicError(idleFailure(idleMs, reader), sdk);
    return describeAnthropicError(err, sdk);
  } finally {
    clearTimeout(timer);
    options.signal?.removeEventListener('abort', onAbort);
  }
}

function idleFailure(idleMs: number, reader: AnthropicStreamReader): StreamFailure {
  const what = reader.contentStarted ? 'in the middle of the reply' : 'before the reply started';
  return new StreamFailure(
    `The Anthropic API sent nothing for ${idleMs} ms ${what}; the stream was abandoned (streamIdleTimeoutMs).`,
    true,
  );
}
