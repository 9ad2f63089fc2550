// Rate-limit headers: both vendors' names and reset formats, and on the wire through both real
// SDKs: every response (a success or a 429) hands its limits to onAttemptEnd with the key's hash,
// never the key; a 429 that names its wait does not spend the retry budget when the caller paces
// by the limits (rateLimitWaits), and does without it. Against the strict fakes
// (test/helpers/provider-rate-limits.ts): a refused OpenAI request lowers the requests the next
// headers state, and an Anthropic 429 names whole seconds, which the retry waits in full.
import { afterEach, describe, expect, it } from 'vitest';
import { streamAnthropic } from '../../src/ai/anthropic.js';
import { getModel } from '../../src/ai/models.js';
import { streamOpenAIChat } from '../../src/ai/openai-compatible.js';
import { modelForProvider } from '../../src/ai/provider-config.js';
import {
  parseDuration,
  parseRateLimitHeaders,
  parseRfc3339,
  rateLimitKeyHash,
  type RateLimitSnapshot,
} from '../../src/ai/rate-limit-headers.js';
import type { StreamOptions } from '../../src/ai/types.js';
import { type FakeAnthropic, startFakeAnthropic } from '../helpers/fake-anthropic-server.js';
import { type FakeOpenAI, startFakeOpenAI } from '../helpers/fake-openai-server.js';
import { bodyTokens, ProviderLimitEnforcer } from '../helpers/provider-rate-limits.js';

/** A model of the fake OpenAI-compatible server at `url`. */
const openaiModel = (url: string) =>
  modelForProvider({ name: 'openai', type: 'openai-compatible', baseUrl: url }, 'gpt-x', {
    contextWindow: 32_000,
    maxTokens: 1000,
    cost: { input: 1, output: 2, cacheRead: 0.5, cacheWrite: 0 },
  });

const NOW = Date.parse('2026-12-06T03:00:00Z');

describe('parseRateLimitHeaders', () => {
  it('reads every Anthropic header, reset as RFC 3339', () => {
    const h = new Headers({
      'anthropic-ratelimit-requests-limit': '50',
      'anthropic-ratelimit-requests-remaining': '49',
      'anthropic-ratelimit-requests-reset': '2026-12-06T03:00:01Z',
      'anthropic-ratelimit-input-tokens-limit': '30000',
      'anthropic-ratelimit-input-tokens-remaining': '29000',
      'anthropic-ratelimit-input-tokens-reset': '2026-12-06T03:00:02.500Z',
      'anthropic-ratelimit-output-tokens-limit': '8000',
      'anthropic-ratelimit-output-tokens-remaining': '0',
      'anthropic-ratelimit-output-tokens-reset': '2026-12-06T03:01:00+00:00',
      'anthropic-ratelimit-tokens-limit': '38000',
      'anthropic-ratelimit-tokens-remaining': '29000',
      'anthropic-ratelimit-tokens-reset': '2026-12-06T03:00:02.500Z',
    });
    expect(parseRateLimitHeaders(h, NOW)).toEqual({
      vendor: 'anthropic',
      limits: {
        requests: { limit: 50, remaining: 49, resetAt: NOW + 1000 },
        inputTokens: { limit: 30000, remaining: 29000, resetAt: NOW + 2500 },
        outputTokens: { limit: 8000, remaining: 0, resetAt: NOW + 60_000 },
        tokens: { limit: 38000, remaining: 29000, resetAt: NOW + 2500 },
      },
    });
  });

  it('reads every OpenAI header, reset as a duration', () => {
    const h = new Headers({
      'x-ratelimit-limit-requests': '500',
      'x-ratelimit-remaining-requests': '499',
      'x-ratelimit-reset-requests': '120ms',
      'x-ratelimit-limit-tokens': '200000',
      'x-ratelimit-remaining-tokens': '150000',
      'x-ratelimit-reset-tokens': '6m0s',
    });
    expect(parseRateLimitHeaders(h, NOW)).toEqual({
      vendor: 'openai',
      limits: {
        requests: { limit: 500, remaining: 499, resetAt: NOW + 120 },
        tokens: { limit: 200000, remaining: 150000, resetAt: NOW + 360_000 },
      },
    });
  });

  it('keeps a limit without remaining or reset; drops one without a usable limit; none is undefined', () => {
    const h = new Headers({
      'anthropic-ratelimit-requests-limit': '10',
      'anthropic-ratelimit-input-tokens-limit': 'lots',
      'anthropic-ratelimit-input-tokens-remaining': '5',
      'anthropic-ratelimit-output-tokens-limit': '0',
    });
    expect(parseRateLimitHeaders(h, NOW)).toEqual({ vendor: 'anthropic', limits: { requests: { limit: 10 } } });
    expect(parseRateLimitHeaders(new Headers({ 'retry-after': '3' }), NOW)).toBeUndefined();
    expect(parseRateLimitHeaders(undefined, NOW)).toBeUndefined();
  });

  it('parses the duration forms OpenAI sends and refuses others', () => {
    expect(parseDuration('6m0s')).toBe(360_000);
    expect(parseDuration('20ms')).toBe(20);
    expect(parseDuration('1.5s')).toBe(1500);
    expect(parseDuration('1h2m3s')).toBe(3_723_000);
    expect(parseDuration('2')).toBe(2000);
    expect(parseDuration('7m12.345s')).toBeCloseTo(432_345, 6);
    expect(parseDuration('soon')).toBeUndefined();
    expect(parseDuration('5x')).toBeUndefined();
    expect(parseDuration('')).toBeUndefined();
    expect(parseRfc3339('2026-12-06T03:00:00Z')).toBe(NOW);
    expect(parseRfc3339('Sun, 06 Dec 2026 03:00:00 GMT')).toBeUndefined();
  });

  it('names a key by a short hash, never the key', () => {
    const hash = rateLimitKeyHash('sk-ant-secret');
    expect(hash).toMatch(/^[0-9a-f]{12}$/);
    expect(hash).not.toContain('secret');
    expect(rateLimitKeyHash('sk-ant-secret')).toBe(hash);
    expect(rateLimitKeyHash('sk-ant-other')).not.toBe(hash);
  });
});

