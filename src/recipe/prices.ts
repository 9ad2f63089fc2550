// Model prices for the dry-run estimate, behind one function, read from the ai layer's model table.
import { getModel, type ModelSpec } from '../ai/models.js';
import { FALLBACK_PRICE, findProvider, isLocalProvider, type ProviderConfig } from '../ai/provider-config.js';
import { modelKey } from './normalize.js';

export interface ModelPrice {
  /** US dollars per million input tokens. */
  input: number;
  /** US dollars per million output tokens. */
  output: number;
  /** US dollars per million input tokens read from / written to the prompt cache. */
  cacheRead: number;
  cacheWrite: number;
  /** False when the model is not in the table and a fallback price was assumed. */
  known: boolean;
  /** Priced 0 because nobody priced it and its provider is local (ollama, lmstudio, vllm, llamacpp, or marked local). */
  local?: boolean;
}

/** Assumed for a model the table does not know: a mid-range price, flagged so the output says so. */
export { FALLBACK_PRICE };

/**
 * The price of `model` as served by `provider`: the recipe's own declaration (`models:`) first,
 * then the built-in table; the scripted provider is free, and so is a model nobody priced on a
 * local provider (`configured`: the recipe's providers:, else the presets decide what is local).
 * The same rule prices calls at run time (ai/provider-config.ts undeclaredModelSpec).
 */
export function lookupModelPrice(
  model: string,
  provider: string,
  declared: Readonly<Record<string, ModelSpec>> = {},
  configured: readonly ProviderConfig[] = [],
): ModelPrice {
  if (provider === 'scripted') return { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, known: true };
  const spec = declared[modelKey(model)] ?? getModel(model.replace(/^anthropic\//, ''));
  if (!spec) {
    const endpoint = provider === 'anthropic' ? undefined : findProvider(provider, configured);
    if (endpoint && isLocalProvider(endpoint))
      return { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, known: true, local: true };
    return { ...FALLBACK_PRICE, known: false };
  }
  const { input, output, cacheRead, cacheWrite } = spec.cost;
  return { input, output, cacheRead, cacheWrite, known: true };
}
