// Layer 0 base types: one message / content / tool / model vocabulary for every provider.
// Higher layers extend these (AgentMessage, AgentTool, ...) and never add fields here.

/** Plain text. `textSignature` is opaque provider metadata. */
export interface TextContent {
  type: 'text';
  text: string;
  textSignature?: string;
}

/** Model reasoning. Redacted thinking keeps its opaque payload in `thinkingSignature`. */
export interface ThinkingContent {
  type: 'thinking';
  thinking: string;
  thinkingSignature?: string;
  redacted?: boolean;
}

/** Base64 image data. */
export interface ImageContent {
  type: 'image';
  data: string;
  mimeType: string;
}

/** A tool call requested by the model. `arguments` is the parsed JSON object. */
export interface ToolCall {
  type: 'toolCall';
  id: string;
  name: string;
  arguments: Record<string, unknown>;
}

export interface UserMessage {
  role: 'user';
  content: string | (TextContent | ImageContent)[];
  timestamp: number;
}

export type StopReason = 'stop' | 'length' | 'toolUse' | 'error' | 'aborted';

export interface Cost {
  input: number;
  output: number;
  cacheRead: number;
  cacheWrite: number;
  total: number;
}

export interface Usage {
  input: number;
  output: number;
  cacheRead: number;
  cacheWrite: number;
  totalTokens: number;
  cost: Cost;
  /**
   * True when the server reported no usage and the counts are our estimate (chars/4 of the
   * request and reply): costs built on them are approximate and say so.
   */
  estimated?: boolean;
}

/**
 * A model reply. Errors and aborts are not exceptions: they are assistant messages with
 * stopReason "error" / "aborted" and an errorMessage, keeping whatever was streamed.
 */
export interface AssistantMessage {
  role: 'assistant';
  content: (TextContent | ThinkingContent | ToolCall)[];
  api: string;
  provider: string;
  model: string;
  usage: Usage;
  stopReason: StopReason;
  errorMessage?: string;
  /** stopReason "error" from a provider request: its HTTP status, when the server answered with one. */
  errorStatus?: number;
  /**
   * stopReason "error": the kind of transient failure (from the status, the error body's type, or
   * for status-less errors its wording), classified once in ai/ (provider-error.ts); undefined
   * when a new request cannot fix it (a 4xx, an overflow, a bad key).
   */
  errorKind?: ProviderErrorKind;
  /**
   * stopReason "error": 'timeout' when ai/ itself gave up on the request (the stream sent nothing
   * for streamIdleTimeoutMs), so callers classify it from this field, never from the wording.
   */
  errorCause?: 'timeout';
  /**
   * stopReason "error": true when running the turn again may help and the call did not already
   * spend its retries on this failure: it came after the reply began streaming (the provider
   * cannot retry a reply it has half delivered), or the stream function has no retry loop (the
   * scripted provider). The session's turn retry acts on this alone, so a failure is retried by
   * one layer only.
   */
  errorRetryable?: boolean;
  timestamp: number;
}

/** The outcome of one tool call. `details` is for UIs and summaries and never reaches the model. */
export interface ToolResultMessage<TDetails = unknown> {
  role: 'toolResult';
  toolCallId: string;
  toolName: string;
  content: (TextContent | ImageContent)[];
  details?: TDetails;
  isError: boolean;
  timestamp: number;
}

export type Message = UserMessage | AssistantMessage | ToolResultMessage;

/** Reasoning effort for models that support it ("off" lives in the agent layer). */
export type ThinkingLevel = 'minimal' | 'low' | 'medium' | 'high' | 'xhigh';

/** $ per million tokens. */
export interface ModelCost {
  input: number;
  output: number;
  cacheRead: number;
  cacheWrite: number;
}

export interface Model {
  id: string;
  name: string;
  /** Which provider implementation serves it, e.g. "anthropic-messages" or "scripted". */
  api: string;
  provider: string;
  baseUrl?: string;
  reasoning: boolean;
  input: ('text' | 'image')[];
  cost: ModelCost;
  contextWindow: number;
  maxTokens: number;
  /** maxTokens was declared by the user: requests ask for exactly it (capped by the window), not a third of it. */
  maxTokensDeclared?: boolean;
  headers?: Record<string, string>;
  /** Name of the environment variable holding this model's API key (read where the request is made). */
  apiKeyEnv?: string;
  /** Quirks of an OpenAI-compatible server (ignored by other providers). */
  compat?: OpenAICompat;
}

/** What an OpenAI-compatible server does differently from api.openai.com. */
export interface OpenAICompat {
  /** Tool calls the model writes as JSON text in its reply are taken as calls (models served without a tool parser). */
  textToolCalls?: boolean;
  /**
   * The tool_choice form for naming a tool: 'object' ({type:'function', function:{name}}, the
   * OpenAI form) or 'string' ('required'). Unset: the object form, and a 400 on it switches to the
   * string form for the rest of the process.
   */
  toolChoice?: 'object' | 'string';
  /** Send stream_options.include_usage (default true; a few servers reject the field). */
  streamUsage?: boolean;
  /** The output budget field: 'max_tokens' (default, every server) or 'max_completion_tokens'. */
  maxTokensField?: 'max_tokens' | 'max_completion_tokens';
}

/** JSON Schema of a tool's parameters, as the model sees it. */
export interface ToolParametersSchema {
  type: 'object';
  properties?: Record<string, unknown>;
  required?: string[];
  [key: string]: unknown;
}

