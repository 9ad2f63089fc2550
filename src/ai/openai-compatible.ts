// OpenAI-compatible providers (Chat Completions "openai-chat", Responses API "openai-responses")
// through the official `openai` SDK, for api.openai.com and every server that speaks its protocol
// (Ollama, vLLM, LM Studio, llama.cpp server, OpenRouter, gateways). Same contract as the
// Anthropic provider: the SDK is imported lazily, its own retries are off, our loop retries
// 429/5xx/overloaded/connection failures before anything streamed (honouring retry-after), and
// every failure ends as an assistant message whose text names the status, so rate limits, the
// failure classes and overflow recovery above this layer work unchanged.
import { finishStream } from './finish-stream.js';
import type OpenAI from 'openai';
import { ClientCache } from './client-cache.js';
import { aiDefaults } from './defaults.js';
import { AssistantMessageEventStream, emptyAssistantMessage } from './event-stream.js';
import { ChatStreamReader } from './openai-chat-stream.js';
import {
  buildChatRequest,
  buildResponsesRequest,
  hasObjectToolChoice,
  rememberStringToolChoice,
  withStringToolChoice,
} from './openai-request.js';
import { ResponsesStreamReader } from './openai-responses-stream.js';
import { classifyProviderError, rawErrorBody, readErrorBody } from './provider-error.js';
import { readReply, runProviderCall } from './provider-call.js';
import { type AttemptFailure, errorResponseFailure } from './provider-retry.js';
import { estimateMessageTokens, estimateTextTokens } from './token-estimate.js';
import type { AssistantMessage, Context, Model, StreamOptions } from './types.js';
import { StreamFailure } from './stream-watchdog.js';
import { computeCost, emptyUsage } from './usage.js';

export const OPENAI_CHAT_API = 'openai-chat';
export const OPENAI_RESPONSES_API = 'openai-responses';
export const OPENAI_DEFAULT_BASE_URL = 'https://api.openai.com/v1';
export const OPENAI_DEFAULT_KEY_ENV = 'OPENAI_API_KEY';

type Sdk = typeof import('openai');

let sdkPromise: Promise<Sdk> | undefined;
function loadSdk(): Promise<Sdk> {
  sdkPromise ??= import('openai');
  return sdkPromise;
}

const clients = new ClientCache<OpenAI>();
function clientFor(sdk: Sdk, apiKey: string, baseURL: string): OpenAI {
  return clients.get(apiKey, baseURL, (settings) => new sdk.default(settings));
}

/** True for a server on this machine or a private network: no key needed (Ollama, vLLM, LM Studio...). */
function isLocalUrl(url: string): boolean {
  try {
    const host = new URL(url).hostname;
    return (
      host === 'localhost' ||
      host === '::1' ||
      host === '[::1]' ||
      /^127\./.test(host) ||
      /^10\./.test(host) ||
      /^192\.168\./.test(host) ||
      /^172\.(1[6-9]|2\d|3[01])\./.test(host) ||
      host.endsWith('.local')
    );
  } catch {
    return false;
  }
}

/** The key for a model: options.apiKey, else the model's key variable; local servers need none. */
export function openAIKeyFor(model: Model, options: StreamOptions): { key?: string; missing?: string } {
  if (options.apiKey) return { key: options.apiKey };
  const env = model.apiKeyEnv ?? OPENAI_DEFAULT_KEY_ENV;
  const fromEnv = process.env[env];
  if (fromEnv) return { key: fromEnv };
  const base = model.baseUrl ?? OPENAI_DEFAULT_BASE_URL;
  if (model.apiKeyEnv === undefined && isLocalUrl(base)) return { key: 'not-needed' };
  return {
    missing:
      `No API key for provider "${model.provider}" (${base}): set ${env}. ` +
      'A local server without keys: leave api_key_env out of the provider; to run offline, use --provider scripted --script FILE.',
  };
}