const anthropicLimits = (remaining: number): Record<string, string> => ({
  'anthropic-ratelimit-requests-limit': '60',
  'anthropic-ratelimit-requests-remaining': String(remaining),
  'anthropic-ratelimit-requests-reset': new Date(Date.now() + 1000).toISOString(),
  'anthropic-ratelimit-input-tokens-limit': '10000',
  'anthropic-ratelimit-input-tokens-remaining': '9000',
  'anthropic-ratelimit-input-tokens-reset': new Date(Date.now() + 1000).toISOString(),
});
const busy = {
  kind: 'http-error' as const,
  status: 429,
  errorType: 'rate_limit_error',
  // As the real API names a wait: retry-after only, in seconds (here a millisecond of them).
  headers: { ...anthropicLimits(0), 'retry-after': '0.001' },
};

let anthropic: FakeAnthropic | undefined;
let openai: FakeOpenAI | undefined;
afterEach(async () => {
  await anthropic?.close();
  await openai?.close();
  anthropic = openai = undefined;
});

async function runAnthropic(options: StreamOptions) {
  const model = { ...getModel('claude-sonnet-4-5')!, baseUrl: anthropic!.url };
  const seen: { started: boolean; status?: number; rateLimits?: RateLimitSnapshot }[] = [];
  const s = streamAnthropic(
    model,
    { messages: [{ role: 'user', content: 'hi', timestamp: 1 }] },
    { apiKey: 'sk-ant-secret', retryBaseDelayMs: 1, ...options, onAttemptEnd: (i) => seen.push(i) },
  );
  return { result: await s.result(), seen };
}

describe('providers hand every response its rate limits', () => {
  it('Anthropic: a 429 and the success after it, each with its limits and the key hash', async () => {
    anthropic = await startFakeAnthropic({
      responses: [busy, { kind: 'message', content: [{ type: 'text', text: 'ok' }], headers: anthropicLimits(41) }],
    });
    const { result, seen } = await runAnthropic({});
    expect(result.stopReason).toBe('stop');
    expect(seen.map((s) => [s.started, s.status, s.rateLimits?.limits.requests?.remaining])).toEqual([
      [false, 429, 0],
      [true, undefined, 41],
    ]);
    for (const s of seen) {
      expect(s.rateLimits?.vendor).toBe('anthropic');
      expect(s.rateLimits?.keyHash).toBe(rateLimitKeyHash('sk-ant-secret'));
      expect(JSON.stringify(s)).not.toContain('secret');
    }
  });

  it('OpenAI: the limits of a streamed chat reply', async () => {
    openai = await startFakeOpenAI({
      responses: [
        {
          kind: 'chat',
          text: 'ok',
          headers: {
            'x-ratelimit-limit-requests': '100',
            'x-ratelimit-remaining-requests': '99',
            'x-ratelimit-reset-requests': '600ms',
            'x-ratelimit-limit-tokens': '1000',
            'x-ratelimit-remaining-tokens': '900',
            'x-ratelimit-reset-tokens': '6s',
          },
        },
      ],
    });
    const model = openaiModel(openai.url);
    const seen: RateLimitSnapshot[] = [];
    const s = streamOpenAIChat(
      model,
      { messages: [{ role: 'user', content: 'hi', timestamp: 1 }] },
      { apiKey: 'sk-oa', onAttemptEnd: (i) => i.rateLimits && seen.push(i.rateLimits) },
    );
    expect((await s.result()).stopReason).toBe('stop');
    expect(seen).toHaveLength(1);
    expect(seen[0]!.vendor).toBe('openai');
    expect(seen[0]!.limits.tokens).toMatchObject({ limit: 1000, remaining: 900 });
    expect(seen[0]!.keyHash).toBe(rateLimitKeyHash('sk-oa'));
  });
});

