// What a provider's response says about its rate limits, read from the headers of every response
// (a success or a 429), so the orchestrator can pace at the provider's real ceiling instead of a
// `rate_limit:` the user had to guess. Two vendors, two dialects:
//   Anthropic: anthropic-ratelimit-{requests,input-tokens,output-tokens,tokens}-{limit,remaining,reset},
//              reset as an RFC 3339 time.
//   OpenAI:    x-ratelimit-{limit,remaining,reset}-{requests,tokens}, reset as a duration ("6m0s", "20ms").
// Both are mapped to one shape: per limit kind, the limit per minute, what remains and when it is full.
import { createHash } from 'node:crypto';

/** The limits a provider may state: requests, uncached input tokens, output tokens, all tokens (per minute). */
export type RateLimitKind = 'requests' | 'inputTokens' | 'outputTokens' | 'tokens';
export const RATE_LIMIT_KINDS: readonly RateLimitKind[] = ['requests', 'inputTokens', 'outputTokens', 'tokens'];

export interface RateLimitState {
  /** The limit per minute. */
  limit: number;
  /** What the provider had left when it answered (undefined when it did not say). */
  remaining?: number;
  /** Epoch ms when the limit is fully replenished (undefined when it did not say). */
  resetAt?: number;
}

/** One response's rate-limit headers. `vendor` tells how the token limits count (see the broker). */
export interface RateLimitSnapshot {
  vendor: 'anthropic' | 'openai';
  limits: Partial<Record<RateLimitKind, RateLimitState>>;
  /** A short hash of the API key the response was for (never the key): limits are per key. */
  keyHash?: string;
}

interface HeaderSource {
  get(name: string): string | null;
}

const ANTHROPIC_NAMES: Record<RateLimitKind, string> = {
  requests: 'requests',
  inputTokens: 'input-tokens',
  outputTokens: 'output-tokens',
  tokens: 'tokens',
};

/** Reads both vendors' rate-limit headers; undefined when the response has none (a local server). */
export function parseRateLimitHeaders(
  headers: HeaderSource | undefined | null,
  now = Date.now(),
): RateLimitSnapshot | undefined {
  if (!headers || typeof headers.get !== 'function') return undefined;
  const anthropic: RateLimitSnapshot['limits'] = {};
  for (const kind of RATE_LIMIT_KINDS) {
    const name = ANTHROPIC_NAMES[kind];
    const state = stateOf(
      headers.get(`anthropic-ratelimit-${name}-limit`),
      headers.get(`anthropic-ratelimit-${name}-remaining`),
      parseRfc3339(headers.get(`anthropic-ratelimit-${name}-reset`)),
    );
    if (state) anthropic[kind] = state;
  }
  if (Object.keys(anthropic).length > 0) return { vendor: 'anthropic', limits: anthropic };
  const openai: RateLimitSnapshot['limits'] = {};
  for (const kind of ['requests', 'tokens'] as const) {
    const reset = parseDuration(headers.get(`x-ratelimit-reset-${kind}`));
    const state = stateOf(
      headers.get(`x-ratelimit-limit-${kind}`),
      headers.get(`x-ratelimit-remaining-${kind}`),
      reset === undefined ? undefined : now + reset,
    );
    if (state) openai[kind] = state;
  }
  if (Object.keys(openai).length > 0) return { vendor: 'openai', limits: openai };
  return undefined;
}

/** A state needs a positive limit; remaining and reset are kept when they read as numbers. */
function stateOf(
  limit: string | null,
  remaining: string | null,
  resetAt: number | undefined,
): RateLimitState | undefined {
  const l = Number(limit ?? Number.NaN);
  if (!Number.isFinite(l) || l <= 0) return undefined;
  const r = remaining === null ? Number.NaN : Number(remaining);
  return {
    limit: l,
    ...(Number.isFinite(r) && r >= 0 ? { remaining: r } : {}),
    ...(resetAt !== undefined ? { resetAt } : {}),
  };
}

/** An RFC 3339 time ("2026-12-06T03:20:00Z") as epoch ms; undefined when it is not one. */
export function parseRfc3339(text: string | null | undefined): number | undefined {
  if (!text || !/^\d{4}-\d{2}-\d{2}T/.test(text)) return undefined;
  const t = Date.parse(text);
  return Number.isFinite(t) ? t : undefined;
}

const DURATION_UNITS: Record<string, number> = {
  h: 3_600_000,
  m: 60_000,
  s: 1000,
  ms: 1,
  us: 0.001,
  µs: 0.001,
  ns: 1e-6,
};

/** An OpenAI reset duration ("6m0s", "1.5s", "20ms", "1h2m3s") in ms; undefined when it is not one. */
export function parseDuration(text: string | null | undefined): number | undefined {
  if (!text) return undefined;
  const trimmed = text.trim();
  // A bare number is seconds (as retry-after is).
  if (/^\d+(\.\d+)?$/.test(trimmed)) return Number(trimmed) * 1000;
  const part = /(\d+(?:\.\d+)?)(ms|us|µs|ns|h|m|s)/gy;
  let total = 0;
  let matched = 0;
  for (let m = part.exec(trimmed); m; m = part.exec(trimmed)) {
    total += Number(m[1]) * DURATION_UNITS[m[2]!]!;
    matched = part.lastIndex;
  }
  return matched > 0 && matched === trimmed.length ? total : undefined;
}

/** A short, stable name for an API key: limits are per key, and the key itself is never kept. */
export function rateLimitKeyHash(apiKey: string): string {
  return createHash('sha256').update(apiKey).digest('hex').slice(0, 12);
}

/** The snapshot with the key's hash added (providers call this with the key they used). */
export function withKeyHash(snapshot: RateLimitSnapshot | undefined, apiKey: string): RateLimitSnapshot | undefined {
  return snapshot ? { ...snapshot, keyHash: rateLimitKeyHash(apiKey) } : undefined;
}
