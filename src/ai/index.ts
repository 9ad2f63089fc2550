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
export { retryDelayMs, serverRetryDelayMs, type AttemptFailure, type RetryPolicy } from './provider-retry.js';
export { streamAnthropic, MISSING_API_KEY_MESSAGE } from './anthropic.js';
export { buildAnthropicRequest, type AnthropicRequest } from './anthropic-request.js';
export * from './scripted.js';
export * from './scripted-script.js';
export * from './providers.js';
export * from './token-estimate.js';
export { contentText } from './content-text.js';
