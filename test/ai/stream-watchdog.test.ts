// StreamWatchdog, the idle and abort guard of every provider attempt (the providers' idle streams run
// on the wire in provider-conformance.test.ts): which of the two ended the stream, and its message.
import { once } from 'node:events';
import { describe, expect, it } from 'vitest';
import { StreamFailure, StreamWatchdog } from '../../src/ai/stream-watchdog.js';

describe('StreamWatchdog', () => {
  it("aborts the SDK's signal when the caller aborts, and that is not idleness", async () => {
    const caller = new AbortController();
    const watchdog = new StreamWatchdog(600_000, caller.signal);
    const aborted = once(watchdog.signal, 'abort');
    caller.abort();
    await aborted;
    expect(watchdog.idle).toBe(false);
    watchdog.dispose();
  });

  it('aborts a stream that sends nothing for idleMs and says so', async () => {
    const watchdog = new StreamWatchdog(1);
    await once(watchdog.signal, 'abort');
    expect(watchdog.idle).toBe(true);
    const failure = watchdog.idleFailure('The Anthropic API', false);
    expect(failure).toBeInstanceOf(StreamFailure);
    expect(failure.message).toBe(
      'The Anthropic API sent nothing for 1 ms before the reply started; the stream was abandoned (streamIdleTimeoutMs).',
    );
    expect(watchdog.idleFailure('The openai API', true).message).toContain('in the middle of the reply');
    watchdog.dispose();
  });

  it('reads every item in order, and lets go of the caller once disposed', async () => {
    const caller = new AbortController();
    const watchdog = new StreamWatchdog(600_000, caller.signal);
    async function* items(): AsyncGenerator<number> {
      yield* [1, 2, 3];
    }
    const seen: number[] = [];
    await watchdog.read(items(), (n) => seen.push(n));
    expect(seen).toEqual([1, 2, 3]);
    watchdog.dispose();
    caller.abort();
    expect(watchdog.signal.aborted).toBe(false);
  });
});
