import { describe, expect, it } from 'vitest';
import { buildAnthropicRequest, cacheBreakpointMessages, convertMessages } from '../../src/ai/anthropic-request.js';
import { getModel } from '../../src/ai/models.js';
import { joinSystemPrompt } from '../../src/ai/system-prompt-parts.js';
import { emptyUsage } from '../../src/ai/usage.js';
import type { Message, Model } from '../../src/ai/types.js';

const sonnet = getModel('claude-sonnet-4-5')!;

describe('Anthropic request building', () => {
  it('skips blank user messages and text blocks, drops images for text-only models', () => {
    const textOnly: Model = { ...sonnet, input: ['text'] };
    const msgs: Message[] = [
      { role: 'user', content: '   ', timestamp: 1 },
      {
        role: 'user',
        content: [
          { type: 'text', text: '' },
          { type: 'image', data: 'AA', mimeType: 'image/png' },
        ],
        timestamp: 1,
      },
      {
        role: 'user',
        content: [
          { type: 'text', text: 'keep' },
          { type: 'image', data: 'AA', mimeType: 'image/png' },
        ],
        timestamp: 1,
      },
    ];
    expect(convertMessages(msgs, textOnly)).toEqual([{ role: 'user', content: [{ type: 'text', text: 'keep' }] }]);
    // Consecutive user messages are one user turn (roles must alternate).
    const image = { type: 'image', source: { type: 'base64', media_type: 'image/png', data: 'AA' } };
    expect(convertMessages(msgs, sonnet)).toEqual([
      { role: 'user', content: [image, { type: 'text', text: 'keep' }, image] },
    ]);
  });

  it('sends image tool results as blocks, with a leading text when there is no text', () => {
    const out = convertMessages(
      [
        {
          role: 'toolResult',
          toolCallId: 't1',
          toolName: 'read',
          content: [{ type: 'image', data: 'BB', mimeType: 'image/jpeg' }],
          isError: false,
          timestamp: 1,
        },
      ],
      sonnet,
    );
    expect(out[0]!.content).toEqual([
      {
        type: 'tool_result',
        tool_use_id: 't1',
        is_error: false,
        content: [
          { type: 'text', text: '(see attached image)' },
          { type: 'image', source: { type: 'base64', media_type: 'image/jpeg', data: 'BB' } },
        ],
      },
    ]);
  });

  it('sets max_tokens to a third of the model limit, temperature only without thinking, and the beta headers', () => {
    const { params, headers } = buildAnthropicRequest(
      sonnet,
      { messages: [{ role: 'user', content: 'hi', timestamp: 1 }] },
      { temperature: 0.2, headers: { 'x-extra': '1' } },
    );
    expect(params.max_tokens).toBe(Math.floor(64_000 / 3));
    expect(params.temperature).toBe(0.2);
    expect(params.system).toBeUndefined();
    expect(headers['anthropic-beta']).toBe('fine-grained-tool-streaming-2025-05-14,interleaved-thinking-2025-05-14');
    expect(headers['x-extra']).toBe('1');
  });

  it('uses a thinking budget on budget models and adaptive effort on 4.6 models', () => {
    const budget = buildAnthropicRequest(sonnet, { messages: [] }, { reasoning: 'medium', temperature: 1 });
    expect(budget.params.thinking).toEqual({ type: 'enabled', budget_tokens: 8192 });
    expect(budget.params.max_tokens).toBe(32_000 + 8192);
    expect(budget.params.temperature).toBeUndefined();
    const adaptive = buildAnthropicRequest(getModel('claude-opus-4-6')!, { messages: [] }, { reasoning: 'xhigh' });
    expect(adaptive.params.thinking).toEqual({ type: 'adaptive' });
    expect(adaptive.params.output_config).toEqual({ effort: 'max' });
    expect(adaptive.headers['anthropic-beta']).toBe('fine-grained-tool-streaming-2025-05-14');
    const off = buildAnthropicRequest({ ...sonnet, reasoning: false }, { messages: [] }, { reasoning: 'high' });
    expect(off.params.thinking).toBeUndefined();
  });

  it('copies only type, properties and required of a tool schema', () => {
    const { params } = buildAnthropicRequest(sonnet, {
      messages: [],
      tools: [
        {
          name: 'read',
          description: 'Read',
          parameters: {
            type: 'object',
            properties: { p: { type: 'string' } },
            required: ['p'],
            additionalProperties: false,
            $schema: 'x',
          },
        },
      ],
    });
    expect(params.tools).toEqual([
      {
        name: 'read',
        description: 'Read',
        input_schema: { type: 'object', properties: { p: { type: 'string' } }, required: ['p'] },
      },
    ]);
  });

  it('asks for the 1h cache TTL only on api.anthropic.com with long retention', () => {
    const ctx = { systemPrompt: 's', messages: [{ role: 'user' as const, content: 'q', timestamp: 1 }] };
    const direct = buildAnthropicRequest({ ...sonnet, baseUrl: 'https://api.anthropic.com' }, ctx, {
      cacheRetention: 'long',
    });
    expect(direct.params.system).toEqual([
      { type: 'text', text: 's', cache_control: { type: 'ephemeral', ttl: '1h' } },
    ]);
    const proxy = buildAnthropicRequest({ ...sonnet, baseUrl: 'http://127.0.0.1:9' }, ctx, { cacheRetention: 'long' });
    expect(proxy.params.system).toEqual([{ type: 'text', text: 's', cache_control: { type: 'ephemeral' } }]);
  });

  it('sends a marked system prompt as two blocks: the shared part with the breakpoint, then the per-session part', () => {
    const systemPrompt = joinSystemPrompt('You are a worker.', 'Current working directory: /repos/a');
    const { params } = buildAnthropicRequest(sonnet, {
      systemPrompt,
      messages: [{ role: 'user', content: 'q', timestamp: 1 }],
    });
    expect(params.system).toEqual([
      { type: 'text', text: 'You are a worker.', cache_control: { type: 'ephemeral' } },
      { type: 'text', text: 'Current working directory: /repos/a' },
    ]);
    // Without caching: one plain block, no marker.
    const plain = buildAnthropicRequest(sonnet, { systemPrompt, messages: [] }, { cacheRetention: 'none' });
    expect(plain.params.system).toEqual([
      { type: 'text', text: 'You are a worker.\n\nCurrent working directory: /repos/a' },
    ]);
  });

  it("marks the previous request's tail and this one's: a parallel tool batch, a summary instruction after the final answer", () => {
    const u = (text: string, timestamp = 1): Message => ({ role: 'user', content: text, timestamp });
    const a = (calls: string[]): Message => ({
      role: 'assistant',
      content: calls.length
        ? calls.map((id) => ({ type: 'toolCall' as const, id, name: 'read', arguments: {} }))
        : [{ type: 'text', text: 'done' }],
      api: 'anthropic-messages',
      provider: 'anthropic',
      model: 'm',
      usage: emptyUsage(),
      stopReason: calls.length ? 'toolUse' : 'stop',
      timestamp: 2,
    });
    const r = (id: string): Message => ({
      role: 'toolResult',
      toolCallId: id,
      toolName: 'read',
      content: [{ type: 'text', text: id }],
      isError: false,
      timestamp: 3,
    });
    const turn = [u('go'), a(['t1']), r('t1'), a(['t2', 't3']), r('t2'), r('t3')];
    expect(cacheBreakpointMessages(turn)).toEqual([2, 5]);
    const summary = [...turn, a([]), u('Summarize the conversation above.')];
    expect(cacheBreakpointMessages(summary)).toEqual([5, 7]);
    expect(cacheBreakpointMessages([u('only')])).toEqual([0]);
    expect(cacheBreakpointMessages([u('q'), a([])])).toEqual([]);
    const { params } = buildAnthropicRequest(sonnet, { messages: summary });
    const marked = params.messages.flatMap((m) =>
      typeof m.content === 'string' ? [] : m.content.filter((b) => 'cache_control' in b && b.cache_control),
    );
    expect(marked).toEqual([
      expect.objectContaining({ type: 'tool_result', tool_use_id: 't3' }),
      expect.objectContaining({ type: 'text', text: 'Summarize the conversation above.' }),
    ]);
  });

  it('sends tool_choice only when asked', () => {
    const tools = [{ name: 'read', description: 'Read', parameters: { type: 'object' as const } }];
    expect(buildAnthropicRequest(sonnet, { messages: [], tools }).params.tool_choice).toBeUndefined();
    expect(buildAnthropicRequest(sonnet, { messages: [], tools }, { toolChoice: 'none' }).params.tool_choice).toEqual({
      type: 'none',
    });
  });

  it('removes unpaired surrogates from every text', () => {
    const { params } = buildAnthropicRequest(sonnet, {
      systemPrompt: 'sys\uD800',
      messages: [{ role: 'user', content: 'bad \uDC00text', timestamp: 1 }],
    });
    expect(JSON.stringify(params)).not.toMatch(/\\ud[89a-f]/i);
    expect(params.messages[0]!.content).toEqual([
      { type: 'text', text: 'bad text', cache_control: { type: 'ephemeral' } },
    ]);
  });
});