/** Describes a thrown error for the retry loop and for the final errorMessage. */
export function describeOpenAIError(err: unknown, sdk: Sdk, model: Pick<Model, 'provider'>): AttemptFailure {
  const who = `the ${model.provider} API`;
  // A lost or silent stream: a connection failure (the retry loop decides whether a retry may repeat content).
  if (err instanceof StreamFailure)
    return { message: err.message, kind: 'connection', ...(err.timedOut ? { cause: 'timeout' as const } : {}) };
  if (err instanceof sdk.APIConnectionError) {
    const cause = (err as { cause?: unknown }).cause;
    return {
      message: `Could not reach ${who}: ${err.message}${cause instanceof Error ? ` (${cause.message})` : ''}`,
      kind: 'connection',
    };
  }
  if (err instanceof sdk.APIError) {
    const status = typeof err.status === 'number' ? err.status : undefined;
    // The SDK drops a body without an "error" field (vLLM's flat one): read the raw body first.
    const fromBody = readErrorBody(rawErrorBody(err.headers) ?? (err.error ? { error: err.error } : undefined));
    const apiMessage = fromBody.message ?? err.message;
    const type = err.type ?? fromBody.type;
    return errorResponseFailure({ status, type, apiMessage, requestId: err.requestID, headers: err.headers });
  }
  const message =
    err instanceof Error ? err.message + (err.cause instanceof Error ? ` (${err.cause.message})` : '') : String(err);
  if (classifyProviderError({ message }) === 'connection')
    return { message: `The connection to ${who} was lost: ${message}`, kind: 'connection' };
  return { message };
}

/** A stream error reported inside an SSE body (no status): classified by its code and text. */
function describeStreamError(e: { message: string; code?: string }): AttemptFailure {
  const message = `${e.code ? `${e.code}: ` : ''}${e.message}`;
  return { message, kind: classifyProviderError({ type: e.code, message }) };
}

/** Token counts when the server sent none: the request and reply at chars/4, marked estimated. */
export function estimateUsage(model: Model, context: Context, output: AssistantMessage): void {
  let input = context.systemPrompt ? estimateTextTokens(context.systemPrompt) : 0;
  for (const m of context.messages) input += estimateMessageTokens(m);
  for (const t of context.tools ?? [])
    input += estimateTextTokens(`${t.name}${t.description}${JSON.stringify(t.parameters)}`);
  output.usage.input = input;
  output.usage.cacheRead = 0;
  output.usage.cacheWrite = 0;
  output.usage.output = estimateMessageTokens(output);
  output.usage.estimated = true;
  computeCost(model, output.usage);
}

/** Streams one reply over Chat Completions. Returns at once; never throws. */
export const streamOpenAIChat = streamOver('chat');

/** Streams one reply over the Responses API. Returns at once; never throws. */
export const streamOpenAIResponses = streamOver('responses');

function streamOver(
  api: 'chat' | 'responses',
): (model: Model, context: Context, options?: StreamOptions) => AssistantMessageEventStream {
  return (model, context, options = {}) => start(model, context, options, api);
}

function start(
  model: Model,
  context: Context,
  options: StreamOptions,
  api: 'chat' | 'responses',
): AssistantMessageEventStream {
  const stream = new AssistantMessageEventStream(model);
  const output = emptyAssistantMessage(model);
  // The request is built now: the caller may change context.messages once we return.
  let params: { tool_choice?: unknown };
  try {
    params =
      api === 'chat' ? buildChatRequest(model, context, options) : buildResponsesRequest(model, context, options);
  } catch (err) {
    finish(stream, output, options, `Could not build the request: ${err instanceof Error ? err.message : String(err)}`);
    return stream;
  }
  const estimateContext: Context = {
    systemPrompt: context.systemPrompt,
    messages: [...context.messages],
    tools: context.tools,
  };
  run(model, estimateContext, params, options, api, stream, output).catch((err: unknown) => {
    finish(
      stream,
      output,
      options,
      `${model.provider} provider failed: ${err instanceof Error ? err.message : String(err)}`,
    );
  });
  return stream;
}

