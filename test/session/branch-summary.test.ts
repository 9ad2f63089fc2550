import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { AgentMessage } from '../../src/agent/types.js';
import {
  BRANCH_SUMMARY_PREAMBLE,
  collectEntriesForBranchSummary,
  navigateTree,
  prepareBranchEntries,
} from '../../src/session/branch-summary.js';
import { SessionStore } from '../../src/session/session-store.js';
import { assistant, scriptedSummarizer, tempDir, testModel, toolResult, user } from './message-builders.js';

const text = (m: AgentMessage): string =>
  m.role === 'user' || m.role === 'assistant'
    ? typeof m.content === 'string'
      ? m.content
      : m.content.map((b) => ('text' in b ? b.text : '')).join('')
    : m.role;

/** root: u1 a1, then branch A: u2 a2(edit) r2 a2b, and branch B from a1: u3 a3. Leaf on B. */
function tree(path?: string) {
  const s = path ? SessionStore.create(path) : SessionStore.inMemory();
  const u1 = s.appendMessage(user('start'));
  const a1 = s.appendMessage(assistant('ok'));
  const u2 = s.appendMessage(user('try plan A'));
  s.appendMessage(assistant('editing', { toolCalls: [{ id: 't', name: 'edit', args: { path: 'src/a.ts' } }] }));
  s.appendMessage(toolResult('t', 'edited', 'edit'));
  const a2 = s.appendMessage(assistant('plan A done'));
  s.moveLeaf(a1);
  const u3 = s.appendMessage(user('try plan B'));
  const a3 = s.appendMessage(assistant('plan B done'));
  s.persist(); // the tests count writes from here
  return { s, u1, a1, u2, a2, u3, a3 };
}

describe('navigateTree', () => {
  it('to a user message: the leaf becomes its parent and its text is returned for editing', async () => {
    const { s, a1, u2 } = tree();
    const out = await navigateTree(s, u2);
    expect(out).toEqual({ status: 'moved', leafId: a1, editorText: 'try plan A' });
    expect(s.buildContext().messages.map(text)).toEqual(['start', 'ok']);
  });

  it('to an assistant message: the target becomes the leaf', async () => {
    const { s, a2 } = tree();
    const out = await navigateTree(s, a2);
    expect(out).toEqual({ status: 'moved', leafId: a2 });
    expect(s.buildContext().messages.map(text)).toEqual([
      'start',
      'ok',
      'try plan A',
      'editing',
      'toolResult',
      'plan A done',
    ]);
  });

  it('to the current leaf is a no-op that writes nothing', async () => {
    const { s, a3 } = tree();
    const writes = s.storage.appendCount;
    expect(await navigateTree(s, a3)).toEqual({ status: 'noop', leafId: a3 });
    expect(s.storage.appendCount).toBe(writes);
  });

  it('between branches rebuilds the right messages each time', async () => {
    const { s, a2, a3 } = tree();
    await navigateTree(s, a2);
    expect(s.buildContext().messages.map(text).at(-1)).toBe('plan A done');
    await navigateTree(s, a3);
    expect(s.buildContext().messages.map(text)).toEqual(['start', 'ok', 'try plan B', 'plan B done']);
  });

  it('with a summary: the summary of the abandoned part is a child of the new leaf and becomes the leaf, in one append', async () => {
    const path = join(tempDir(), 's.jsonl');
    const { s, a2, a3 } = tree(path);
    const { complete, calls } = scriptedSummarizer(['## Goal\nPlan B']);
    const writes = s.storage.appendCount;
    const out = await navigateTree(s, a2, { summarize: { model: testModel(), complete } });
    expect(s.storage.appendCount).toBe(writes + 1);
    if (out.status !== 'moved') throw new Error(out.status);
    const entry = s.getEntry(out.summaryEntryId!)!;
    expect(entry).toMatchObject({ type: 'branch_summary', parentId: a2, fromId: a3 });
    expect(s.leafId).toBe(entry.id);
    // Only the abandoned stretch (below the common ancestor a1) was summarized.
    expect(calls[0]!.prompt).toContain('[User]: try plan B');
    expect(calls[0]!.prompt).not.toContain('[User]: start');
    expect(calls[0]!.options?.maxTokens).toBe(2048);
    const ctx = s.buildContext().messages;
    expect(ctx.at(-1)).toMatchObject({
      role: 'branchSummary',
      fromId: a3,
      summary: `${BRANCH_SUMMARY_PREAMBLE}## Goal\nPlan B`,
    });
    expect(SessionStore.open(path).buildContext().messages).toEqual(ctx);
  });

  it('abort during summarization leaves the session untouched', async () => {
    const { s, a2, a3 } = tree();
    const ac = new AbortController();
    ac.abort();
    const writes = s.storage.appendCount;
    const out = await navigateTree(s, a2, {
      summarize: { model: testModel(), complete: scriptedSummarizer().complete, signal: ac.signal },
    });
    expect(out.status).toBe('aborted');
    expect(s.leafId).toBe(a3);
    expect(s.storage.appendCount).toBe(writes);
  });

  it('a label goes on the summary entry', async () => {
    const { s, a2 } = tree();
    const out = await navigateTree(s, a2, { providedSummary: { summary: 'host summary' }, label: 'back to A' });
    if (out.status !== 'moved') throw new Error(out.status);
    expect(s.getLabel(out.summaryEntryId!)).toBe('back to A');
    expect(s.getEntry(out.summaryEntryId!)).toMatchObject({ fromHook: true, summary: 'host summary' });
  });
});

describe('branch entries', () => {
  it('collects from the old leaf up to the common ancestor, oldest first', () => {
    const { s, a1, u3, a3, a2 } = tree();
    const { entries, commonAncestorId } = collectEntriesForBranchSummary(s, a3, a2);
    expect(commonAncestorId).toBe(a1);
    expect(entries.map((e) => e.id)).toEqual([u3, a3]);
  });

  it('keeps the newest messages within the token budget, skips tool results, tracks files', () => {
    const { s, a2 } = tree();
    const path = s.getPath(a2);
    const all = prepareBranchEntries(path, 100_000);
    expect(all.messages.map((m) => m.role)).not.toContain('toolResult');
    expect(all.fileOps.edited.has('src/a.ts')).toBe(true);
    const small = prepareBranchEntries(path, 6);
    expect(small.messages.map(text)).toEqual(['plan A done']);
  });

  it('still takes a dense summary entry that overflows the budget while under 90 %', () => {
    const s = SessionStore.inMemory();
    s.appendBranchSummary('root', 'x'.repeat(400));
    s.appendMessage(user('abcd'.repeat(10)));
    const r = prepareBranchEntries(s.getPath(), 100);
    expect(r.messages.map((m) => m.role)).toEqual(['branchSummary', 'user']);
    expect(prepareBranchEntries(s.getPath(), 11).messages.map((m) => m.role)).toEqual(['user']);
  });
});
