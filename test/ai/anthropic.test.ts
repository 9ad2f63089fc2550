// The Anthropic provider through the real SDK over HTTP against the fake Messages API.
import { afterEach, describe, expect, it } from 'vitest';
import { MISSING_API_KEY_MESSAGE, streamAnthropic } from '../../src/ai/anthropic.js';
import { getModel } from '../../src/ai/models.js';
import { isContextOverflow } from '../../src/ai/overflow.js';
import type {
  AssistantMessage,
  AssistantMessageEvent,
  Context,
  Message,
  Model,
  RetryInfo,
  StreamOptions,
} from '../../src/ai/types.js';
import { emptyUsage } from '../../src/ai/usage.js';
import { type FakeAnthropic, type ResponseSpec, startFakeAnthropic } from '../helpers/fake-anthropic-server.js';

let server: FakeAnthropic | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

async function serve(...responses: ResponseSpec[]): Promise<Model> {
  server = await startFakeAnthropic({ responses });
  return { ...getModel('claude-sonnet-4-5')!, baseUrl: server.url };
}

const fast: StreamOptions = { apiKey: 'sk-test', retryBaseDelayMs: 1, streamIdleTimeoutMs: 5000 };
const user = (text: string): Message => ({ role: 'user', content: text, timestamp: 1 });
const ctx = (...messages: Message[]): Context => ({
  systemPrompt: 'You are terse.',
  messages: messages.length ? messages : [user('hi')],
});

async function collect(model: Model, context: Context, options: StreamOptions = fast) {
  const s = streamAnthropic(model, context, options);
  const events: AssistantMessageEvent[] = [];
  for await (const e of s) events.push(e);
  return { events, result: await s.result() };
}

function assistant(content: AssistantMessage['content'], extra: Partial<AssistantMessage> = {}): AssistantMessage {
  return {
    role: 'assistant',
    content,
    api: 'anthropic-messages',
    provider: 'anthropic',
    model: 'claude-sonnet-4-5',
    usage: emptyUsage(),
    stopReason: content.some((c) => c.type === 'toolCall') ? 'toolUse' : 'stop',
    timestamp: 2,
    ...extra,
  };
}

