// One retry budget per turn, spent by one layer at a time. The provider retries a failed request
// (before anything streamed) within the budget the session hands it; the session runs a whole turn
// again only when ai/ marks the failure retryable (a reply cut after it began streaming). The
// failures come from the real Anthropic provider against the fake API, not copies of its texts.
// Regression: a permanent 500 used to be retried by both layers (16 requests over 41 s with the
// defaults, and "gave up after 3 retries" followed by "retry 1/3").
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { streamAnthropic } from '../../src/ai/anthropic.js';
import { getModel } from '../../src/ai/models.js';
import type { AssistantMessage, StreamOptions } from '../../src/ai/types.js';
import { createAgentSession, type CreateAgentSessionOptions } from '../../src/runtime/create-agent-session.js';
import { isRetryableError } from '../../src/runtime/retry-policy.js';
import type { AgentSessionEvent } from '../../src/runtime/session-events.js';
import { type FakeAnthropic, type ResponseSpec, startFakeAnthropic } from '../helpers/fake-anthropic-server.js';

let server: FakeAnthropic | undefined;
const dirs: string[] = [];
afterEach(async () => {
  await server?.close();
  server = undefined;
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
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

describe('which failed replies the session runs again', () => {
  it.each<[string, ResponseSpec]>([
    ['a stream whose socket is destroyed mid-reply', { kind: 'cut', afterEvents: 4, ...reply }],
    ['a stream that ends cleanly before message_stop', { kind: 'truncate', afterEvents: 4, ...reply }],
    ['an error event mid-reply', { kind: 'sse-error', afterEvents: 3, ...reply }],
  ])('retries %s (the provider cannot: the reply had begun)', async (_what, spec) => {
    const m = await failedReply(spec);
    expect(isRetryableError(m), m.errorMessage).toBe(true);
  });

  it.each<[string, ResponseSpec]>([
    ['a 529 overload', { kind: 'http-error', status: 529 }],
    ['a 429 rate limit', { kind: 'http-error', status: 429 }],
    ['a 500 server error', { kind: 'http-error', status: 500 }],
  ])('does not retry %s the provider already gave up on', async (_what, spec) => {
    const m = await failedReply(spec);
    expect(m.errorKind).toBeDefined();
    expect(isRetryableError(m), m.errorMessage).toBe(false);
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

async function sessionAgainst(
  respond: (index: number) => ResponseSpec,
  options: Partial<CreateAgentSessionOptions> = {},
): Promise<{ events: AgentSessionEvent[]; requests: () => number; last: () => AssistantMessage | undefined }> {
  server = await startFakeAnthropic({ respond: ({ index }) => respond(index) });
  const cwd = mkdtempSync(join(tmpdir(), 'orch-retry-'));
  dirs.push(cwd);
  const session = await createAgentSession({
    cwd,
    inMemory: true,
    model: { ...getModel('claude-haiku-4-5')!, baseUrl: server.url },
    apiKey: 'sk-test',
    tools: [],
    thinkingLevel: 'off',
    defaultSkills: false,
    contextFiles: false,
    notify: () => {},
    ...options,
    retry: { baseDelayMs: 1, ...options.retry },
  });
  const events: AgentSessionEvent[] = [];
  session.subscribe((e) => events.push(e));
  await session.prompt('go');
  const s = server;
  return {
    events,
    requests: () => s.requests.length,
    last: () => session.messages.filter((m): m is AssistantMessage => m.role === 'assistant').at(-1),
  };
}

const retryEvents = (events: AgentSessionEvent[]) =>
  events.filter((e) => e.type === 'auto_retry_start' || e.type === 'auto_retry_end');

describe('one retry budget per turn', () => {
  it('a permanent 500 costs maxRetries + 1 requests in all, each retry reported once', async () => {
    const h = await sessionAgainst(() => ({ kind: 'http-error', status: 500, message: 'boom' }));
    expect(h.requests()).toBe(4);
    const retries = retryEvents(h.events);
    expect(retries.map((e) => (e.type === 'auto_retry_start' ? `${e.attempt}/${e.maxAttempts}` : e.type))).toEqual([
      '1/3',
      '2/3',
      '3/3',
      'auto_retry_end',
    ]);
    expect(retries.at(-1)).toMatchObject({ success: false, attempt: 3 });
    expect(h.last()?.errorMessage).toMatch(/^500 api_error: boom .*\(attempt 4 of 4 failed; no retries left\)$/);
  });

  it('retry.maxRetries: 0 means exactly one request', async () => {
    const h = await sessionAgainst(() => ({ kind: 'http-error', status: 500, message: 'boom' }), {
      retry: { maxRetries: 0 },
    });
    expect(h.requests()).toBe(1);
    expect(retryEvents(h.events)).toEqual([]);
    expect(h.last()?.errorMessage).toMatch(/\(attempt 1 of 1: retries are off\)$/);
  });

  it('a turn re-run after a cut spends the same budget as the provider retries', async () => {
    const h = await sessionAgainst(
      (index) => (index === 0 ? { kind: 'cut', afterEvents: 4, ...reply } : { kind: 'http-error', status: 500 }),
      { retry: { maxRetries: 2 } },
    );
    // The cut (request 1) is re-run by the session (retry 1 of 2); the provider then has one left.
    expect(h.requests()).toBe(3);
    const starts = retryEvents(h.events).filter((e) => e.type === 'auto_retry_start');
    expect(starts.map((e) => (e.type === 'auto_retry_start' ? e.attempt : 0))).toEqual([1, 2]);
    expect(h.last()?.errorMessage).toMatch(/^500 /);
  });

  it('a cut then a good reply: the turn is run again once and succeeds', async () => {
    const h = await sessionAgainst((index) =>
      index === 0
        ? { kind: 'cut', afterEvents: 4, ...reply }
        : { kind: 'message', content: [{ type: 'text', text: 'whole' }] },
    );
    expect(h.requests()).toBe(2);
    expect(retryEvents(h.events).map((e) => e.type)).toEqual(['auto_retry_start', 'auto_retry_end']);
    expect(h.last()?.stopReason).toBe('stop');
  });
});
