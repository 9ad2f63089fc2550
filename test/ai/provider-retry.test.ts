// The arithmetic of the one provider retry loop (provider-retry.ts): server delays and backoff
// (its abortable wait is test/util/sleep-unless-aborted.test.ts). The loop itself runs against every provider in provider-conformance.test.ts.
import { describe, expect, it } from 'vitest';
import {
  errorResponseFailure,
  providerRetrySettings,
  retryDelayMs,
  serverRetryDelayMs,
} from '../../src/ai/provider-retry.js';

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

  it('rounds a server delay up, never down to an early retry or to no wait at all', () => {
    const settings = providerRetrySettings({});
    // retry-after in decimal seconds (a scaled provider second, a fraction of a millisecond).
    const delay = (after: string) =>
      retryDelayMs(1, { message: 'x', serverDelayMs: serverRetryDelayMs(headers({ 'retry-after': after })) }, settings);
    expect(delay('0.03333333333333333')).toBe(34);
    expect(delay('0.0004')).toBe(1);
    expect(delay('0.1')).toBe(100);
    expect(delay('2')).toBe(2000);
  });

  it('a negative maxRetries is no retries, and the default is 3', () => {
    expect(providerRetrySettings({ maxRetries: -2 }).maxRetries).toBe(0);
    expect(providerRetrySettings({}).maxRetries).toBe(3);
  });

  it('describes an error response from its fields: status, type, message, request id, headers', () => {
    const failure = errorResponseFailure({
      status: 429,
      type: 'rate_limit_error',
      apiMessage: 'slow down',
      requestId: 'req_1',
      headers: headers({ 'retry-after': '2' }),
    });
    expect(failure).toMatchObject({
      message: '429 rate_limit_error: slow down (request req_1)',
      kind: 'rate_limit',
      status: 429,
      serverDelayMs: 2000,
    });
    expect(
      errorResponseFailure({ status: undefined, type: undefined, apiMessage: 'x', requestId: null, headers: null }),
    ).toMatchObject({ message: 'x', status: undefined, serverDelayMs: undefined });
  });
});
