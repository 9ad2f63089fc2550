import { describe, expect, it } from 'vitest';
import { findCutPoint, isValidCutPoint } from '../../src/session/find-cut-point.js';
import { SessionStore } from '../../src/session/session-store.js';
import type { SessionEntry } from '../../src/session/types.js';
import { assistant, toolResult, user } from './message-builders.js';

const words = (tokens: number): string => 'abcd'.repeat(tokens);

/** user → assistant(tool call) → tool result → assistant, `turns` times, each message ~`size` tokens. */
function turns(count: number, size: number): SessionEntry[] {
  const s = SessionStore.inMemory();
  for (let t = 0; t < count; t++) {
    s.appendMessage(user(words(size)));
    s.appendMessage(
      assistant(words(size), {
        toolCalls: [
          { id: `c${t}a`, name: 'read', args: { path: `f${t}` } },
          { id: `c${t}b`, name: 'read', args: { path: `g${t}` } },
        ],
      }),
    );
    s.appendMessage(toolResult(`c${t}a`, words(size)));
    s.appendMessage(toolResult(`c${t}b`, words(size)));
    s.appendMessage(assistant(words(size)));
  }
  return s.getPath();
}

describe('findCutPoint', () => {
  it('never lands on a tool result, and an assistant with tool calls keeps all its results', () => {
    const entries = turns(6, 100);
    for (let keep = 50; keep <= 3000; keep += 37) {
      const cut = findCutPoint(entries, 0, entries.length, keep);
      const at = entries[cut.firstKeptIndex]!;
      expect(at.type === 'message' && at.message.role === 'toolResult').toBe(false);
      // Every kept tool result's call is kept too.
      const keptCalls = new Set<string>();
      for (const e of entries.slice(cut.firstKeptIndex)) {
        if (e.type !== 'message') continue;
        if (e.message.role === 'assistant')
          for (const b of e.message.content) if (b.type === 'toolCall') keptCalls.add(b.id);
        if (e.message.role === 'toolResult') expect(keptCalls.has(e.message.toolCallId)).toBe(true);
      }
    }
  });

  it('cuts at the first valid point after the keep budget is reached (walking back from the newest)', () => {
    const entries = turns(4, 100);
    // The last turn is 500 tokens; 450 is reached at its second tool result, the next valid cut is the final assistant.
    const cut = findCutPoint(entries, 0, entries.length, 150);
    expect(cut.firstKeptIndex).toBe(entries.length - 1);
    expect(cut.isSplitTurn).toBe(true);
    expect(cut.turnStartIndex).toBe(entries.length - 5);
  });

  it('a cut at a user message is not a split turn', () => {
    const entries = turns(4, 100);
    const cut = findCutPoint(entries, 0, entries.length, 500);
    expect(cut).toEqual({ firstKeptIndex: 15, turnStartIndex: -1, isSplitTurn: false });
  });

  it('when everything fits, the cut is the first valid cut point (nothing summarized)', () => {
    const entries = turns(2, 10);
    expect(findCutPoint(entries, 0, entries.length, 1_000_000).firstKeptIndex).toBe(0);
  });

  it('with no valid cut point the cut is the start of the range', () => {
    const s = SessionStore.inMemory();
    s.appendModelChange('p', 'm');
    s.appendMessage(toolResult('x', 'orphan result'));
    s.appendCustom('t');
    expect(findCutPoint(s.getPath(), 1, 3, 1)).toEqual({ firstKeptIndex: 1, turnStartIndex: -1, isSplitTurn: false });
  });

  it('moves back over metadata right before the cut, and a model change before a user message is not a split', () => {
    const s = SessionStore.inMemory();
    s.appendMessage(user(words(100)));
    s.appendMessage(assistant(words(100)));
    s.appendModelChange('p', 'm2');
    s.appendThinkingLevelChange('high');
    s.appendMessage(user(words(100)));
    s.appendMessage(assistant(words(100)));
    const entries = s.getPath();
    const cut = findCutPoint(entries, 0, entries.length, 150);
    expect(cut).toEqual({ firstKeptIndex: 2, turnStartIndex: -1, isSplitTurn: false });
  });

  it('valid cut points are user, assistant, summaries and custom messages only', () => {
    const s = SessionStore.inMemory();
    s.appendMessage(user('u'));
    s.appendMessage(assistant('a'));
    s.appendMessage(toolResult('t', 'r'));
    s.appendCustomMessage('c', 'x');
    s.appendBranchSummary('root', 'b');
    s.appendModelChange('p', 'm');
    s.appendCompaction('s', 'x', 1);
    expect(s.getPath().map(isValidCutPoint)).toEqual([true, true, false, true, true, false, false]);
  });
});
