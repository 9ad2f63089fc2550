// Built-in provider registration. The Anthropic provider is registered once, globally; scripted
// providers are made per script, so callers usually pass one as a `streamFn` instead.
import { streamAnthropic } from './anthropic.js';
import { ANTHROPIC_API, SCRIPTED_API } from './models.js';
import { OPENAI_CHAT_API, OPENAI_RESPONSES_API, streamOpenAIChat, streamOpenAIResponses } from './openai-compatible.js';
import { getProvider, registerProvider } from './registry.js';
import {
  createScriptedProvider,
  type ScriptedProvider,
  type ScriptedProviderOptions,
  type ScriptedScript,
  type ScriptedTurn,
} from './scripted.js';

/**
 * Registers "anthropic-messages", "openai-chat" and "openai-responses" (idempotent; each SDK is
 * only loaded on its first request).
 */
export function registerBuiltInProviders(): void {
  if (getProvider(ANTHROPIC_API) !== streamAnthropic) registerProvider(ANTHROPIC_API, streamAnthropic);
  if (getProvider(OPENAI_CHAT_API) !== streamOpenAIChat) registerProvider(OPENAI_CHAT_API, streamOpenAIChat);
  if (getProvider(OPENAI_RESPONSES_API) !== streamOpenAIResponses)
    registerProvider(OPENAI_RESPONSES_API, streamOpenAIResponses);
}

/**
 * Creates a scripted provider and registers it under `api` (default "scripted"), replacing any
 * earlier one there; models from scriptedModel() then reach it through the registry.
 */
export function registerScriptedProvider(
  script: ScriptedTurn[] | ScriptedScript,
  api: string = SCRIPTED_API,
  options?: ScriptedProviderOptions,
): ScriptedProvider {
  const provider = createScriptedProvider(script, options);
  registerProvider(api, provider);
  return provider;
}