describe('anthropic provider: streaming', () => {
  it('streams text as start, text_start, text_delta*, text_end, done with the full text', async () => {
    const model = await serve({
      kind: 'message',
      content: [{ type: 'text', text: 'Hello there, world!' }],
      chunkSize: 6,
    });
    const { events, result } = await collect(model, ctx());
    expect(events.map((e) => e.type)).toEqual([
      'start',
      'text_start',
      'text_delta',
      'text_delta',
      'text_delta',
      'text_delta',
      'text_end',
      'done',
    ]);
    const deltas = events.flatMap((e) => (e.type === 'text_delta' ? [e.delta] : []));
    expect(deltas.join('')).toBe('Hello there, world!');
    const end = events.find((e) => e.type === 'text_end');
    expect(end?.type === 'text_end' && end.content).toBe('Hello there, world!');
    expect(result.stopReason).toBe('stop');
    expect(result.content).toEqual([{ type: 'text', text: 'Hello there, world!' }]);
    expect(server!.requests[0]!.headers.authorization).toBe('Bearer sk-test');
  });

  it('keeps thinking with its signature and redacted thinking with its payload', async () => {
    const model = await serve({
      kind: 'message',
      content: [
        { type: 'thinking', thinking: 'Let me consider this.', signature: 'sig-abc' },
        { type: 'redacted_thinking', data: 'ENCRYPTED' },
        { type: 'text', text: 'Done.' },
      ],
    });
    const { events, result } = await collect(model, ctx(), { ...fast, reasoning: 'low' });
    expect(events.filter((e) => e.type === 'thinking_start')).toHaveLength(2);
    expect(result.content[0]).toEqual({
      type: 'thinking',
      thinking: 'Let me consider this.',
      thinkingSignature: 'sig-abc',
    });
    expect(result.content[1]).toMatchObject({ type: 'thinking', redacted: true, thinkingSignature: 'ENCRYPTED' });
    const body = server!.requests[0]!.body;
    expect(body.thinking).toEqual({ type: 'enabled', budget_tokens: 2048 });
    expect(body.temperature).toBeUndefined();
  });

  it('streams tool arguments as toolcall_delta with re-parsed partial arguments and ends with the parsed call', async () => {
    const args = { path: 'src/a.ts', edits: [{ oldText: 'x', newText: 'y' }] };
    const model = await serve({
      kind: 'message',
      content: [
        { type: 'text', text: 'Editing.' },
        { type: 'tool_use', id: 'toolu_1', name: 'edit', input: args },
      ],
      chunkSize: 7,
    });
    const partials: unknown[] = [];
    const s = streamAnthropic(model, ctx(), fast);
    const types: string[] = [];
    for await (const e of s) {
      types.push(e.type);
      if (e.type === 'toolcall_delta') {
        const block = e.partial.content[e.contentIndex];
        partials.push(block?.type === 'toolCall' ? structuredClone(block.arguments) : undefined);
      }
    }
    const result = await s.result();
    expect(types.filter((t) => t === 'toolcall_delta').length).toBeGreaterThan(3);
    expect(partials).toContainEqual({ path: 'src/a.ts' });
    expect(partials.at(-1)).toEqual(args);
    expect(result.stopReason).toBe('toolUse');
    expect(result.content[1]).toEqual({ type: 'toolCall', id: 'toolu_1', name: 'edit', arguments: args });
    expect(types.at(-2)).toBe('toolcall_end');
  });

  it('reports usage including cache read/write and prices it with the model table', async () => {
    const model = await serve({
      kind: 'message',
      content: [{ type: 'text', text: 'ok' }],
      usage: {
        input_tokens: 1000,
        output_tokens: 1,
        cache_read_input_tokens: 20_000,
        cache_creation_input_tokens: 3000,
      },
      deltaUsage: { output_tokens: 500, input_tokens: null },
    });
    const { result } = await collect(model, ctx());
    expect(result.usage).toMatchObject({
      input: 1000,
      output: 500,
      cacheRead: 20_000,
      cacheWrite: 3000,
      totalTokens: 24_500,
    });
    // Sonnet 4.5: $3 in, $15 out, $0.30 cache read, $3.75 cache write per million tokens.
    expect(result.usage.cost.input).toBeCloseTo(0.003, 10);
    expect(result.usage.cost.output).toBeCloseTo(0.0075, 10);
    expect(result.usage.cost.cacheRead).toBeCloseTo(0.006, 10);
    expect(result.usage.cost.cacheWrite).toBeCloseTo(0.01125, 10);
    expect(result.usage.cost.total).toBeCloseTo(0.02775, 10);
  });

  it('maps stop reasons: max_tokens is length, refusal is an error', async () => {
    const model = await serve(
      { kind: 'message', content: [{ type: 'text', text: 'cut' }], stopReason: 'max_tokens' },
      { kind: 'message', content: [{ type: 'text', text: 'no' }], stopReason: 'refusal' },
    );
    expect((await collect(model, ctx())).result.stopReason).toBe('length');
    const refused = (await collect(model, ctx())).result;
    expect(refused.stopReason).toBe('error');
    expect(refused.errorMessage).toMatch(/refusal/);
    expect(refused.content).toEqual([{ type: 'text', text: 'no' }]);
  });
});

