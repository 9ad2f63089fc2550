import { copyFileSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { AgentMessage } from '../../src/agent/types.js';
import { buildContextFromPath, buildSessionContext } from '../../src/session/build-context.js';
import { SessionStore } from '../../src/session/session-store.js';
import type { SessionEntry } from '../../src/session/types.js';
import { seededInt } from '../helpers/seeded-random.js';
import { assistant, toolResult, user } from './message-builders.js';

const ts = '2025-01-01T00:00:00.000Z';
let n = 0;
const id = (): string => (++n).toString(16).padStart(8, '0');

/** A linear chain of entries from message bodies and raw entry fields. */
function chain(items: (AgentMessage | Record<string, unknown>)[]): SessionEntry[] {
  const out: SessionEntry[] = [];
  let parent: string | null = null;
  for (const item of items) {
    const e = ('role' in item ? { type: 'message', message: item } : item) as Record<string, unknown>;
    const entry = { id: (e.id as string | undefined) ?? id(), parentId: parent, timestamp: ts, ...e } as SessionEntry;
    out.push(entry);
    parent = entry.id;
  }
  return out;
}

const texts = (msgs: AgentMessage[]): string[] =>
  msgs.map((m) => {
    if (m.role === 'user' || m.role === 'assistant' || m.role === 'toolResult') {
      const c = m.content;
      return typeof c === 'string' ? c : c.map((b) => ('text' in b ? b.text : b.type)).join('');
    }
    if (m.role === 'compactionSummary' || m.role === 'branchSummary') return `[${m.role}] ${m.summary}`;
    if (m.role === 'custom') return `[custom] ${String(m.content)}`;
    return m.role;
  });

describe('buildSessionContext', () => {
  it('without compaction: every message in path order, state entries set model and thinking', () => {
    const entries = chain([
      { type: 'model_change', provider: 'p', modelId: 'm1' },
      { type: 'thinking_level_change', thinkingLevel: 'high' },
      user('u1'),
      assistant('a1', { provider: 'p', model: 'm2' }),
      { type: 'label', targetId: 'x', label: 'l' },
      { type: 'custom', customType: 'state', data: 1 },
      { type: 'session_info', name: 'n' },
      user('u2'),
    ]);
    const ctx = buildSessionContext(entries, entries[entries.length - 1]!.id);
    expect(texts(ctx.messages)).toEqual(['u1', 'a1', 'u2']);
    expect(ctx.model).toEqual({ provider: 'p', modelId: 'm2' });
    expect(ctx.thinkingLevel).toBe('high');
  });

  it('a single compaction puts its summary first, then the kept entries, then what follows', () => {
    const entries = chain([
      user('u1'),
      assistant('a1'),
      { id: 'keep0001', type: 'message', message: user('u2') },
      assistant('a2'),
      { type: 'compaction', summary: 'S1', firstKeptEntryId: 'keep0001', tokensBefore: 100 },
      user('u3'),
    ]);
    const ctx = buildSessionContext(entries);
    expect(texts(ctx.messages)).toEqual(['[compactionSummary] S1', 'u2', 'a2', 'u3']);
  });

  it('with several compactions only the latest counts', () => {
    const entries = chain([
      { id: 'k1000000', type: 'message', message: user('u1') },
      assistant('a1'),
      { type: 'compaction', summary: 'S1', firstKeptEntryId: 'k1000000', tokensBefore: 1 },
      { id: 'k2000000', type: 'message', message: user('u2') },
      assistant('a2'),
      { type: 'compaction', summary: 'S2', firstKeptEntryId: 'k2000000', tokensBefore: 1 },
      user('u3'),
    ]);
    expect(texts(buildSessionContext(entries).messages)).toEqual(['[compactionSummary] S2', 'u2', 'a2', 'u3']);
  });

  it('a compaction keeping from the first entry keeps everything', () => {
    const entries = chain([
      { id: 'first000', type: 'message', message: user('u1') },
      assistant('a1'),
      { type: 'compaction', summary: 'S', firstKeptEntryId: 'first000', tokensBefore: 1 },
    ]);
    expect(texts(buildSessionContext(entries).messages)).toEqual(['[compactionSummary] S', 'u1', 'a1']);
  });

  it('follows the leaf path across branches and includes branch summaries', () => {
    const base = chain([user('u1'), assistant('a1')]);
    const [b1, b2] = [
      chain([user('left')]),
      chain([{ type: 'branch_summary', fromId: 'x', summary: 'went left' }, user('right')]),
    ];
    b1[0] = { ...b1[0]!, parentId: base[1]!.id };
    b2[0] = { ...b2[0]!, parentId: base[1]!.id };
    const all = [...base, ...b1, ...b2];
    expect(texts(buildSessionContext(all, b1[0]!.id).messages)).toEqual(['u1', 'a1', 'left']);
    expect(texts(buildSessionContext(all, b2[1]!.id).messages)).toEqual([
      'u1',
      'a1',
      '[branchSummary] went left',
      'right',
    ]);
  });

  it('null leaf gives an empty context; an unknown leaf falls back to the last entry', () => {
    const entries = chain([user('u1'), assistant('a1')]);
    expect(buildSessionContext(entries, null)).toEqual({ messages: [], model: null, thinkingLevel: 'off' });
    expect(texts(buildSessionContext(entries, 'unknown!').messages)).toEqual(['u1', 'a1']);
  });

  it('tolerates orphans: the path starts at the entry whose parent is missing', () => {
    const entries = chain([user('u1'), assistant('a1')]);
    entries[0] = { ...entries[0]!, parentId: 'missing0' };
    expect(texts(buildSessionContext(entries).messages)).toEqual(['u1', 'a1']);
    const s = SessionStore.inMemory();
    expect(s.buildContext().messages).toEqual([]);
  });

  it('compaction job entries never enter context', () => {
    const entries = chain([
      user('u1'),
      {
        type: 'compaction_job',
        jobId: 'j',
        stage: 'cut_point',
        firstKeptEntryId: 'x',
        tokensBefore: 1,
        isSplitTurn: false,
        summarizeCount: 1,
      },
      assistant('a1'),
    ]);
    expect(texts(buildSessionContext(entries).messages)).toEqual(['u1', 'a1']);
  });
});

describe('incremental context cache', () => {
  // Random trees with compactions, summaries and rewinds: the store's cached context must equal
  // a full rebuild from the path after every operation.
  it('agrees with a full rebuild after every append and leaf move', () => {
    const rand = seededInt(42);
    const s = SessionStore.inMemory();
    for (let step = 0; step < 600; step++) {
      const r = rand(20);
      const ids = s.entries.map((e) => e.id);
      if (r < 3 && ids.length > 0) s.moveLeaf(ids[rand(ids.length)]!);
      else if (r === 3) s.moveLeaf(null);
      else if (r === 4 && s.currentPath().length > 2) {
        const path = s.currentPath();
        s.appendCompaction(`S${step}`, path[rand(path.length)]!.id, step);
      } else if (r === 5) s.appendBranchSummary('root', `B${step}`);
      else if (r === 6) s.appendModelChange('p', `m${step}`);
      else if (r === 7) s.appendThinkingLevelChange(step % 2 ? 'low' : 'high');
      else if (r === 8) s.appendCustomMessage('c', `C${step}`);
      else if (r === 9) s.appendCustom('state', step);
      else if (r < 13) s.appendMessage(assistant(`a${step}`, { model: `am${step}` }));
      else if (r < 15) s.appendMessage(toolResult(`t${step}`, `r${step}`));
      else s.appendMessage(user(`u${step}`));
      expect(s.buildContext()).toEqual(buildContextFromPath(s.getPath()));
      // The path itself, against a walk of parent links over the flat entry list.
      expect(s.currentPath().map((e) => e.id)).toEqual(walkPath(s.entries, s.leafId));
    }
  });

  it('an opened session keeps agreeing after deep rewinds and appends past the room kept at open', () => {
    const dir = mkdtempSync(join(tmpdir(), 'ctx-cache-'));
    try {
      const file = join(dir, 's.jsonl');
      const first = SessionStore.create(file);
      for (let i = 0; i < 200; i++) first.appendMessage(i % 2 ? assistant(`a${i}`) : user(`u${i}`));
      first.appendCompaction('S', first.currentPath()[150]!.id, 1);
      for (let i = 0; i < 20; i++) first.appendMessage(user(`v${i}`));
      first.close();

      const s = SessionStore.open(file);
      expect(s.warnings).toEqual([]);
      const rand = seededInt(7);
      for (let step = 0; step < 400; step++) {
        const ids = s.entries.map((e) => e.id);
        const r = rand(10);
        // Rewinds to the first half on purpose: they cut the path deep, behind the compaction.
        if (r === 0) s.moveLeaf(ids[rand(Math.ceil(ids.length / 2))]!);
        else if (r === 1) s.appendCustomMessage('c', `C${step}`);
        else s.appendMessage(r < 5 ? assistant(`a${step}`) : user(`u${step}`));
        const path = s.currentPath();
        expect(path.map((e) => e.id)).toEqual(walkPath(s.entries, s.leafId));
        expect(s.buildContext()).toEqual(buildContextFromPath(path));
      }
      const expected = s.buildContext();
      s.close();
      const reopened = SessionStore.open(file);
      expect(reopened.buildContext()).toEqual(expected);
      reopened.close();
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('the first context after opening (an array prepared at open)', () => {
  it('is exact after a rewind and appends, belongs to the caller, and later contexts are copies', () => {
    const dir = mkdtempSync(join(tmpdir(), 'ctx-first-'));
    try {
      const file = join(dir, 's.jsonl');
      const first = SessionStore.create(file);
      for (let i = 0; i < 60; i++) first.appendMessage(i % 2 ? assistant(`a${i}`) : user(`u${i}`));
      first.close();
      for (const [rewindTo, appended] of [
        [20, 3], // shorter than the prepared array
        [59, 10], // longer: the prepared array grows with the path
      ] as const) {
        const copy = join(dir, `copy-${rewindTo}.jsonl`);
        copyFileSync(file, copy);
        const s = SessionStore.open(copy);
        s.moveLeaf(s.currentPath()[rewindTo]!.id);
        for (let i = 0; i < appended; i++) s.appendMessage(user(`x${i}`));
        const ctx = s.buildContext();
        expect(ctx).toEqual(buildContextFromPath(s.getPath()));
        expect(ctx.messages).toHaveLength(rewindTo + 1 + appended);
        const snapshot = [...ctx.messages];
        // The caller owns it: its changes never reach the store, and the store's never reach it.
        ctx.messages.push(user('caller'));
        const changed = user('changed by the caller');
        ctx.messages[0] = changed;
        s.appendMessage(assistant('after'));
        s.moveLeaf(s.currentPath()[5]!.id);
        s.appendMessage(user('y'));
        const next = s.buildContext();
        expect(next).toEqual(buildContextFromPath(s.getPath()));
        expect(next.messages).not.toBe(ctx.messages);
        expect(ctx.messages.slice(0, -1)).toEqual([changed, ...snapshot.slice(1)]);
        s.close();
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

/** Root-to-leaf ids by parent links (the definition the tree's path must match). */
function walkPath(entries: readonly SessionEntry[], leafId: string | null): string[] {
  const byId = new Map(entries.map((e) => [e.id, e]));
  const ids: string[] = [];
  for (
    let e = leafId === null ? undefined : byId.get(leafId);
    e;
    e = e.parentId === null ? undefined : byId.get(e.parentId)
  )
    ids.push(e.id);
  return ids.reverse();
}
