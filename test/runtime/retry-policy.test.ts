// Which failed replies the session retries: the texts are the ones the Anthropic provider really
// produces for each transient failure (streamed from the fake API), not copies of them, so a
// reworded provider message cannot silently turn a transient failure into a final one.
import { afterEach, describe, expect, it } from 'vitest';
import { streamAnthropic } from '../../src/ai/anthropic.js';
import { getModel } from '../../src/ai/models.js';
import type { AssistantMessage, StreamOptions } from '../../src/ai/types.js';
import { isRetryableError } from '../../src/runtime/retry-policy.js';
import { type FakeAnthropic, type ResponseSpec, startFakeAnthropic } from '../helpers/fake-anthropic-server.js';

let server: FakeAnthropic | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

const reply = {
  content: [{ type: 'text' as const, text: 'a reply that is long enough to be cut in the middle' }],
  chunkSize: 4,
};

async function failedReply(spec: ResponseSpec, options: StreamOptions = {}): Promise<AssistantMessage> {
  server = await startFakeAnthropic({ responses: [spec, spec, spec] });
  const model = { ...getModel('claude-haiku-4-5')!, baseUrl: server.url };
  const s = streamAnthropic(
    model,
    { messages: [{ role: 'user', content: 'hi', timestamp: 1 }] },
    { apiKey: 'sk-test', maxRetries: 0, streamIdleTimeoutMs: 2_000, ...options },
  );
  const result = await s.result();
  expect(result.stopReason, result.errorMessage).toBe('error');
  return result;
}

describe('session retry policy on real provider errors', () => {
  it.each<[string, ResponseSpec, StreamOptions?]>([
    ['a stream whose socket is destroyed mid-reply', { kind: 'cut', afterEvents: 4, ...reply }],
    ['a stream that ends cleanly before message_stop', { kind: 'truncate', afterEvents: 4, ...reply }],
    [
      'a stream that goes silent mid-reply (idle timeout)',
      { kind: 'message', ...reply, delayMs: 400 },
      { streamIdleTimeoutMs: 150 },
    ],
    ['a 529 overload', { kind: 'http-error', status: 529 }],
    ['a 429 rate limit', { kind: 'http-error', status: 429 }],
    ['a 500 server error', { kind: 'http-error', status: 500 }],
    ['an error event mid-stream', { kind: 'sse-error', afterEvents: 3, ...reply }],
  ])('retries %s', async (_what, spec, options) => {
    const m = await failedReply(spec, options);
    expect(isRetryableError(m), m.errorMessage).toBe(true);
  });

  it.each<[string, ResponseSpec]>([
    [
      'a prompt that is too long (compaction handles it, not a retry)',
      { kind: 'http-error', status: 400, message: 'prompt is too long: 215000 tokens > 200000 maximum' },
    ],
    ['a bad request', { kind: 'http-error', status: 400, message: 'messages: field required' }],
    ['a bad key', { kind: 'http-error', status: 401 }],
  ])('does not retry %s', async (_what, spec) => {
    const m = await failedReply(spec);
    expect(isRetryableError(m), m.errorMessage).toBe(false);
  });
});