describe('anthropic provider: request body', () => {
  it('merges consecutive tool results into one user message', async () => {
    const model = await serve({ kind: 'message', content: [{ type: 'text', text: 'ok' }] });
    const a = assistant([
      { type: 'toolCall', id: 'toolu_a', name: 'read', arguments: { path: 'a' } },
      { type: 'toolCall', id: 'toolu_b', name: 'read', arguments: { path: 'b' } },
    ]);
    await collect(
      model,
      ctx(
        user('read both'),
        a,
        {
          role: 'toolResult',
          toolCallId: 'toolu_a',
          toolName: 'read',
          content: [
            { type: 'text', text: 'A1' },
            { type: 'text', text: 'A2' },
          ],
          isError: false,
          timestamp: 3,
        },
        {
          role: 'toolResult',
          toolCallId: 'toolu_b',
          toolName: 'read',
          content: [{ type: 'text', text: 'missing' }],
          isError: true,
          timestamp: 4,
        },
      ),
    );
    const messages = server!.requests[0]!.body.messages;
    expect(messages).toHaveLength(3);
    expect(messages[2].role).toBe('user');
    expect(messages[2].content).toEqual([
      { type: 'tool_result', tool_use_id: 'toolu_a', content: 'A1\nA2', is_error: false },
      {
        type: 'tool_result',
        tool_use_id: 'toolu_b',
        content: 'missing',
        is_error: true,
        cache_control: { type: 'ephemeral' },
      },
    ]);
  });

  it("puts cache_control on the system block, the last block of the last user message and the previous request's tail", async () => {
    const model = await serve(
      { kind: 'message', content: [{ type: 'text', text: 'ok' }] },
      { kind: 'message', content: [{ type: 'text', text: 'ok' }] },
    );
    await collect(
      model,
      ctx(
        {
          role: 'user',
          content: [
            { type: 'text', text: 'first' },
            { type: 'text', text: 'second' },
          ],
          timestamp: 1,
        },
        assistant([{ type: 'text', text: 'answer' }]),
        {
          role: 'user',
          content: [
            { type: 'text', text: 'third' },
            { type: 'image', data: 'AAAA', mimeType: 'image/png' },
          ],
          timestamp: 3,
        },
      ),
    );
    const body = server!.requests[0]!.body;
    expect(body.system).toEqual([{ type: 'text', text: 'You are terse.', cache_control: { type: 'ephemeral' } }]);
    const marked = JSON.stringify(body.messages).split('cache_control').length - 1;
    expect(marked).toBe(2);
    expect(body.messages[2].content[1]).toMatchObject({ type: 'image', cache_control: { type: 'ephemeral' } });
    // The previous request ended after "second": its cache entry is read exactly.
    expect(body.messages[0].content[0].cache_control).toBeUndefined();
    expect(body.messages[0].content[1].cache_control).toEqual({ type: 'ephemeral' });

    // A conversation ending with an assistant message gets no message breakpoint at all.
    await collect(model, ctx(user('q'), assistant([{ type: 'text', text: 'partial answer' }])));
    const second = server!.requests[1]!.body;
    expect(JSON.stringify(second.messages)).not.toContain('cache_control');
    expect(second.system[0].cache_control).toEqual({ type: 'ephemeral' });
  });

  it('sends no cache_control at all with cacheRetention "none"', async () => {
    const model = await serve({ kind: 'message', content: [{ type: 'text', text: 'ok' }] });
    await collect(model, ctx(), { ...fast, cacheRetention: 'none' });
    expect(server!.requests[0]!.rawBody).not.toContain('cache_control');
  });

  it('never replays errored or aborted replies and repairs orphan tool calls with a "No result provided" error result', async () => {
    const model = await serve({ kind: 'message', content: [{ type: 'text', text: 'ok' }] });
    await collect(
      model,
      ctx(
        user('one'),
        assistant([{ type: 'text', text: 'half a thought' }], { stopReason: 'error', errorMessage: 'overloaded' }),
        assistant([{ type: 'text', text: 'interrupted' }], { stopReason: 'aborted' }),
        assistant([{ type: 'toolCall', id: 'toolu_orphan', name: 'bash', arguments: { command: 'ls' } }]),
        user('two'),
      ),
    );
    const messages = server!.requests[0]!.body.messages;
    const text = JSON.stringify(messages);
    expect(text).not.toContain('half a thought');
    expect(text).not.toContain('interrupted');
    // The synthetic result and the user text after it are ONE user turn: roles strictly alternate.
    expect(messages.map((m: { role: string }) => m.role)).toEqual(['user', 'assistant', 'user']);
    expect(messages[2].content).toEqual([
      { type: 'tool_result', tool_use_id: 'toolu_orphan', content: 'No result provided', is_error: true },
      { type: 'text', text: 'two', cache_control: { type: 'ephemeral' } },
    ]);
    expect(messages[0].content).toEqual([{ type: 'text', text: 'one', cache_control: { type: 'ephemeral' } }]);
  });

  it('merges consecutive same-role messages into one turn (a prompt after a dropped failed reply, a note after tool results)', async () => {
    const model = await serve({ kind: 'message', content: [{ type: 'text', text: 'ok' }] });
    await collect(
      model,
      ctx(
        user('first try'),
        assistant([{ type: 'text', text: 'cut' }], { stopReason: 'aborted' }),
        user('note'),
        assistant([{ type: 'toolCall', id: 'toolu_a', name: 'bash', arguments: { command: 'ls' } }]),
        {
          role: 'toolResult',
          toolCallId: 'toolu_a',
          toolName: 'bash',
          content: [{ type: 'text', text: 'a.txt' }],
          isError: false,
          timestamp: 1,
        },
        user('go on'),
      ),
      { ...fast, cacheRetention: 'none' },
    );
    const messages = server!.requests[0]!.body.messages;
    expect(messages.map((m: { role: string }) => m.role)).toEqual(['user', 'assistant', 'user']);
    expect(messages[0].content).toEqual([
      { type: 'text', text: 'first try' },
      { type: 'text', text: 'note' },
    ]);
    expect(messages[2].content).toEqual([
      { type: 'tool_result', tool_use_id: 'toolu_a', content: 'a.txt', is_error: false },
      { type: 'text', text: 'go on' },
    ]);
  });

  it('downgrades unsigned thinking to text and normalises foreign tool-call ids with their results', async () => {
    const model = await serve({ kind: 'message', content: [{ type: 'text', text: 'ok' }] });
    const foreign = assistant(
      [
        { type: 'thinking', thinking: 'foreign reasoning' },
        { type: 'toolCall', id: 'call|abc.123', name: 'read', arguments: { path: 'x' } },
      ],
      { provider: 'openai', api: 'openai-responses', model: 'gpt-x' },
    );
    const own = assistant([
      { type: 'thinking', thinking: 'aborted reasoning' },
      { type: 'text', text: 'see' },
    ]);
    await collect(
      model,
      ctx(
        user('go'),
        foreign,
        {
          role: 'toolResult',
          toolCallId: 'call|abc.123',
          toolName: 'read',
          content: [{ type: 'text', text: 'data' }],
          isError: false,
          timestamp: 3,
        },
        own,
        user('next'),
      ),
    );
    const messages = server!.requests[0]!.body.messages;
    expect(messages[1].content).toEqual([
      { type: 'text', text: 'foreign reasoning' },
      { type: 'tool_use', id: 'call_abc_123', name: 'read', input: { path: 'x' } },
    ]);
    expect(messages[2].content[0].tool_use_id).toBe('call_abc_123');
    expect(messages[3].content).toEqual([
      { type: 'text', text: 'aborted reasoning' },
      { type: 'text', text: 'see' },
    ]);
  });

  it('lets onPayload replace the request body', async () => {
    const model = await serve({ kind: 'message', content: [{ type: 'text', text: 'ok' }] });
    await collect(model, ctx(), { ...fast, onPayload: (p) => ({ ...(p as object), metadata: { user_id: 'u-1' } }) });
    expect(server!.requests[0]!.body.metadata).toEqual({ user_id: 'u-1' });
  });
});