describe('a busy limit is waited for, not a spent retry', () => {
  const fiveBusyThenOk = () => [
    busy,
    busy,
    busy,
    busy,
    busy,
    { kind: 'message' as const, content: [{ type: 'text' as const, text: 'ok' }] },
  ];

  it('with rateLimitWaits, five 429s with retry-after do not spend a budget of one retry', async () => {
    anthropic = await startFakeAnthropic({ responses: fiveBusyThenOk() });
    const retries: boolean[] = [];
    const { result } = await runAnthropic({
      maxRetries: 1,
      rateLimitWaits: 10,
      onRetry: (r) => retries.push(!!r.uncounted),
    });
    expect(result.stopReason).toBe('stop');
    expect(anthropic.requests).toHaveLength(6);
    expect(retries).toEqual([true, true, true, true, true]);
  });

  it('without it (a caller that does not pace), the retry budget still ends the call', async () => {
    anthropic = await startFakeAnthropic({ responses: fiveBusyThenOk() });
    const { result } = await runAnthropic({ maxRetries: 1 });
    expect(result.stopReason).toBe('error');
    expect(result.errorMessage).toContain('attempt 2 of 2');
    expect(anthropic.requests).toHaveLength(2);
  });

  it('the waits are bounded by their total time too (rateLimitWaitMs): past it, 429s spend the budget', async () => {
    anthropic = await startFakeAnthropic({ responses: fiveBusyThenOk() });
    // Each 429 names a 1 ms wait: two fit in 2 ms, the third spends the one retry, the fourth ends the call.
    const { result } = await runAnthropic({ maxRetries: 1, rateLimitWaits: 10, rateLimitWaitMs: 2 });
    expect(result.stopReason).toBe('error');
    expect(anthropic.requests).toHaveLength(4);
  });

  it('the waits are bounded: a provider that stays rate-limited fails', async () => {
    anthropic = await startFakeAnthropic({ responses: fiveBusyThenOk() });
    const { result } = await runAnthropic({ maxRetries: 1, rateLimitWaits: 2 });
    expect(result.stopReason).toBe('error');
    // Two free waits, then the one retry of the budget: four requests.
    expect(anthropic.requests).toHaveLength(4);
  });
});

