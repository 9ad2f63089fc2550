// Usage accounting: token counts and their dollar cost from a model's price table.
import type { Model, Usage } from './types.js';

export function emptyUsage(): Usage {
  return {
    input: 0,
    output: 0,
    cacheRead: 0,
    cacheWrite: 0,
    totalTokens: 0,
    cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 },
  };
}

/** Recomputes totalTokens and cost in place (prices are $ per million tokens). */
export function computeCost(model: Pick<Model, 'cost'>, usage: Usage): Usage {
  usage.totalTokens = usage.input + usage.output + usage.cacheRead + usage.cacheWrite;
  usage.cost.input = (model.cost.input / 1e6) * usage.input;
  usage.cost.output = (model.cost.output / 1e6) * usage.output;
  usage.cost.cacheRead = (model.cost.cacheRead / 1e6) * usage.cacheRead;
  usage.cost.cacheWrite = (model.cost.cacheWrite / 1e6) * usage.cacheWrite;
  usage.cost.total = usage.cost.input + usage.cost.output + usage.cost.cacheRead + usage.cost.cacheWrite;
  return usage;
}

/**
 * What prompt caching saved on these tokens against uncached prices, in $: reads cost the cache
 * read price instead of the input price, writes cost the cache write price instead (more: an
 * entry nobody reads makes this negative).
 */
export function cacheSavings(model: Pick<Model, 'cost'>, usage: Pick<Usage, 'cacheRead' | 'cacheWrite'>): number {
  const c = model.cost;
  return (usage.cacheRead * (c.input - c.cacheRead) - usage.cacheWrite * (c.cacheWrite - c.input)) / 1e6;
}

/** Adds b into a (in place) and returns a. */
export function addUsage(a: Usage, b: Usage): Usage {
  a.input += b.input;
  a.output += b.output;
  a.cacheRead += b.cacheRead;
  a.cacheWrite += b.cacheWrite;
  a.totalTokens += b.totalTokens;
  a.cost.input += b.cost.input;
  a.cost.output += b.cost.output;
  a.cost.cacheRead += b.cost.cacheRead;
  a.cost.cacheWrite += b.cost.cacheWrite;
  a.cost.total += b.cost.total;
  if (b.estimated) a.estimated = true;
  return a;
}
