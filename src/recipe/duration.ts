// Durations and token counts as written in recipes, turned into plain numbers.
import { DURATION_PATTERN, TOKEN_COUNT_PATTERN } from './schema-parts.js';

const UNIT_MS: Record<string, number> = { ms: 1, s: 1_000, m: 60_000, h: 3_600_000 };

/** 90 (seconds), "90", "30s", "10m", "1h30m", "500ms" -> milliseconds; undefined when malformed. */
export function parseDuration(value: number | string): number | undefined {
  if (typeof value === 'number') return Number.isFinite(value) && value > 0 ? Math.round(value * 1000) : undefined;
  const text = value.trim();
  if (!DURATION_PATTERN.test(text)) return undefined;
  if (/^\d+(?:\.\d+)?$/.test(text)) return Math.round(Number(text) * 1000);
  let total = 0;
  for (const m of text.matchAll(/(\d+(?:\.\d+)?)(ms|s|m|h)/g)) total += Number(m[1]) * (UNIT_MS[m[2] ?? 's'] ?? 1_000);
  return total > 0 ? Math.round(total) : undefined;
}

/** 400000, "400k", "3M" -> a token count; undefined when malformed. */
export function parseTokenCount(value: number | string): number | undefined {
  if (typeof value === 'number') return Number.isInteger(value) && value >= 0 ? value : undefined;
  const text = value.trim();
  if (!TOKEN_COUNT_PATTERN.test(text)) return undefined;
  const suffix = text.at(-1)?.toLowerCase();
  const factor = suffix === 'k' ? 1_000 : suffix === 'm' ? 1_000_000 : 1;
  const digits = factor === 1 ? text : text.slice(0, -1);
  return Math.round(Number(digits) * factor);
}
