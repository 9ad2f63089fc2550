// The OpenAI-compatible provider through the real `openai` SDK against the strict fake server:
// the stream shapes real servers send (parallel calls by index or all at index 0, a double
// finish, no usage, calls as JSON text), tool_choice fallback, the Responses API, retries and
// overflow. Each test asserts the exact calls and arguments, and exact or estimated usage.
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, describe, expect, it } from 'vitest';
import { isContextOverflow } from '../../src/ai/overflow.js';
import { modelForProvider, type ProviderConfig } from '../../src/ai/provider-config.js';
import { streamOpenAIChat, streamOpenAIResponses } from '../../src/ai/openai-compatible.js';
import type {
  AssistantMessage,
  AssistantMessageEvent,
  Context,
  Model,
  StreamOptions,
  Tool,
  ToolCall,
} from '../../src/ai/types.js';
import { startFakeOpenAI, type FakeOpenAI, type FakeOpenAIOptions } from '../helpers/fake-openai-server.js';

const servers: FakeOpenAI[] = [];
afterAll(async () => {
  for (const s of servers) await s.close();
});

const TOOLS: Tool[] = [
  {
    name: 'read',
    description: 'Read a file',
    parameters: { type: 'object', properties: { path: { type: 'string' } }, required: ['path'] },
  },
  {
    name: 'write',
    description: 'Write a file',
    parameters: {
      type: 'object',
      properties: { path: { type: 'string' }, content: { type: 'string' } },
      required: ['path', 'content'],
    },
  },
];

async function setup(
  options: FakeOpenAIOptions,
  config: Partial<ProviderConfig> = {},
): Promise<{ server: FakeOpenAI; model: Model }> {
  const server = await startFakeOpenAI(options);
  servers.push(server);
  const model = modelForProvider(
    { name: 'local', type: 'openai-compatible', baseUrl: server.url, ...config },
    'fake-model',
    {
      contextWindow: 32_000,
      maxTokens: 4_000,
      cost: { input: 1, output: 2, cacheRead: 0.5, cacheWrite: 0 },
    },
  );
  return { server, model };
}

function context(): Context {
  return {
    systemPrompt: 'You edit files.',
    messages: [{ role: 'user', content: 'Fix a.ts and b.ts', timestamp: 1 }],
    tools: TOOLS,
  };
}

async function run(
  model: Model,
  ctx: Context,
  options: StreamOptions = {},
  api: 'chat' | 'responses' = 'chat',
): Promise<{ message: AssistantMessage; events: AssistantMessageEvent[] }> {
  const s = (api === 'chat' ? streamOpenAIChat : streamOpenAIResponses)(model, ctx, {
    apiKey: 'sk-test',
    retryBaseDelayMs: 1,
    ...options,
  });
  const events: AssistantMessageEvent[] = [];
  for await (const e of s) events.push(e);
  return { message: await s.result(), events };
}

const calls = (m: AssistantMessage): Pick<ToolCall, 'name' | 'arguments'>[] =>
  m.content.filter((b): b is ToolCall => b.type === 'toolCall').map((c) => ({ name: c.name, arguments: c.arguments }));

/** The reply and its tool results appended, as the agent loop does. */
function answer(ctx: Context, reply: AssistantMessage): Context {
  const results = reply.content
    .filter((b): b is ToolCall => b.type === 'toolCall')
    .map((c) => ({
      role: 'toolResult' as const,
      toolCallId: c.id,
      toolName: c.name,
      content: [{ type: 'text' as const, text: `ok ${c.name}` }],
      isError: false,
      timestamp: 2,
    }));
  return { ...ctx, messages: [...ctx.messages, reply, ...results] };
}

