// sleepUnlessAborted: the one abortable wait of both retry loops (provider requests and session turns).
import { describe, expect, it } from 'vitest';
import { sleepUnlessAborted } from '../../src/util/sleep-unless-aborted.js';

describe('sleepUnlessAborted', () => {
  it('resolves false when the signal aborts during the wait', async () => {
    const c = new AbortController();
    const p = sleepUnlessAborted(10_000, c.signal);
    c.abort();
    expect(await p).toBe(false);
  });

  it('resolves false at once when the signal has aborted already, even for no wait', async () => {
    expect(await sleepUnlessAborted(10_000, AbortSignal.abort())).toBe(false);
    expect(await sleepUnlessAborted(0, AbortSignal.abort())).toBe(false);
  });

  it('resolves true after the wait, with or without a signal, and at once for no wait', async () => {
    expect(await sleepUnlessAborted(1)).toBe(true);
    expect(await sleepUnlessAborted(1, new AbortController().signal)).toBe(true);
    expect(await sleepUnlessAborted(0)).toBe(true);
  });
});
