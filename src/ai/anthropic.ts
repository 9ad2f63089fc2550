// The Anthropic Messages provider through the official SDK. The SDK is imported lazily (it costs
// ~250 ms), its own retries are off (maxRetries: 0) and our loop retries 429/529/5xx/connection
// failures while nothing has streamed yet. Every failure ends as an assistant message.
import { finishStream } from './finish-stream.js';
import type Anthropic from '@anthropic-ai/sdk';
import { buildAnthropicRequest, effectiveBaseUrl } from './anthropic-request.js';
import { AnthropicStreamReader } from './anthropic-stream.js';
import { ClientCache } from './client-cache.js';
import { aiDefaults } from './defaults.js';
import { AssistantMessageEventStream, emptyAssistantMessage } from './event-stream.js';
import { classifyProviderError, rawErrorBody, readErrorBody } from './provider-error.js';
import { readReply, runProviderCall } from './provider-call.js';
import { type AttemptFailure, errorResponseFailure } from './provider-retry.js';
import type { AssistantMessage, Context, Model, StreamOptions } from './types.js';
import { StreamFailure } from './stream-watchdog.js';
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

const clients = new ClientCache<Anthropic>();
function clientFor(sdk: Sdk, apiKey: string, baseURL: string): Anthropic {
  return clients.get(apiKey, baseURL, (settings) => new sdk.default(settings));
}

/** Describes a thrown error for the retry loop and for the final errorMessage. */
export function describeAnthropicError(err: unknown, sdk: Sdk): AttemptFailure {
  // A lost or silent stream: a connection failure (the retry loop decides whether a retry may repeat content).
  if (err instanceof StreamFailure)
    return { message: err.message, kind: 'connection', ...(err.timedOut ? { cause: 'timeout' as const } : {}) };
  if (err instanceof sdk.APIConnectionError) {
    return { message: `Could not reach the Anthropic API: ${err.message}${causeText(err)}`, kind: 'connection' };
  }
  if (err instanceof sdk.APIError) {
    const status = typeof err.status === 'number' ? err.status : undefined;
    // The raw body when the SDK kept less of it (a proxy's flat or plain-text error), else what it parsed.
    const fromBody = readErrorBody(rawErrorBody(err.headers) ?? err.error);
    const type = err.type ?? fromBody.type;
    const apiMessage = fromBody.message ?? err.apiMessage ?? err.message;
    return errorResponseFailure({ status, type, apiMessage, requestId: err.requestID, headers: err.headers });
  }
  const message = (err instanceof Error ? err.message : String(err)) + causeText(err);
  if (classifyProviderError({ message }) === 'connection')
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

  const idleMs = options.streamIdleTimeoutMs ?? aiDefaults.streamIdleTimeoutMs;
  await runProviderCall(stream, output, options, {
    apiKey,
    newReader: (emitStart) => new AnthropicStreamReader(model, output, stream, emitStart),
    send: (reader, onHeaders) =>
      readReply({
        who: 'The Anthropic API',
        idleMs,
        signal: options.signal,
        reader,
        open: (signal) =>
          client.messages.create(params, { signal, maxRetries: 0, headers: request.headers }).withResponse(),
        handle: (ev) => reader.handle(ev),
        onHeaders,
        complete: () => {
          if (!reader.sawMessageStop)
            throw new StreamFailure(
              'The Anthropic stream ended before the message was complete (connection closed mid-reply).',
            );
          return undefined;
        },
        describe: (err) => describeAnthropicError(err, sdk),
      }),
    // Nothing but message_start can have arrived: start the next attempt from a clean slate.
    reset: () => {
      output.usage = emptyUsage();
      output.stopReason = 'stop';
    },
  });
}
