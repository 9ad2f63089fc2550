import { describe, expect, it } from 'vitest';
import {
  compactionThreshold,
  effectiveKeepRecentTokens,
  prepareCompaction,
  prepareCompactionOrReason,
  shouldCompact,
} from '../../src/session/prepare-compaction.js';
import { DEFAULT_COMPACTION_SETTINGS, type CompactionSettings } from '../../src/session/defaults.js';
import { SessionStore } from '../../src/session/session-store.js';
import { KEPT_NOTHING } from '../../src/session/types.js';
import { assistant, toolResult, user } from './message-builders.js';

const words = (tokens: number): string => 'abcd'.repeat(tokens);
const settings = (keepRecentTokens: number): CompactionSettings => ({
  enabled: true,
  reserveTokens: 1000,
  keepRecentTokens,
});

function turn(s: SessionStore, t: number, size = 100, tool?: { name: string; path: string }): void {
  s.appendMessage(user(`u${t} ${words(size)}`));
  if (tool) {
    s.appendMessage(assistant(`a${t}`, { toolCalls: [{ id: `c${t}`, name: tool.name, args: { path: tool.path } }] }));
    s.appendMessage(toolResult(`c${t}`, words(size), tool.name));
  }
  s.appendMessage(assistant(`b${t} ${words(size)}`));
}

describe('thresholds', () => {
  it('compacts above contextWindow - reserveTokens, only when enabled', () => {
    expect(compactionThreshold(200_000)).toBe(200_000 - 16_384);
    expect(shouldCompact(183_617, 200_000)).toBe(true);
    expect(shouldCompact(183_616, 200_000)).toBe(false);
    expect(shouldCompact(999_999, 200_000, { ...DEFAULT_COMPACTION_SETTINGS, enabled: false })).toBe(false);
  });

  it('keepRecentTokens is clamped below the threshold so compaction always makes progress', () => {
    const s: CompactionSettings = { enabled: true, reserveTokens: 16_384, keepRecentTokens: 50_000 };
    const keep = effectiveKeepRecentTokens(s, 32_000);
    expect(keep).toBeLessThan(compactionThreshold(32_000, s));
    expect(effectiveKeepRecentTokens(DEFAULT_COMPACTION_SETTINGS, 200_000)).toBe(20_000);

    // A context just over the threshold of a small window still summarizes something.
    const store = SessionStore.inMemory();
    for (let t = 0; t < 40; t++) turn(store, t, 200);
    const prep = prepareCompaction(store.getPath(), s, { contextWindow: 32_000 });
    expect(prep).toBeDefined();
    expect(prep!.messagesToSummarize.length).toBeGreaterThan(0);
  });
});