/** A tool as the model sees it: name, description, JSON Schema. */
export interface Tool {
  name: string;
  description: string;
  parameters: ToolParametersSchema;
}

export interface Context {
  systemPrompt?: string;
  messages: Message[];
  tools?: Tool[];
}

/** The streaming protocol: start (blockStart delta* blockEnd)* (done | error). */
export type AssistantMessageEvent =
  | { type: 'start'; partial: AssistantMessage }
  | { type: 'text_start'; contentIndex: number; partial: AssistantMessage }
  | { type: 'text_delta'; contentIndex: number; delta: string; partial: AssistantMessage }
  | { type: 'text_end'; contentIndex: number; content: string; partial: AssistantMessage }
  | { type: 'thinking_start'; contentIndex: number; partial: AssistantMessage }
  | { type: 'thinking_delta'; contentIndex: number; delta: string; partial: AssistantMessage }
  | { type: 'thinking_end'; contentIndex: number; content: string; partial: AssistantMessage }
  | { type: 'toolcall_start'; contentIndex: number; partial: AssistantMessage }
  | { type: 'toolcall_delta'; contentIndex: number; delta: string; partial: AssistantMessage }
  | { type: 'toolcall_end'; contentIndex: number; toolCall: ToolCall; partial: AssistantMessage }
  | { type: 'done'; reason: 'stop' | 'length' | 'toolUse'; message: AssistantMessage }
  | { type: 'error'; reason: 'error' | 'aborted'; error: AssistantMessage };

/** A failure a new request can fix: a rate limit, an overload, a server error, a lost connection. */
export type ProviderErrorKind = 'rate_limit' | 'overloaded' | 'server' | 'connection';

export interface RetryInfo {
  /** 1-based number of the retry about to happen (request attempt + 1 follows). */
  attempt: number;
  maxRetries: number;
  delayMs: number;
  /** HTTP status when the failure had one (429, 529, 500...). */
  status?: number;
  kind: ProviderErrorKind;
  /** The failure of the request that just failed (scrubbed of credentials). */
  errorMessage: string;
  /** A busy rate limit waited out without spending the retry budget (StreamOptions.rateLimitWaits). */
  uncounted?: boolean;
}

export type CacheRetention = 'none' | 'short' | 'long';

export interface StreamOptions {
  signal?: AbortSignal;
  apiKey?: string;
  maxTokens?: number;
  temperature?: number;
  /** Reasoning effort; undefined means thinking off. */
  reasoning?: ThinkingLevel;
  cacheRetention?: CacheRetention;
  /**
   * Whether the model may call the tools it is given: 'auto' (the provider's default when unset)
   * or 'none' (text only; the tools stay in the request), 'required' (some tool), { name } (that
   * tool). On Anthropic a tool_choice other than
   * the conversation's invalidates its cached messages.
   */
  toolChoice?: 'auto' | 'none' | 'required' | { name: string };
  headers?: Record<string, string>;
  /**
   * The call's retry budget: retries of 429/529/5xx/connection errors before any content streamed
   * (default 3; 0 = exactly one request). An AgentSession sets it from its retry settings.
   */
  maxRetries?: number;
  /** First backoff delay in ms; doubles each retry, with jitter (default 1000). */
  retryBaseDelayMs?: number;
  /** Called before each provider-level retry (lets an orchestrator see rate limits and pause). */
  onRetry?: (info: RetryInfo) => void;
  /**
   * Awaited before every request attempt (the first and each retry). An orchestrator takes a
   * rate-limit permit here, so every request that reaches the provider was permitted. Throwing
   * fails the call with the thrown message (e.g. "budget exhausted").
   */
  beforeAttempt?: (info: { attempt: number }) => Promise<void>;
  /**
   * Called when an attempt's response starts arriving, or the attempt failed without one.
   * `rateLimits`: what the response's rate-limit headers said (a success or a 429), for pacing.
   */
  onAttemptEnd?: (info: {
    attempt: number;
    started: boolean;
    status?: number;
    rateLimits?: import('./rate-limit-headers.js').RateLimitSnapshot;
  }) => void;
  /**
   * How many 429s that name their wait (retry-after, or rate-limit headers) may be waited out
   * without spending maxRetries (default 0). An orchestrator that paces calls by the provider's
   * limits sets it: a limit that is only busy is waited for; a provider that stays down still fails.
   */
  rateLimitWaits?: number;
  /**
   * The longest those waits may add up to for one call, in ms (default: no bound but their count).
   * A pacing caller bounds the waits by time: an unpaced crowd can be refused many times in a row
   * while the limit is only busy, and a count alone then fails calls a little more waiting would pass.
   */
  rateLimitWaitMs?: number;
  /** A stream that sends nothing for this long is aborted and reported as an error (default 120000). */
  streamIdleTimeoutMs?: number;
  /** Cap for a server-requested retry delay in ms (default 60000; 0 disables the cap). */
  maxRetryDelayMs?: number;
  sessionId?: string;
  /** Inspect or replace the provider request payload before it is sent. */
  onPayload?: (payload: unknown, model: Model) => unknown;
}

/**
 * Any stream-producing function with the provider contract: returns synchronously, never throws
 * (failures are error events). A provider must not keep `context.messages` past the call: the
 * agent loop hands over its cached array, which keeps growing afterwards (copy what you record).
 */
export type StreamFunction = (
  model: Model,
  context: Context,
  options?: StreamOptions,
) => import('./event-stream.js').AssistantMessageEventStream;
