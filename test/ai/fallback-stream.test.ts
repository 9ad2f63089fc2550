// withFallback through the real SDKs on the wire: model A (the fake Anthropic API) and B (an
// OpenAI-compatible fake). A call moves to B only when A fails for good with a transient failure
// (529 here) before any content; A is skipped while it cools down and tried first again after it
// (a clock of our own, never the wall clock); a failure a new request cannot fix (400) stays
// A's; when every model fails the error names them all.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { streamAnthropic } from '../../src/ai/anthropic.js';
import { type CallRoute, withFallback } from '../../src/ai/fallback-stream.js';
import { resolveModel } from '../../src/ai/models.js';
import { streamOpenAIChat } from '../../src/ai/openai-compatible.js';
import { modelForProvider } from '../../src/ai/provider-config.js';
import type { Context, StreamFunction } from '../../src/ai/types.js';
import { type FakeAnthropic, type ResponseSpec, startFakeAnthropic } from '../helpers/fake-anthropic-server.js';
import { type FakeOpenAI, type OpenAIResponseSpec, startFakeOpenAI } from '../helpers/fake-openai-server.js';

let a: FakeAnthropic;
let b: FakeOpenAI;
let aReply: ResponseSpec = { kind: 'http-error', status: 529, errorType: 'overloaded_error', message: 'Overloaded' };
let bReply: OpenAIResponseSpec = { kind: 'chat', text: 'from B' };

beforeAll(async () => {
  a = await startFakeAnthropic({ respond: () => aReply });
  b = await startFakeOpenAI({ respond: () => bReply });
});
afterAll(async () => {
  await a.close();
  await b.close();
});

const context: Context = { messages: [{ role: 'user', content: 'hi', timestamp: 0 }] };
/** Each model's own stream function, as the registry would pick it. */
const base: StreamFunction = (model, ctx, options) =>
  model.provider === 'anthropic' ? streamAnthropic(model, ctx, options) : streamOpenAIChat(model, ctx, options);

function setup() {
  let clock = 1_000_000;
  const routes: CallRoute[] = [];
  const primary = { ...resolveModel('claude-haiku-4-5'), baseUrl: a.url };
  const fallback = modelForProvider({ name: 'local', type: 'openai-compatible', baseUrl: b.url }, 'fake-model');
  const fn = withFallback(base, [{ model: fallback }], {
    cooldownMs: 60_000,
    now: () => clock,
    onRoute: (r) => routes.push(r),
  });
  const call = () => fn(primary, context, { apiKey: 'sk-a', maxRetries: 0 }).result();
  return { call, routes, advance: (ms: number) => (clock += ms) };
}

describe('withFallback', () => {
  it('moves an overloaded call to the next model, skips the primary while it cools down, then tries it again', async () => {
    aReply = { kind: 'http-error', status: 529, errorType: 'overloaded_error', message: 'Overloaded' };
    bReply = { kind: 'chat', text: 'from B' };
    const { call, routes, advance } = setup();
    const aBefore = a.requests.length;
    const first = await call();
    expect(first.stopReason).toBe('stop');
    expect(first.provider).toBe('local');
    expect(first.content).toEqual([{ type: 'text', text: 'from B' }]);
    expect(a.requests.length).toBe(aBefore + 1);
    expect(routes[0]).toMatchObject({
      primary: { provider: 'anthropic', id: 'claude-haiku-4-5' },
      served: { provider: 'local', id: 'fake-model' },
      kind: 'overloaded',
      status: 529,
    });
    expect(routes[0]!.reason).toMatch(/^anthropic\/claude-haiku-4-5 failed: .*Overloaded/);
    // The key of the primary went to the primary only.
    expect(JSON.stringify(b.requests.at(-1)!.headers)).not.toContain('sk-a');

    advance(59_000);
    await call();
    expect(a.requests.length).toBe(aBefore + 1); // skipped
    expect(routes[1]!.reason).toMatch(/skipped while cooling down for 1 s more \(it failed: .*Overloaded/);

    // The cool-down is over and A has recovered: the call is A's again, with no route reported.
    advance(2_000);
    aReply = { kind: 'message', content: [{ type: 'text', text: 'from A' }] };
    const back = await call();
    expect(a.requests.length).toBe(aBefore + 2);
    expect(back.provider).toBe('anthropic');
    expect(routes).toHaveLength(2);
  });

  it('a failure a new request cannot fix (400) does not move the call', async () => {
    aReply = { kind: 'http-error', status: 400, errorType: 'invalid_request_error', message: 'bad request' };
    const { call, routes } = setup();
    const bBefore = b.requests.length;
    const r = await call();
    expect(r.stopReason).toBe('error');
    expect(r.errorMessage).toContain('bad request');
    expect(b.requests.length).toBe(bBefore);
    expect(routes).toEqual([]);
  });

  it('when every model fails, the call fails with the last error and names the ones before', async () => {
    aReply = { kind: 'http-error', status: 529, errorType: 'overloaded_error', message: 'Overloaded' };
    bReply = { kind: 'http-error', status: 503, message: 'B is down' };
    const { call, routes } = setup();
    const r = await call();
    expect(r.stopReason).toBe('error');
    expect(r.errorMessage).toMatch(/B is down.*\(after anthropic\/claude-haiku-4-5 failed: .*Overloaded/);
    expect(routes).toHaveLength(1);
    expect(routes[0]).toMatchObject({ served: { provider: 'local' }, failed: true, status: 503 });
  });
});