describe('a kept tail that leaves room for the next turns', () => {
  it('on a small window the tail is a fifth of the window, not a fixed 20k', () => {
    const s: CompactionSettings = { enabled: true, reserveTokens: 16_384, keepRecentTokens: 20_000 };
    expect(effectiveKeepRecentTokens(s, 55_000)).toBe(11_000);
    expect(effectiveKeepRecentTokens(s, 1_000_000)).toBe(20_000);
  });

  /** Six turns, then a last turn whose one read returned `resultTokens` tokens (run stopped right after it). */
  function hugeLastTurn(resultTokens: number): SessionStore {
    const store = SessionStore.inMemory();
    for (let t = 0; t < 6; t++) turn(store, t, 500);
    store.appendMessage(user('u-last'));
    store.appendMessage(assistant('reading', { toolCalls: [{ id: 'big', name: 'read', args: { path: 'big.log' } }] }));
    store.appendMessage(toolResult('big', words(resultTokens), 'read'));
    return store;
  }
  const s20k: CompactionSettings = { enabled: true, reserveTokens: 16_384, keepRecentTokens: 20_000 };

  it('a last turn larger than the tail but within the threshold is kept whole: the reply with its tool result', () => {
    // Threshold 38,616; the tail may hold 19,308; the last turn is ~30,000.
    const store = hugeLastTurn(30_000);
    const prep = prepareCompaction(store.getPath(), s20k, { contextWindow: 55_000 })!;
    const path = store.getPath();
    const reply = path[path.length - 2]!;
    expect(prep.firstKeptEntryId).toBe(reply.id);
    expect(prep.messagesToSummarize.some((m) => m.role === 'toolResult' && m.toolCallId === 'big')).toBe(false);
    // Its request starts the turn: summarized as the split turn's prefix, every earlier turn as history.
    expect(prep.isSplitTurn).toBe(true);
    expect(prep.turnPrefixMessages).toEqual([expect.objectContaining({ role: 'user' })]);
    expect(prep.messagesToSummarize.filter((m) => m.role === 'user')).toHaveLength(6);
  });

  it('a last turn that does not fit beside the system prompt is not kept: the summary alone remains', () => {
    // Alone it would fit (30,000 <= 38,616), but not beside 10,000 tokens of system prompt and tools.
    const prep = prepareCompaction(hugeLastTurn(30_000).getPath(), s20k, {
      contextWindow: 55_000,
      overheadTokens: 10_000,
    })!;
    expect(prep.settings.keepRecentTokens).toBe(0);
    expect(prep.firstKeptEntryId).toBe(KEPT_NOTHING);
    expect(prep.messagesToSummarize.some((m) => m.role === 'toolResult' && m.toolCallId === 'big')).toBe(true);
    // Past the threshold on its own: nothing is kept either.
    expect(prepareCompaction(hugeLastTurn(40_000).getPath(), s20k, { contextWindow: 55_000 })!.firstKeptEntryId).toBe(
      KEPT_NOTHING,
    );
  });

  it('a last turn that is all there is to compact is not kept: the compaction summarizes it', () => {
    // The previous compaction kept the newest reply; then came only a request past the tail budget.
    const store = SessionStore.inMemory();
    for (let t = 0; t < 3; t++) turn(store, t, 500);
    const reply = store.getPath().at(-1)!;
    store.appendCompaction('S1', reply.id, 9_000);
    store.appendMessage(user(`next request ${words(25_000)}`));
    const prep = prepareCompaction(store.getPath(), s20k, { contextWindow: 55_000 })!;
    expect(prep.firstKeptEntryId).toBe(KEPT_NOTHING);
    expect(prep.messagesToSummarize.map((m) => m.role)).toEqual(['assistant', 'user']);
  });

  it('the kept last turn is the newest reply with all its tool results, never a result without its call', () => {
    const store = SessionStore.inMemory();
    for (let t = 0; t < 3; t++) turn(store, t, 500);
    store.appendMessage(user('u-last'));
    store.appendMessage(
      assistant('two reads', {
        toolCalls: [
          { id: 'r1', name: 'read', args: { path: 'a.log' } },
          { id: 'r2', name: 'read', args: { path: 'b.log' } },
        ],
      }),
    );
    store.appendMessage(toolResult('r1', words(12_000), 'read'));
    store.appendMessage(toolResult('r2', words(12_000), 'read'));
    store.appendModelChange('scripted', 'other');
    const prep = prepareCompaction(store.getPath(), s20k, { contextWindow: 55_000 })!;
    const path = store.getPath();
    const at = path.findIndex((e) => e.id === prep.firstKeptEntryId);
    expect(path.slice(at).map((e) => (e.type === 'message' ? e.message.role : e.type))).toEqual([
      'assistant',
      'toolResult',
      'toolResult',
      'model_change',
    ]);
  });

  it('when the newest messages alone pass the tail budget, the smallest tail is kept, never everything', () => {
    const store = SessionStore.inMemory();
    for (let t = 0; t < 6; t++) turn(store, t, 500);
    store.appendMessage(user('u-last'));
    store.appendMessage(assistant('reading', { toolCalls: [{ id: 'mid', name: 'read', args: { path: 'mid.log' } }] }));
    store.appendMessage(toolResult('mid', words(3_000), 'read'));
    const prep = prepareCompaction(store.getPath(), settings(2_000), { contextWindow: 200_000 })!;
    // Kept: the reply with the call and its result; every earlier turn is summarized.
    expect(prep.messagesToSummarize.filter((m) => m.role === 'user')).toHaveLength(6);
    const kept = store.getPath().findIndex((e) => e.id === prep.firstKeptEntryId);
    expect(store.getPath().length - kept).toBe(2);
  });
});