describe('OpenAI-compatible chat completions', () => {
  it('parallel calls by index with a usage chunk: exact calls, exact usage with cache reads, valid follow-up', async () => {
    const { server, model } = await setup({
      responses: [
        {
          kind: 'chat',
          text: 'Reading both.',
          toolCalls: [
            { name: 'read', arguments: { path: 'a.ts' } },
            { name: 'read', arguments: { path: 'b.ts' } },
          ],
          usage: { prompt_tokens: 1200, completion_tokens: 40, cached_tokens: 1000 },
        },
        { kind: 'chat', text: 'Done.' },
      ],
    });
    const ctx = context();
    const { message, events } = await run(model, ctx);
    expect(message.stopReason).toBe('toolUse');
    expect(calls(message)).toEqual([
      { name: 'read', arguments: { path: 'a.ts' } },
      { name: 'read', arguments: { path: 'b.ts' } },
    ]);
    expect(events.filter((e) => e.type === 'toolcall_end')).toHaveLength(2);
    expect(message.usage).toMatchObject({ input: 200, cacheRead: 1000, output: 40, totalTokens: 1240 });
    expect(message.usage.estimated).toBeUndefined();
    expect(message.usage.cost.total).toBeCloseTo((200 * 1 + 1000 * 0.5 + 40 * 2) / 1e6, 12);
    const body = server.requests[0]!.body;
    expect(body.stream_options).toEqual({ include_usage: true });
    expect(body.tools.map((t: { function: { name: string } }) => t.function.name)).toEqual(['read', 'write']);
    expect(body.messages[0]).toEqual({ role: 'system', content: 'You edit files.' });

    const second = await run(model, answer(ctx, message));
    expect(second.message.content).toEqual([{ type: 'text', text: 'Done.' }]);
    expect(server.rejected).toEqual([]);
    const sent = server.requests[1]!.body.messages;
    expect(
      sent.filter((m: { role: string }) => m.role === 'tool').map((m: { tool_call_id: string }) => m.tool_call_id),
    ).toEqual(['call_fake0_0', 'call_fake0_1']);
  });

  it('every call at index 0 and no usage chunk: three separate calls, usage estimated and flagged', async () => {
    const { server, model } = await setup({
      responses: [
        {
          kind: 'chat',
          callIndexing: 'index-zero',
          usage: null,
          toolCalls: [
            { name: 'read', arguments: { path: 'a.ts' } },
            { name: 'write', arguments: { path: 'b.ts', content: 'x = 1' } },
            { name: 'read', arguments: { path: 'c.ts' } },
          ],
        },
      ],
    });
    const { message, events } = await run(model, context());
    expect(calls(message)).toEqual([
      { name: 'read', arguments: { path: 'a.ts' } },
      { name: 'write', arguments: { path: 'b.ts', content: 'x = 1' } },
      { name: 'read', arguments: { path: 'c.ts' } },
    ]);
    expect(new Set(message.content.map((b) => (b as ToolCall).id)).size).toBe(3);
    expect(events.filter((e) => e.type === 'toolcall_end')).toHaveLength(3);
    expect(message.usage.estimated).toBe(true);
    expect(message.usage.input).toBeGreaterThan(20);
    expect(message.usage.output).toBeGreaterThan(5);
    expect(message.usage.cost.total).toBeGreaterThan(0);
    expect(server.requests).toHaveLength(1);
  });

  it('a duplicated finish_reason does not duplicate calls', async () => {
    const { model } = await setup({
      responses: [
        {
          kind: 'chat',
          doubleFinish: true,
          toolCalls: [
            { name: 'read', arguments: { path: 'a.ts' } },
            { name: 'read', arguments: { path: 'b.ts' } },
          ],
        },
      ],
    });
    const { message, events } = await run(model, context());
    expect(calls(message)).toEqual([
      { name: 'read', arguments: { path: 'a.ts' } },
      { name: 'read', arguments: { path: 'b.ts' } },
    ]);
    expect(events.filter((e) => e.type === 'toolcall_end')).toHaveLength(2);
    expect(events.filter((e) => e.type === 'done')).toHaveLength(1);
  });

  it('tool calls written as JSON text become calls with compat.text_tool_calls, and stay text without it', async () => {
    const tagged = 'I will read it.\n<tool_call>\n{"name": "read", "arguments": {"path": "a.ts"}}\n</tool_call>';
    const list =
      '```json\n[{"name": "read", "arguments": {"path": "a.ts"}}, {"name": "write", "arguments": {"path": "b.ts", "content": "y"}}]\n```';
    const notACall = '{"name": "rm", "arguments": {"path": "/"}}';
    const replies = [tagged, list, notACall, tagged];
    const { server, model } = await setup(
      { respond: ({ index }) => ({ kind: 'chat', text: replies[index]! }) },
      { compat: { textToolCalls: true } },
    );
    const one = await run(model, context());
    expect(one.message.stopReason).toBe('toolUse');
    expect(one.message.content[0]).toEqual({ type: 'text', text: 'I will read it.' });
    expect(calls(one.message)).toEqual([{ name: 'read', arguments: { path: 'a.ts' } }]);
    const two = await run(model, context());
    expect(calls(two.message)).toEqual([
      { name: 'read', arguments: { path: 'a.ts' } },
      { name: 'write', arguments: { path: 'b.ts', content: 'y' } },
    ]);
    expect(two.message.content.some((b) => b.type === 'text')).toBe(false);
    // The follow-up with the results is valid for the strict server (ids were generated once each).
    await run(model, answer(context(), two.message));
    expect(server.rejected).toEqual([]);
    // A tool the request did not offer is ordinary text.
    const three = server.requests.length; // 3 requests so far
    expect(three).toBe(3);
    const plain = await run({ ...model, compat: {} }, context());
    expect(plain.message.content).toEqual([{ type: 'text', text: tagged }]);
    expect(calls(plain.message)).toEqual([]);
  });

  it('a 400 on the object tool_choice is retried once in string form, and the string form is remembered', async () => {
    const { server, model } = await setup({
      stringToolChoiceOnly: true,
      respond: () => ({ kind: 'chat', toolCalls: [{ name: 'read', arguments: { path: 'a.ts' } }] }),
    });
    const first = await run(model, context(), { toolChoice: { name: 'read' } });
    expect(calls(first.message)).toEqual([{ name: 'read', arguments: { path: 'a.ts' } }]);
    expect(server.requests.map((r) => r.body.tool_choice)).toEqual([
      { type: 'function', function: { name: 'read' } },
      'required',
    ]);
    await run(model, context(), { toolChoice: { name: 'read' } });
    expect(server.requests.map((r) => r.body.tool_choice)).toEqual([
      { type: 'function', function: { name: 'read' } },
      'required',
      'required',
    ]);
    expect(server.rejected).toHaveLength(1);
  });

  // 429 retry-after, retry exhaustion and every error body shape: test/ai/provider-conformance.test.ts.
  it('an overflow is a final error the overflow check recognises, in each server wording', async () => {
    for (const wording of ['openai', 'llamacpp', 'lmstudio'] as const) {
      const { server, model } = await setup({ contextWindow: 10, overflowWording: wording, responses: [] });
      const { message } = await run(model, context());
      expect(message.stopReason).toBe('error');
      expect(isContextOverflow(message, model.contextWindow)).toBe(true);
      expect(server.requests).toHaveLength(1);
    }
  });

  it('a budget refusal in beforeAttempt stops before any request', async () => {
    const { server, model } = await setup({ responses: [{ kind: 'chat', text: 'never' }] });
    const { message } = await run(model, context(), {
      beforeAttempt: async () => {
        throw new Error('budget exhausted');
      },
    });
    expect(message.errorMessage).toBe('budget exhausted');
    expect(server.requests).toHaveLength(0);
  });

  it('no key for a remote server is an actionable error naming the variable', async () => {
    const model = modelForProvider(
      {
        name: 'openrouter',
        type: 'openai-compatible',
        baseUrl: 'https://openrouter.ai/api/v1',
        apiKeyEnv: 'ORCH_TEST_UNSET_KEY',
      },
      'x/y',
    );
    const s = streamOpenAIChat(model, context());
    const m = await s.result();
    expect(m.errorMessage).toMatch(/set ORCH_TEST_UNSET_KEY/);
  });
});

