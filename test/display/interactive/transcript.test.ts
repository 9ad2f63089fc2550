import { describe, expect, it } from 'vitest';
import type { AgentMessage } from '../../../src/agent/types.js';
import type { AssistantMessage } from '../../../src/ai/types.js';
import {
  applyEvent,
  emptyTranscript,
  transcriptFromMessages,
  type Transcript,
} from '../../../src/display/interactive/transcript.js';
import {
  resultSummary,
  toolCallText,
  expandedResult,
  EXPANDED_RESULT_LINES,
} from '../../../src/display/interactive/tool-text.js';

const usage = {
  input: 1,
  output: 1,
  cacheRead: 0,
  cacheWrite: 0,
  totalTokens: 2,
  cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 },
};
const reply = (
  content: AssistantMessage['content'],
  stopReason: AssistantMessage['stopReason'] = 'stop',
  errorMessage?: string,
): AssistantMessage => ({
  role: 'assistant',
  content,
  api: 'scripted',
  provider: 'scripted',
  model: 'scripted',
  usage,
  stopReason,
  ...(errorMessage ? { errorMessage } : {}),
  timestamp: 0,
});

describe('transcript', () => {
  it('a streamed reply grows in one item, then its tool call gets a running state and a result', () => {
    let t: Transcript = emptyTranscript();
    t = applyEvent(t, {
      type: 'message_start',
      message: { role: 'user', content: [{ type: 'text', text: 'list files' }], timestamp: 0 },
    });
    t = applyEvent(t, { type: 'message_start', message: reply([]) });
    const partial = reply([{ type: 'text', text: 'Listing' }]);
    t = applyEvent(t, {
      type: 'message_update',
      message: partial,
      assistantMessageEvent: { type: 'text_delta', contentIndex: 0, delta: 'Listing', partial },
    });
    expect(t.items).toHaveLength(2);
    expect(t.items[1]).toMatchObject({ kind: 'assistant', text: 'Listing', streaming: true });
    const done = reply(
      [
        { type: 'text', text: 'Listing files.' },
        { type: 'toolCall', id: 'c1', name: 'bash', arguments: { command: 'ls' } },
      ],
      'toolUse',
    );
    t = applyEvent(t, { type: 'message_end', message: done });
    t = applyEvent(t, { type: 'tool_execution_start', toolCallId: 'c1', toolName: 'bash', args: { command: 'ls' } });
    expect(t.items.map((i) => i.kind)).toEqual(['user', 'assistant', 'tool']);
    expect(t.items[1]).toMatchObject({ text: 'Listing files.', streaming: false });
    expect(t.items[2]).toMatchObject({ state: 'running', name: 'bash' });
    t = applyEvent(t, {
      type: 'tool_execution_end',
      toolCallId: 'c1',
      toolName: 'bash',
      result: { content: [{ type: 'text', text: 'a\nb\n' }] },
      isError: false,
    });
    expect(t.items[2]).toMatchObject({ state: 'done', result: 'a\nb\n' });
    // Keys stay stable while an item is updated (React keeps its element).
    expect(new Set(t.items.map((i) => i.key)).size).toBe(3);
  });

  it('a reopened session shows prompts, replies, tool calls with results, summaries', () => {
    const messages: AgentMessage[] = [
      { role: 'compactionSummary', summary: '## Goal\nship it', tokensBefore: 12345, timestamp: 0 },
      { role: 'user', content: 'read it', timestamp: 0 },
      reply(
        [
          { type: 'thinking', thinking: 'need the file' },
          { type: 'toolCall', id: 'r1', name: 'read', arguments: { path: 'a.txt' } },
        ],
        'toolUse',
      ),
      {
        role: 'toolResult',
        toolCallId: 'r1',
        toolName: 'read',
        content: [{ type: 'text', text: 'no such file' }],
        isError: true,
        timestamp: 0,
      },
      reply([], 'error', '500 server error'),
    ];
    const t = transcriptFromMessages(messages);
    expect(t.items.map((i) => i.kind)).toEqual(['summary', 'user', 'assistant', 'tool', 'assistant']);
    expect(t.items[0]).toMatchObject({ label: 'compacted (12,345 tokens before)' });
    expect(t.items[3]).toMatchObject({ state: 'error', result: 'no such file' });
    expect(t.items[4]).toMatchObject({ error: '500 server error' });
  });

  it('tool calls read as one line; results collapse to a count and their first line', () => {
    expect(toolCallText('bash', { command: 'ls -la\n  | head' })).toBe('bash $ ls -la | head');
    expect(toolCallText('read', { path: 'src/a.ts', offset: 10 })).toBe('read src/a.ts offset=10');
    expect(toolCallText('grep', { pattern: 'x', path: '.' })).toBe('grep pattern="x", path="."');
    expect(resultSummary('one\ntwo\nthree\n')).toBe('3 lines: one');
    expect(resultSummary('')).toBe('(no output)');
    const long = Array.from({ length: 30 }, (_, i) => `l${i}`).join('\n');
    expect(expandedResult(long)).toHaveLength(EXPANDED_RESULT_LINES + 1);
    expect(expandedResult(long).at(-1)).toBe('… 10 more lines');
  });
});
