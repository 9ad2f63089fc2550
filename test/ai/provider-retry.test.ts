// The arithmetic of the one provider retry loop (provider-retry.ts): server delays and backoff
// (its abortable wait is test/util/sleep-unless-aborted.test.ts). The loop itself runs against every provider in provider-conformance.test.ts.
import { describe, expect, it } from 'vitest';
import { providerRetrySettings, retryDelayMs, serverRetryDelayMs } from '../../src/ai/provider-retry.js';

const headers = (h: Record<string, string>) => new Headers(h);

describe('provider retry settings and delays', () => {
  it('reads retry-after-ms, then retry-after as seconds or an HTTP date', () => {
    expect(serverRetryDelayMs(headers({ 'retry-after-ms': '250', 'retry-after': '9' }))).toBe(250);
    expect(serverRetryDelayMs(headers({ 'retry-after': '2' }))).toBe(2000);
    const now = Date.parse('2025-01-01T00:00:00Z');
    expect(serverRetryDelayMs(headers({ 'retry-after': 'Wed, 01 Jan 2025 00:00:03 GMT' }), now)).toBe(3000);
    expect(serverRetryDelayMs(headers({ 'retry-after': '0' }))).toBeUndefined();
    expect(serverRetryDelayMs(headers({}))).toBeUndefined();
  });

  it('backs off exponentially from the base delay with at most 25 % jitter', () => {
    const settings = providerRetrySettings({ retryBaseDelayMs: 100 });
    expect([1, 2, 3].map((n) => retryDelayMs(n, { message: 'x' }, settings, () => 0))).toEqual([100, 200, 400]);
    expect(retryDelayMs(3, { message: 'x' }, settings, () => 1)).toBe(300);
  });

  it('honours a server delay, clamped by maxRetryDelayMs unless that is 0', () => {
    expect(retryDelayMs(1, { message: 'x', serverDelayMs: 90_000 }, providerRetrySettings({}))).toBe(60_000);
    expect(
      retryDelayMs(1, { message: 'x', serverDelayMs: 90_000 }, providerRetrySettings({ maxRetryDelayMs: 0 })),
    ).toBe(90_000);
    expect(retryDelayMs(1, { message: 'x', serverDelayMs: 40 }, providerRetrySettings({}))).toBe(40);
  });

  it('a negative maxRetries is no retries, and the default is 3', () => {
    expect(providerRetrySettings({ maxRetries: -2 }).maxRetries).toBe(0);
    expect(providerRetrySettings({}).maxRetries).toBe(3);
  });
});