describe('OpenAI Responses API', () => {
  it('streams text and parallel function calls, usage with cache reads, and a valid follow-up', async () => {
    const { server, model } = await setup(
      {
        responses: [
          {
            kind: 'responses',
            text: 'Reading.',
            toolCalls: [
              { name: 'read', arguments: { path: 'a.ts' } },
              { name: 'write', arguments: { path: 'b.ts', content: 'z' } },
            ],
            usage: { input_tokens: 500, output_tokens: 30, cached_tokens: 300 },
          },
          { kind: 'responses', text: 'Done.' },
        ],
      },
      { api: 'responses' },
    );
    const ctx = context();
    const { message } = await run(model, ctx, {}, 'responses');
    expect(message.stopReason).toBe('toolUse');
    expect(message.content[0]).toEqual({ type: 'text', text: 'Reading.' });
    expect(calls(message)).toEqual([
      { name: 'read', arguments: { path: 'a.ts' } },
      { name: 'write', arguments: { path: 'b.ts', content: 'z' } },
    ]);
    expect(message.usage).toMatchObject({ input: 200, cacheRead: 300, output: 30 });
    const second = await run(model, answer(ctx, message), {}, 'responses');
    expect(second.message.content).toEqual([{ type: 'text', text: 'Done.' }]);
    expect(server.rejected).toEqual([]);
    expect(server.requests[0]!.path).toBe('/v1/responses');
    expect(server.requests[0]!.body.instructions).toBe('You edit files.');
    const outputs = server.requests[1]!.body.input.filter((i: { type?: string }) => i.type === 'function_call_output');
    expect(outputs.map((o: { output: string }) => o.output)).toEqual(['ok read', 'ok write']);
  });
});

describe('a server that goes silent', () => {
  it('is given up on after streamIdleTimeoutMs, and the reply says it was a timeout as data (issue 43)', async () => {
    // Answers the request with stream headers, then never sends an event.
    const silent = createServer((req, res) => {
      req.resume();
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.flushHeaders();
    });
    await new Promise<void>((ok) => silent.listen(0, '127.0.0.1', ok));
    try {
      const { port } = silent.address() as AddressInfo;
      const model = modelForProvider(
        { name: 'local', type: 'openai-compatible', baseUrl: `http://127.0.0.1:${port}/v1` },
        'fake-model',
        { contextWindow: 32_000, maxTokens: 4_000, cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 } },
      );
      const { message } = await run(model, context(), { maxRetries: 0, streamIdleTimeoutMs: 100 });
      expect(message.stopReason).toBe('error');
      expect(message.errorMessage).toMatch(/sent nothing for 100 ms/);
      expect(message).toMatchObject({ errorKind: 'connection', errorCause: 'timeout' });
    } finally {
      silent.closeAllConnections();
      await new Promise<void>((ok) => silent.close(() => ok()));
    }
  });
});