describe('against fakes as strict as the real APIs', () => {
  /** A clock the test moves: the fake's buckets refill only when told. */
  function clock() {
    let t = Date.parse('2026-12-06T03:00:00Z');
    return {
      now: () => t,
      advance: (ms: number): void => {
        t += ms;
      },
    };
  }

  it('OpenAI: a refused request lowers x-ratelimit-remaining-requests, and the 429 names no wait', async () => {
    const c = clock();
    // 100 tokens a minute: the first call fits, the second does not until the bucket refills.
    const enforcer = new ProviderLimitEnforcer('openai', { windowMs: 60_000, requests: 60, tokens: 100 }, c.now);
    const sent: Record<string, string>[] = [];
    openai = await startFakeOpenAI({
      respond: ({ body }) => {
        const a = enforcer.admit({ input: 20, maxTokens: Number(body.max_tokens ?? body.max_completion_tokens) });
        sent.push(a.headers);
        if (a.ok)
          return { kind: 'chat', text: 'ok', usage: { prompt_tokens: 20, completion_tokens: 1 }, headers: a.headers };
        // The next attempt comes after the limit has room again.
        c.advance(a.fitsInMs);
        return { kind: 'http-error', status: 429, message: 'Rate limit reached', type: 'tokens', headers: a.headers };
      },
    });
    const model = openaiModel(openai.url);
    const seen: { status?: number; requests?: number }[] = [];
    const retries: { uncounted?: boolean }[] = [];
    const call = () =>
      streamOpenAIChat(
        model,
        { messages: [{ role: 'user', content: 'hi', timestamp: 1 }] },
        {
          apiKey: 'sk-oa',
          maxTokens: 60,
          maxRetries: 0,
          rateLimitWaits: 5,
          retryBaseDelayMs: 1,
          onAttemptEnd: (i) => seen.push({ status: i.status, requests: i.rateLimits?.limits.requests?.remaining }),
          onRetry: (r) => retries.push(r),
        },
      ).result();
    expect((await call()).stopReason).toBe('stop');
    expect((await call()).stopReason).toBe('stop');
    // The 429 said one request fewer than the success before it, though it ran nothing.
    expect(seen.slice(0, 2)).toEqual([
      { status: undefined, requests: 59 },
      { status: 429, requests: 58 },
    ]);
    // No retry-after of any kind: the wait was the caller's own backoff, not a spent retry.
    expect(sent[1]!['retry-after']).toBeUndefined();
    expect(sent[1]!['retry-after-ms']).toBeUndefined();
    expect(retries).toEqual([expect.objectContaining({ uncounted: true, delayMs: 1 })]);
  });

  it('OpenAI: 429s that name no wait are backed off exponentially, not resent at a fixed pace', async () => {
    const c = clock();
    const enforcer = new ProviderLimitEnforcer('openai', { windowMs: 60_000, requests: 60, tokens: 100 }, c.now);
    enforcer.admit({ input: 100, maxTokens: 0 });
    openai = await startFakeOpenAI({
      respond: ({ index, body }) => {
        // Four refusals (the clock stands still), then the bucket has had time to refill.
        if (index === 4) c.advance(60_000);
        const a = enforcer.admit({ input: 20, maxTokens: Number(body.max_tokens ?? body.max_completion_tokens) });
        if (a.ok)
          return { kind: 'chat', text: 'ok', usage: { prompt_tokens: 20, completion_tokens: 1 }, headers: a.headers };
        return { kind: 'http-error', status: 429, message: 'Rate limit reached', type: 'tokens', headers: a.headers };
      },
    });
    const model = openaiModel(openai.url);
    const delays: number[] = [];
    const s = streamOpenAIChat(
      model,
      { messages: [{ role: 'user', content: 'hi', timestamp: 1 }] },
      {
        apiKey: 'sk-oa',
        maxTokens: 60,
        maxRetries: 0,
        rateLimitWaits: 10,
        retryBaseDelayMs: 8,
        onRetry: (r) => delays.push(r.delayMs),
      },
    );
    expect((await s.result()).stopReason).toBe('stop');
    // 8, 16, 32, 64 ms less at most 25 % jitter (before: 8 ms each time, however often refused).
    expect(delays).toHaveLength(4);
    delays.forEach((d, i) => {
      expect(d).toBeGreaterThanOrEqual(0.75 * 8 * 2 ** i);
      expect(d).toBeLessThanOrEqual(8 * 2 ** i);
    });
  });

  it('Anthropic: the 429 at the real window names whole seconds in retry-after, and the retry waits them all', async () => {
    const c = clock();
    const enforcer = new ProviderLimitEnforcer(
      'anthropic',
      { windowMs: 60_000, requests: 50, inputTokens: 1000, outputTokens: 100_000, startShare: 0 },
      c.now,
    );
    let stated: Record<string, string> | undefined;
    anthropic = await startFakeAnthropic({
      respond: ({ body }) => {
        const a = enforcer.admit({ input: bodyTokens(body), maxTokens: Number(body.max_tokens) });
        if (a.ok) return { kind: 'message', content: [{ type: 'text', text: 'ok' }], headers: a.headers };
        stated = a.headers;
        return {
          kind: 'http-error',
          status: 429,
          errorType: 'rate_limit_error',
          message: 'slow down',
          headers: a.headers,
        };
      },
    });
    // The retry would wait whole seconds: the test reads the delay and stops there.
    const stop = new AbortController();
    const delays: number[] = [];
    const { result } = await runAnthropic({
      signal: stop.signal,
      maxRetries: 1,
      rateLimitWaits: 1,
      onRetry: (r) => {
        delays.push(r.delayMs);
        stop.abort();
      },
    });
    expect(result.stopReason).toBe('aborted');
    expect(stated?.['retry-after']).toMatch(/^[1-9]\d*$/);
    expect(stated?.['retry-after-ms']).toBeUndefined();
    expect(delays).toEqual([Number(stated?.['retry-after']) * 1000]);
  });
});