describe('prepareCompaction', () => {
  it('returns undefined right after a compaction (metadata after it does not count)', () => {
    const s = SessionStore.inMemory();
    for (let t = 0; t < 5; t++) turn(s, t);
    const prep = prepareCompaction(s.getPath(), settings(250))!;
    s.appendCompaction('S', prep.firstKeptEntryId, prep.tokensBefore);
    s.appendLabel(prep.firstKeptEntryId, 'x');
    expect(prepareCompactionOrReason(s.getPath(), settings(250))).toEqual({ reason: 'already_compacted' });
  });

  it('reports nothing to compact when everything fits in the kept part', () => {
    const s = SessionStore.inMemory();
    turn(s, 0);
    expect(prepareCompactionOrReason(s.getPath(), settings(100_000))).toEqual({ reason: 'nothing_to_compact' });
  });

  it('passes the previous summary for an incremental update', () => {
    const s = SessionStore.inMemory();
    for (let t = 0; t < 5; t++) turn(s, t);
    const p1 = prepareCompaction(s.getPath(), settings(250))!;
    expect(p1.previousSummary).toBeUndefined();
    s.appendCompaction('FIRST SUMMARY', p1.firstKeptEntryId, p1.tokensBefore);
    for (let t = 5; t < 10; t++) turn(s, t);
    expect(prepareCompaction(s.getPath(), settings(250))!.previousSummary).toBe('FIRST SUMMARY');
  });

  it('the next summarize range starts at the previous first kept entry (no message drops out)', () => {
    const s = SessionStore.inMemory();
    for (let t = 0; t < 5; t++) turn(s, t);
    const p1 = prepareCompaction(s.getPath(), settings(250))!;
    s.appendCompaction('S1', p1.firstKeptEntryId, p1.tokensBefore);
    const keptByFirst = s.buildContext().messages.slice(1);
    expect(keptByFirst.length).toBeGreaterThan(0);
    for (let t = 5; t < 10; t++) turn(s, t);
    const p2 = prepareCompaction(s.getPath(), settings(250))!;
    for (const m of keptByFirst) expect(p2.messagesToSummarize).toContain(m);
  });

  it('file lists accumulate across compactions and read excludes modified', () => {
    const s = SessionStore.inMemory();
    turn(s, 0, 100, { name: 'read', path: 'a.ts' });
    turn(s, 1, 100, { name: 'read', path: 'b.ts' });
    turn(s, 2, 100, { name: 'edit', path: 'b.ts' });
    turn(s, 3, 100);
    turn(s, 4, 100);
    const p1 = prepareCompaction(s.getPath(), settings(250))!;
    expect([...p1.fileOps.read].sort()).toEqual(['a.ts', 'b.ts']);
    s.appendCompaction('S1', p1.firstKeptEntryId, p1.tokensBefore, { readFiles: ['a.ts'], modifiedFiles: ['b.ts'] });
    turn(s, 5, 100, { name: 'write', path: 'c.ts' });
    turn(s, 6, 100, { name: 'read', path: 'c.ts' });
    turn(s, 7, 100);
    turn(s, 8, 100);
    const p2 = prepareCompaction(s.getPath(), settings(250))!;
    expect(p2.fileOps.read.has('a.ts')).toBe(true);
    expect(p2.fileOps.edited.has('b.ts')).toBe(true);
    expect(p2.fileOps.written.has('c.ts')).toBe(true);
  });

  it('file lists of a hook-made compaction are not trusted', () => {
    const s = SessionStore.inMemory();
    for (let t = 0; t < 5; t++) turn(s, t);
    const p1 = prepareCompaction(s.getPath(), settings(250))!;
    s.appendCompaction('S1', p1.firstKeptEntryId, p1.tokensBefore, { readFiles: ['hook.ts'], modifiedFiles: [] }, true);
    for (let t = 5; t < 10; t++) turn(s, t);
    expect(prepareCompaction(s.getPath(), settings(250))!.fileOps.read.has('hook.ts')).toBe(false);
  });

  it('a split turn puts the turn start into the prefix, not into the history', () => {
    const s = SessionStore.inMemory();
    turn(s, 0);
    s.appendMessage(user('long task'));
    for (let i = 0; i < 6; i++) {
      s.appendMessage(assistant('', { toolCalls: [{ id: `x${i}`, name: 'read', args: { path: `f${i}` } }] }));
      s.appendMessage(toolResult(`x${i}`, words(100)));
    }
    s.appendMessage(assistant('finished'));
    const prep = prepareCompaction(s.getPath(), settings(250))!;
    expect(prep.isSplitTurn).toBe(true);
    expect(prep.turnPrefixMessages[0]).toMatchObject({ role: 'user', content: [{ text: 'long task' }] });
    expect(prep.messagesToSummarize.map((m) => m.role)).toEqual(['user', 'assistant']);
  });
});
