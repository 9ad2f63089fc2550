// The fake providers' rate limits are as strict as the real APIs (provider-rate-limits.ts): a
// refused OpenAI request still counts against the requests per minute, an Anthropic 429 names
// its wait in whole seconds with retry-after and nothing else, and each vendor's headers are in
// the format the real API writes. A hand-moved clock: nothing here waits.
import { describe, expect, it } from 'vitest';
import { goDuration, ProviderLimitEnforcer } from './provider-rate-limits.js';

function clock(start = Date.parse('2026-12-06T03:00:00Z')) {
  let t = start;
  return {
    now: () => t,
    advance: (ms: number): void => {
      t += ms;
    },
  };
}

describe('OpenAI: a refused request is counted', () => {
  it('a 429 lowers x-ratelimit-remaining-requests, so resending at once is refused again', () => {
    const c = clock();
    const openai = new ProviderLimitEnforcer('openai', { windowMs: 60_000, requests: 60, tokens: 1000 }, c.now);
    const ok = openai.admit({ input: 900, maxTokens: 100 });
    expect(ok.ok).toBe(true);
    expect(ok.headers['x-ratelimit-remaining-requests']).toBe('59');
    // The tokens are spent: the next request is refused, and it still took its request.
    const first = openai.admit({ input: 10, maxTokens: 10 });
    expect(first.ok).toBe(false);
    expect(first.headers['x-ratelimit-remaining-requests']).toBe('58');
    const second = openai.admit({ input: 10, maxTokens: 10 });
    expect(second.headers['x-ratelimit-remaining-requests']).toBe('57');
    // Neither refusal took tokens (the request was not run).
    expect(second.headers['x-ratelimit-remaining-tokens']).toBe('0');
  });

  it('a crowd that keeps resending is held off longer than one that waits', () => {
    const c = clock();
    const limits = { windowMs: 60_000, requests: 60 };
    const patient = new ProviderLimitEnforcer('openai', limits, c.now);
    const crowd = new ProviderLimitEnforcer('openai', limits, c.now);
    for (let i = 0; i < 60; i++) {
      patient.admit({ input: 1, maxTokens: 1 });
      crowd.admit({ input: 1, maxTokens: 1 });
    }
    // Ten more refused attempts at once: ten more seconds before the crowd's next request fits.
    for (let i = 0; i < 10; i++) expect(crowd.admit({ input: 1, maxTokens: 1 }).ok).toBe(false);
    c.advance(1000);
    expect(patient.admit({ input: 1, maxTokens: 1 }).ok).toBe(true);
    expect(crowd.admit({ input: 1, maxTokens: 1 }).ok).toBe(false);
  });

  it('a 429 carries the x-ratelimit headers and no retry-after or retry-after-ms', () => {
    const c = clock();
    const openai = new ProviderLimitEnforcer('openai', { windowMs: 60_000, requests: 2, tokens: 50_000 }, c.now);
    openai.admit({ input: 10, maxTokens: 10 });
    openai.admit({ input: 10, maxTokens: 10 });
    const refused = openai.admit({ input: 10, maxTokens: 10 });
    expect(refused.ok).toBe(false);
    expect(Object.keys(refused.headers).sort()).toEqual([
      'x-ratelimit-limit-requests',
      'x-ratelimit-limit-tokens',
      'x-ratelimit-remaining-requests',
      'x-ratelimit-remaining-tokens',
      'x-ratelimit-reset-requests',
      'x-ratelimit-reset-tokens',
    ]);
    // Three requests taken of two per minute: full again in 1.5 minutes, written as Go does.
    expect(refused.headers['x-ratelimit-reset-requests']).toBe('1m30s');
    expect(refused.headers['x-ratelimit-reset-tokens']).toBe('48ms');
  });

  it('writes durations as Go does', () => {
    expect([0, 20, 999, 1000, 8640, 60_000, 360_000, 3_723_000].map(goDuration)).toEqual([
      '0s',
      '20ms',
      '999ms',
      '1s',
      '8.64s',
      '1m0s',
      '6m0s',
      '1h2m3s',
    ]);
  });
});

describe('Anthropic: a 429 says retry-after in whole seconds', () => {
  const limits = { windowMs: 60_000, requests: 50, inputTokens: 600, outputTokens: 8000 };

  it('at the real window: retry-after a whole number, no retry-after-ms, resets at whole seconds', () => {
    const c = clock();
    const anthropic = new ProviderLimitEnforcer('anthropic', limits, c.now);
    expect(anthropic.admit({ input: 595, maxTokens: 100 }).ok).toBe(true);
    c.advance(250);
    // 22.5 input tokens missing, 10 per second come back: 2.25 s more, stated as 3.
    const refused = anthropic.admit({ input: 30, maxTokens: 100 });
    expect(refused.ok).toBe(false);
    if (refused.ok) return;
    expect(refused.fitsInMs).toBe(2250);
    expect(refused.headers['retry-after']).toBe('3');
    expect(refused.headers['retry-after-ms']).toBeUndefined();
    expect(refused.binding).toBe('inputTokens');
    // Full again 59.5 s after the first request: written at the next whole second.
    expect(refused.headers['anthropic-ratelimit-input-tokens-reset']).toBe('2026-12-06T03:01:00Z');
    expect(refused.headers['anthropic-ratelimit-input-tokens-remaining']).toBe('7');
    // A refused request costs nothing at Anthropic: the requests it left are those of the admitted one.
    expect(refused.headers['anthropic-ratelimit-requests-remaining']).toBe('49');
    for (const [name, value] of Object.entries(refused.headers))
      if (name.endsWith('-reset')) expect(value).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
  });

  it('scaled down: the same wait in provider seconds of windowMs / 60, rounded up', () => {
    const c = clock();
    const anthropic = new ProviderLimitEnforcer('anthropic', { ...limits, windowMs: 6_000 }, c.now);
    anthropic.admit({ input: 595, maxTokens: 100 });
    c.advance(25);
    const refused = anthropic.admit({ input: 30, maxTokens: 100 });
    // 225 ms is 2.25 provider seconds of 100 ms: stated as 3 of them, 0.3 s.
    expect(refused.headers['retry-after']).toBe('0.3');
    expect(refused.headers['retry-after-ms']).toBeUndefined();
    // The reset (5.95 s after the first request) at the next provider second: 6 s.
    expect(refused.headers['anthropic-ratelimit-input-tokens-reset']).toBe('2026-12-06T03:00:06Z');
  });
});