const finish = finishStream;

type Reader = ChatStreamReader | ResponsesStreamReader;

async function run(
  model: Model,
  context: Context,
  initialParams: { tool_choice?: unknown },
  options: StreamOptions,
  api: 'chat' | 'responses',
  stream: AssistantMessageEventStream,
  output: AssistantMessage,
): Promise<void> {
  const key = openAIKeyFor(model, options);
  if (!key.key) return finish(stream, output, options, key.missing);
  const apiKey = key.key;
  if (options.signal?.aborted) return finish(stream, output, options);

  const sdk = await loadSdk();
  const client = clientFor(sdk, key.key, model.baseUrl ?? OPENAI_DEFAULT_BASE_URL);
  let params = initialParams;
  if (options.onPayload) params = (options.onPayload(params, model) as typeof params | undefined) ?? params;
  const headers: Record<string, string> = { ...model.headers, ...options.headers };
  const toolNames = (context.tools ?? []).map((t) => t.name);

  const idleMs = options.streamIdleTimeoutMs ?? aiDefaults.streamIdleTimeoutMs;
  let toolChoiceRetried = false;
  await runProviderCall<Reader>(stream, output, options, {
    apiKey,
    newReader: (emitStart) =>
      api === 'chat'
        ? new ChatStreamReader(model, output, stream, emitStart, toolNames)
        : new ResponsesStreamReader(model, output, stream, emitStart),
    send: (reader, onHeaders) => {
      const who = `The ${model.provider} API`;
      const requestOptions = (signal: AbortSignal) => ({ signal, maxRetries: 0, headers });
      const describe = (err: unknown): AttemptFailure => describeOpenAIError(err, sdk, model);
      const common = { who, idleMs, signal: options.signal, onHeaders };
      if (reader instanceof ChatStreamReader)
        return readReply({
          ...common,
          reader,
          open: (signal) =>
            client.chat.completions
              .create(params as OpenAI.Chat.Completions.ChatCompletionCreateParamsStreaming, requestOptions(signal))
              .withResponse(),
          handle: (chunk) => reader.handle(chunk),
          complete: () => {
            if (reader.finished) return undefined;
            reader.end();
            throw new StreamFailure(
              `${who} stream ended before the reply was complete (no finish_reason; connection closed mid-reply).`,
            );
          },
          describe,
        });
      return readReply({
        ...common,
        reader,
        open: (signal) =>
          client.responses
            .create(params as OpenAI.Responses.ResponseCreateParamsStreaming, requestOptions(signal))
            .withResponse(),
        handle: (ev) => reader.handle(ev),
        complete: () => {
          if (reader.streamError) return describeStreamError(reader.streamError);
          if (!reader.finished)
            throw new StreamFailure(
              `${who} stream ended before the response was complete (connection closed mid-reply).`,
            );
          return undefined;
        },
        // A failure the server reported inside the stream says more than the error that ended the read.
        describe: (err, idle) =>
          !idle && reader.streamError ? describeStreamError(reader.streamError) : describe(err),
      });
    },
    // A server that rejects a named tool_choice object gets the string form, once, and keeps it.
    adjust: ({ failure, contentStarted }) => {
      if (
        failure?.status !== 400 ||
        toolChoiceRetried ||
        contentStarted ||
        !hasObjectToolChoice(params) ||
        !/tool_choice/i.test(failure.message)
      )
        return false;
      toolChoiceRetried = true;
      rememberStringToolChoice(model);
      params = withStringToolChoice(params);
      return true;
    },
    reset: () => {
      output.usage = emptyUsage();
      output.stopReason = 'stop';
      output.content = [];
    },
    onDone: (reader) => {
      if (!reader?.sawUsage) estimateUsage(model, context, output);
    },
  });
}
