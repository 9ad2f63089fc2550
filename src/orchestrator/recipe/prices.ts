// Model prices for the dry-run estimate, behind one function. When src/ai gains a model table
// (getModel with `cost`), lookupModelPrice should read from it instead of this list.

export interface ModelPrice {
  /** US dollars per million input tokens. */
  input: number;
  /** US dollars per million output tokens. */
  output: number;
  /** False when the model is not in the table and a fallback price was assumed. */
  known: boolean;
}

/** Prefix of a model id -> price, most specific first (published list prices). */
const PRICES: [prefix: string, input: number, output: number][] = [
  ['claude-opus-4-5', 5, 25],
  ['claude-opus-4-6', 5, 25],
  ['claude-opus-4-1', 15, 75],
  ['claude-opus-4', 15, 75],
  ['claude-sonnet-4-5', 3, 15],
  ['claude-sonnet-4-6', 3, 15],
  ['claude-sonnet-4', 3, 15],
  ['claude-3-7-sonnet', 3, 15],
  ['claude-3-5-sonnet', 3, 15],
  ['claude-haiku-4-5', 1, 5],
  ['claude-3-5-haiku', 0.8, 4],
  ['claude-3-haiku', 0.25, 1.25],
];

/** Assumed for an unknown model: a mid-range price, flagged so the output can say so. */
const FALLBACK = { input: 3, output: 15 };

/** The price of `model` as served by `provider`; the scripted provider is free. */
export function lookupModelPrice(model: string, provider: string): ModelPrice {
  if (provider === 'scripted') return { input: 0, output: 0, known: true };
  const id = model.replace(/^anthropic\//, '').toLowerCase();
  const hit = PRICES.find(([prefix]) => id.startsWith(prefix));
  return hit ? { input: hit[1], output: hit[2], known: true } : { ...FALLBACK, known: false };
}
