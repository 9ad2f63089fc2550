// Public surface of layer 0 (ai): types, streaming, usage, registry, models, providers.
export * from './types.js';
export * from './event-stream.js';
export * from './usage.js';
export * from './registry.js';
export * from './models.js';
export * from './overflow.js';
export * from './transform-messages.js';
export * from './partial-json.js';
export * from './sanitize.js';
export { aiDefaults } from './defaults.js';
export {
  retryDelayMs,
  serverRetryDelayMs,
  type AttemptFailure,
  type ProviderRetrySettings,
} from './provider-retry.js';
export { classifyProviderError, readErrorBody, scrubCredentials } from './provider-error.js';
export { streamAnthropic, MISSING_API_KEY_MESSAGE } from './anthropic.js';
export { buildAnthropicRequest, type AnthropicRequest } from './anthropic-request.js';
export {
  streamOpenAIChat,
  streamOpenAIResponses,
  OPENAI_CHAT_API,
  OPENAI_RESPONSES_API,
  OPENAI_DEFAULT_BASE_URL,
  OPENAI_DEFAULT_KEY_ENV,
} from './openai-compatible.js';
export { buildChatRequest, buildResponsesRequest } from './openai-request.js';
export { parseTextToolCalls, type TextToolCall } from './text-tool-calls.js';
export * from './provider-config.js';
export * from './learned-windows.js';
export * from './scripted.js';
export * from './scripted-script.js';
export * from './providers.js';
export * from './token-estimate.js';
export * from './rate-limit-headers.js';
export { contentText } from './content-text.js';
export * from './system-prompt-parts.js';
