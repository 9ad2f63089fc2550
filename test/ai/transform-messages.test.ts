import { describe, expect, it } from 'vitest';
import { normalizeAnthropicToolCallId, transformMessages } from '../../src/ai/transform-messages.js';
import type { AssistantMessage, Message, ToolResultMessage } from '../../src/ai/types.js';
import { emptyUsage } from '../../src/ai/usage.js';

const target = { api: 'anthropic-messages', provider: 'anthropic', id: 'claude-sonnet-4-5' };
const user = (text: string): Message => ({ role: 'user', content: text, timestamp: 1 });
const asst = (content: AssistantMessage['content'], extra: Partial<AssistantMessage> = {}): AssistantMessage => ({
  role: 'assistant',
  content,
  api: target.api,
  provider: target.provider,
  model: target.id,
  usage: emptyUsage(),
  stopReason: 'stop',
  timestamp: 5,
  ...extra,
});
const result = (id: string, text = 'out'): ToolResultMessage => ({
  role: 'toolResult',
  toolCallId: id,
  toolName: 't',
  content: [{ type: 'text', text }],
  isError: false,
  timestamp: 6,
});
const foreign = { api: 'openai-responses', provider: 'openai', model: 'gpt-x' };

describe('transformMessages', () => {
  it('drops errored and aborted assistant replies', () => {
    const out = transformMessages(
      [
        user('a'),
        asst([{ type: 'text', text: 'x' }], { stopReason: 'error' }),
        asst([{ type: 'text', text: 'y' }], { stopReason: 'aborted' }),
        user('b'),
      ],
      target,
    );
    expect(out.map((m) => m.role)).toEqual(['user', 'user']);
  });

  it('adds a "No result provided" error result for each orphan call, before the next user or assistant message and at the end', () => {
    const calls = asst([
      { type: 'toolCall', id: 'c1', name: 'read', arguments: {} },
      { type: 'toolCall', id: 'c2', name: 'bash', arguments: {} },
    ]);
    const out = transformMessages(
      [user('a'), calls, result('c2'), user('b'), asst([{ type: 'toolCall', id: 'c3', name: 'ls', arguments: {} }])],
      target,
    );
    expect(out.map((m) => (m.role === 'toolResult' ? `${m.toolCallId}:${m.isError}` : m.role))).toEqual([
      'user',
      'assistant',
      'c2:false',
      'c1:true',
      'user',
      'assistant',
      'c3:true',
    ]);
    const synthetic = out[3] as ToolResultMessage;
    expect(synthetic).toMatchObject({ toolName: 'read', content: [{ type: 'text', text: 'No result provided' }] });
  });

  it('drops results whose call is not in the preceding reply (e.g. of a dropped errored reply)', () => {
    const out = transformMessages(
      [
        user('a'),
        asst([{ type: 'toolCall', id: 'c1', name: 'x', arguments: {} }], { stopReason: 'error' }),
        result('c1'),
        user('b'),
      ],
      target,
    );
    expect(out.map((m) => m.role)).toEqual(['user', 'user']);
  });

  it('keeps thinking for the same model and turns foreign thinking into text (blank and redacted dropped)', () => {
    const own = asst([
      { type: 'thinking', thinking: '', thinkingSignature: 'sig' },
      { type: 'thinking', thinking: 'secret', thinkingSignature: 'enc', redacted: true },
      { type: 'thinking', thinking: 'unsigned' },
      { type: 'thinking', thinking: '  ' },
    ]);
    const other = asst(
      [
        { type: 'thinking', thinking: 'their idea', thinkingSignature: 'x' },
        { type: 'thinking', thinking: 'r', thinkingSignature: 'enc', redacted: true },
        { type: 'thinking', thinking: ' ' },
        { type: 'text', text: 'answer' },
      ],
      foreign,
    );
    const [a, b] = transformMessages([own, other], target) as AssistantMessage[];
    expect(a!.content).toEqual(own.content.slice(0, 3));
    expect(b!.content).toEqual([
      { type: 'text', text: 'their idea' },
      { type: 'text', text: 'answer' },
    ]);
  });

  it('normalises foreign tool-call ids and remaps their results, leaving inputs untouched', () => {
    const other = asst([{ type: 'toolCall', id: 'fc_1|item/2', name: 'read', arguments: { p: 1 } }], {
      ...foreign,
      stopReason: 'toolUse',
    });
    const input: Message[] = [user('a'), other, result('fc_1|item/2')];
    const out = transformMessages(input, target, normalizeAnthropicToolCallId);
    expect((out[1] as AssistantMessage).content[0]).toMatchObject({ id: 'fc_1_item_2' });
    expect((out[2] as ToolResultMessage).toolCallId).toBe('fc_1_item_2');
    expect((other.content[0] as { id: string }).id).toBe('fc_1|item/2');
    expect(out[0]).toBe(input[0]);
  });

  it('normalizeAnthropicToolCallId keeps [A-Za-z0-9_-] and at most 64 characters', () => {
    expect(normalizeAnthropicToolCallId('a.b:c d')).toBe('a_b_c_d');
    expect(normalizeAnthropicToolCallId('x'.repeat(100))).toHaveLength(64);
  });
});
