import { describe, expect, it } from 'vitest';
import type { AssistantMessage } from '../../src/ai/types.js';
import {
  calculateContextTokens,
  estimateContextTokens,
  estimateMessageTokens,
  estimateTextTokens,
} from '../../src/ai/token-estimate.js';
import { emptyUsage } from '../../src/ai/usage.js';

function reply(totalTokens: number, stopReason: AssistantMessage['stopReason'] = 'stop'): AssistantMessage {
  const usage = emptyUsage();
  usage.input = totalTokens;
  usage.totalTokens = totalTokens;
  return {
    role: 'assistant',
    content: [{ type: 'text', text: 'abcd' }],
    api: 'x',
    provider: 'p',
    model: 'm',
    usage,
    stopReason,
    timestamp: 0,
  };
}

describe('estimateTextTokens', () => {
  it('counts ASCII at 4 characters per token, rounding up', () => {
    expect(estimateTextTokens('')).toBe(0);
    expect(estimateTextTokens('abcd')).toBe(1);
    expect(estimateTextTokens('abcde')).toBe(2);
    expect(estimateTextTokens('a'.repeat(4000))).toBe(1000);
  });

  it('counts CJK and other wide characters at least one token each', () => {
    const chinese = '这是一个关于上下文压缩的测试句子';
    expect(estimateTextTokens(chinese)).toBeGreaterThanOrEqual(chinese.length);
    expect(estimateTextTokens('日本語のテキスト')).toBeGreaterThanOrEqual(8);
    expect(estimateTextTokens('한국어 텍스트')).toBeGreaterThanOrEqual(6);
    expect(estimateTextTokens('😀😀')).toBeGreaterThanOrEqual(2);
  });

  it('counts other non-ASCII letters heavier than ASCII', () => {
    expect(estimateTextTokens('привет мир')).toBeGreaterThan(estimateTextTokens('hello worl'));
  });
});

describe('estimateMessageTokens', () => {
  it('covers text, thinking, tool calls, images and internal roles', () => {
    expect(estimateMessageTokens({ role: 'user', content: 'abcdabcd', timestamp: 0 } as never)).toBe(2);
    const a: AssistantMessage = {
      ...reply(0),
      content: [
        { type: 'thinking', thinking: 'abcd' },
        { type: 'text', text: 'abcd' },
        { type: 'toolCall', id: '1', name: 'read', arguments: { path: 'a' } },
      ],
    };
    expect(estimateMessageTokens(a)).toBe(Math.ceil((4 + 4 + 4 + JSON.stringify({ path: 'a' }).length) / 4));
    const image = {
      role: 'toolResult',
      toolCallId: '1',
      toolName: 'read',
      content: [{ type: 'image', data: 'x', mimeType: 'image/png' }],
      isError: false,
      timestamp: 0,
    };
    expect(estimateMessageTokens(image)).toBe(1200);
    expect(
      estimateMessageTokens({ role: 'compactionSummary', summary: 'abcdabcd', tokensBefore: 1, timestamp: 0 } as never),
    ).toBe(2);
    expect(
      estimateMessageTokens({ role: 'bashExecution', command: 'ls', output: 'ab', excludeFromContext: true } as never),
    ).toBe(0);
    expect(estimateMessageTokens({ role: 'bashExecution', command: 'ls', output: 'ab' } as never)).toBe(1);
    expect(estimateMessageTokens({ role: 'somethingNew', payload: 'x'.repeat(100) } as never)).toBeGreaterThan(25);
  });
});

describe('estimateContextTokens', () => {
  it('uses the last successful reply usage plus estimates of what follows', () => {
    const msgs = [
      reply(100),
      { role: 'user', content: 'abcd'.repeat(10), timestamp: 0 },
      reply(999, 'error'),
      reply(0, 'aborted'),
    ];
    const r = estimateContextTokens(msgs);
    expect(r.lastUsageIndex).toBe(0);
    expect(r.usageTokens).toBe(100);
    expect(r.trailingTokens).toBe(10 + 1 + 1);
    expect(r.tokens).toBe(112);
  });

  it('sums estimates when no reply reported usage', () => {
    expect(estimateContextTokens([{ role: 'user', content: 'abcd', timestamp: 0 } as never, reply(0)])).toMatchObject({
      tokens: 2,
      lastUsageIndex: -1,
    });
  });

  it('falls back from totalTokens to the sum of the parts', () => {
    const u = emptyUsage();
    u.input = 5;
    u.output = 2;
    u.cacheRead = 3;
    expect(calculateContextTokens(u)).toBe(10);
  });
});