describe('anthropic provider: failures and retries', () => {
  // 429 retry-after, 500 then success, a permanent failure and maxRetries: 0 are in the shared
  // provider-conformance suite (the one retry loop, provider-retry.ts).
  it('does not retry a 400 "prompt is too long", which isContextOverflow recognises', async () => {
    const model = await serve({
      kind: 'http-error',
      status: 400,
      message: 'prompt is too long: 210000 tokens > 200000 maximum',
    });
    const { result } = await collect(model, ctx());
    expect(server!.requests).toHaveLength(1);
    expect(result.errorMessage).toContain('400 invalid_request_error: prompt is too long');
    expect(isContextOverflow(result)).toBe(true);
    expect({ status: result.errorStatus, kind: result.errorKind }).toEqual({ status: 400, kind: undefined });
  });

  it('turns a stream cut mid-message into an error that keeps the partial content', async () => {
    const model = await serve({
      kind: 'cut',
      afterEvents: 4,
      content: [{ type: 'text', text: 'The answer is forty-two.' }],
      chunkSize: 5,
    });
    const { events, result } = await collect(model, ctx());
    expect(events.at(-1)?.type).toBe('error');
    expect(result.stopReason).toBe('error');
    // Four events got through: message_start, content_block_start, "The a", "nswer".
    expect(result.content).toEqual([{ type: 'text', text: 'The answer' }]);
    expect(result.errorMessage).toMatch(/connection .*lost|ended before/i);
    expect(server!.requests).toHaveLength(1); // content had streamed: not retried
  });

  it('retries a stream cut before any content streamed', async () => {
    const model = await serve(
      { kind: 'cut', afterEvents: 1, content: [{ type: 'text', text: 'lost' }] },
      { kind: 'message', content: [{ type: 'text', text: 'second try' }] },
    );
    const retries: RetryInfo[] = [];
    const { events, result } = await collect(model, ctx(), { ...fast, onRetry: (i) => retries.push(i) });
    expect(result.content).toEqual([{ type: 'text', text: 'second try' }]);
    expect(retries[0]?.kind).toBe('connection');
    expect(events.filter((e) => e.type === 'start')).toHaveLength(1);
  });

  it('turns an SSE error event into an error message with the partial content', async () => {
    const model = await serve({
      kind: 'sse-error',
      afterEvents: 3,
      content: [{ type: 'text', text: 'Working on it' }],
      chunkSize: 4,
      errorType: 'overloaded_error',
      message: 'Overloaded',
    });
    const { result } = await collect(model, ctx());
    expect(result.stopReason).toBe('error');
    expect(result.errorMessage).toMatch(/overloaded_error: Overloaded/);
    expect(result.content).toEqual([{ type: 'text', text: 'Work' }]);
    expect(server!.requests).toHaveLength(1);
  });

  it('retries an SSE overloaded error that arrives before any content', async () => {
    const model = await serve(
      { kind: 'sse-error', afterEvents: 1, errorType: 'overloaded_error', message: 'Overloaded' },
      { kind: 'message', content: [{ type: 'text', text: 'recovered' }] },
    );
    const retries: RetryInfo[] = [];
    const { result } = await collect(model, ctx(), { ...fast, onRetry: (i) => retries.push(i) });
    expect(retries.map((r) => [r.kind, r.status])).toEqual([['overloaded', undefined]]);
    expect(result.content).toEqual([{ type: 'text', text: 'recovered' }]);
  });

  it('ends an abort mid-stream as "aborted", keeping what streamed', async () => {
    const model = await serve({
      kind: 'message',
      content: [{ type: 'text', text: 'a b c d e f g h i j k l m n o p' }],
      chunkSize: 2,
      delayMs: 15,
    });
    const controller = new AbortController();
    const s = streamAnthropic(model, ctx(), { ...fast, signal: controller.signal });
    const types: string[] = [];
    for await (const e of s) {
      types.push(e.type);
      if (e.type === 'text_delta') controller.abort();
    }
    const result = await s.result();
    expect(types.at(-1)).toBe('error');
    expect(result.stopReason).toBe('aborted');
    expect(result.content[0]?.type === 'text' && result.content[0].text.length).toBeGreaterThan(0);
    expect(result.content[0]?.type === 'text' && result.content[0].text.length).toBeLessThan(31);
  });

  it('abandons a stream that sends nothing for streamIdleTimeoutMs instead of hanging', async () => {
    const model = await serve({ kind: 'hang' });
    const { result } = await collect(model, ctx(), { ...fast, maxRetries: 0, streamIdleTimeoutMs: 150 });
    expect(result.stopReason).toBe('error');
    expect(result.errorMessage).toMatch(/sent nothing for 150 ms.*streamIdleTimeoutMs/);
    // The class travels as data (issue 43): the orchestrator reads errorCause, not the wording.
    expect(result).toMatchObject({ errorKind: 'connection', errorCause: 'timeout' });
  });

  it('without an API key, says to set ANTHROPIC_API_KEY or use the scripted provider', async () => {
    const model = await serve();
    const saved = process.env.ANTHROPIC_API_KEY;
    delete process.env.ANTHROPIC_API_KEY;
    try {
      const { events, result } = await collect(model, ctx(), { ...fast, apiKey: undefined });
      expect(events.map((e) => e.type)).toEqual(['error']);
      expect(result.errorMessage).toBe(MISSING_API_KEY_MESSAGE);
      expect(result.errorMessage).toContain('ANTHROPIC_API_KEY');
      expect(result.errorMessage).toContain('--provider scripted --script FILE');
      expect(server!.requests).toHaveLength(0);
    } finally {
      if (saved !== undefined) process.env.ANTHROPIC_API_KEY = saved;
    }
  });

  it('takes the key from ANTHROPIC_API_KEY and the URL from ANTHROPIC_BASE_URL', async () => {
    const served = await serve({ kind: 'message', content: [{ type: 'text', text: 'env' }] });
    const saved = { key: process.env.ANTHROPIC_API_KEY, url: process.env.ANTHROPIC_BASE_URL };
    process.env.ANTHROPIC_API_KEY = 'sk-from-env';
    process.env.ANTHROPIC_BASE_URL = served.baseUrl;
    try {
      const { result } = await collect({ ...served, baseUrl: undefined }, ctx(), { retryBaseDelayMs: 1 });
      expect(result.content).toEqual([{ type: 'text', text: 'env' }]);
      expect(server!.requests[0]!.headers.authorization).toBe('Bearer sk-from-env');
    } finally {
      for (const [k, v] of [
        ['ANTHROPIC_API_KEY', saved.key],
        ['ANTHROPIC_BASE_URL', saved.url],
      ] as const) {
        if (v === undefined) delete process.env[k];
        else process.env[k] = v;
      }
    }
  });
});

