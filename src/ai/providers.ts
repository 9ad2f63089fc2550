// Built-in provider registration. The Anthropic provider is registered once, globally; scripted
// providers are made per script, so callers usually pass one as a `streamFn` instead.
import { streamAnthropic } from './anthropic.js';
import { ANTHROPIC_API, SCRIPTED_API } from './models.js';
import { getProvider, registerProvider } from './registry.js';
import { createScriptedProvider, type ScriptedProvider, type ScriptedProviderOptions, type ScriptedScript, type ScriptedTurn } from './scripted.js';

/** Registers "anthropic-messages" (idempotent; the SDK is only loaded on the first request). */
export function registerBuiltInProviders(): void {
  if (getProvider(ANTHROPIC_API) !== streamAnthropic) registerProvider(ANTHROPIC_API, streamAnthropic);
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
