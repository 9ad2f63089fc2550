// Model prices for the dry-run estimate, behind one function, read from the ai layer's model table.
import { getModel, type ModelSpec } from '../ai/models.js';
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
}

/** Assumed for a model the table does not know: a mid-range price, flagged so the output says so. */
export const FALLBACK_PRICE = { input: 3, output: 15, cacheRead: 0.3, cacheWrite: 3.75 } as const;

/**
 * The price of `model` as served by `provider`: the recipe's own declaration (`models:`) first,
 * then the built-in table; the scripted provider is free.
 */
export function lookupModelPrice(
  model: string,
  provider: string,
  declared: Readonly<Record<string, ModelSpec>> = {},
): ModelPrice {
  if (provider === 'scripted') return { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, known: true };
  const spec = declared[modelKey(model)] ?? getModel(model.replace(/^anthropic\//, ''));
  if (!spec) return { ...FALLBACK_PRICE, known: false };
  const { input, output, cacheRead, cacheWrite } = spec.cost;
  return { input, output, cacheRead, cacheWrite, known: true };
}