describe('anthropic provider: permit hooks', () => {
  it('awaits beforeAttempt before every request, retries included, and reports each attempt end', async () => {
    const model = await serve(
      {
        kind: 'http-error',
        status: 429,
        errorType: 'rate_limit_error',
        message: 'slow down',
        headers: { 'retry-after-ms': '5' },
      },
      { kind: 'message', content: [{ type: 'text', text: 'ok' }] },
    );
    const log: string[] = [];
    const { result } = await collect(model, ctx(), {
      ...fast,
      beforeAttempt: async ({ attempt }) => {
        log.push(`before ${attempt} (requests so far: ${server!.requests.length})`);
      },
      onAttemptEnd: ({ attempt, started, status }) =>
        log.push(`end ${attempt} started=${started}${status ? ` status=${status}` : ''}`),
    });
    expect(result.stopReason).toBe('stop');
    expect(log).toEqual([
      'before 1 (requests so far: 0)',
      'end 1 started=false status=429',
      'before 2 (requests so far: 1)',
      'end 2 started=true',
    ]);
  });

  it('a beforeAttempt that throws fails the call with its message and sends nothing', async () => {
    const model = await serve({ kind: 'message', content: [{ type: 'text', text: 'never' }] });
    const { result } = await collect(model, ctx(), {
      ...fast,
      beforeAttempt: async () => {
        throw new Error('Budget exhausted: run budget of $1 is spent');
      },
    });
    expect(result.stopReason).toBe('error');
    expect(result.errorMessage).toBe('Budget exhausted: run budget of $1 is spent');
    expect(server!.requests).toHaveLength(0);
  });
});
