// Prompt-cache figures of a usage summary as one short phrase, for `show`, the final summary and
// the report: how much of the input was read from the cache, how much was written to it, and
// what that saved against uncached prices.
import { formatCost, formatTokens } from './format-units.js';
import type { UsageSummary } from '../run/usage-summary.js';

/** Share of all input tokens (uncached + cache reads + cache writes) read from the cache, 0..1. */
export function cacheReadShare(u: Pick<UsageSummary, 'input' | 'cacheRead' | 'cacheWrite'>): number {
  const all = u.input + u.cacheRead + u.cacheWrite;
  return all > 0 ? u.cacheRead / all : 0;
}

/** "cache: 78% of input read (120k), 30k written, saved $0.3141", or undefined when nothing was cached. */
export function cacheText(u: UsageSummary): string | undefined {
  if (u.cacheRead + u.cacheWrite === 0) return undefined;
  const saved =
    u.cacheSaved === undefined
      ? ''
      : u.cacheSaved >= 0
        ? `, saved ${formatCost(u.cacheSaved)}`
        : `, cost ${formatCost(-u.cacheSaved)} more than uncached`;
  return `cache: ${Math.round(cacheReadShare(u) * 100)}% of input read (${formatTokens(u.cacheRead)}), ${formatTokens(u.cacheWrite)} written${saved}`;
}
