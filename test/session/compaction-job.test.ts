import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { findIncompleteCompactionJob, runCompaction } from '../../src/session/compaction-job.js';
import type { CompactionSettings } from '../../src/session/defaults.js';
import { SessionStore } from '../../src/session/session-store.js';
import type { CompactionJobEntry } from '../../src/session/types.js';
import { assistant, scriptedSummarizer, tempDir, testModel, toolResult, user } from './message-builders.js';

const words = (tokens: number): string => 'abcd'.repeat(tokens);
const settings: CompactionSettings = { enabled: true, reserveTokens: 1000, keepRecentTokens: 250 };
const fastRetry = { maxAttempts: 3, baseDelayMs: 1, maxDelayMs: 2 };

let marker = 0;
function turn(s: SessionStore, size = 100): void {
  s.appendMessage(user(`M${++marker}M ${words(size)}`));
  s.appendMessage(
    assistant(`M${++marker}M`, { toolCalls: [{ id: `c${marker}`, name: 'read', args: { path: `f${marker}.ts` } }] }),
  );
  s.appendMessage(toolResult(`c${marker}`, `M${++marker}M ${words(size)}`));
  s.appendMessage(assistant(`M${++marker}M ${words(size)}`));
}

const jobStages = (s: SessionStore): string[] =>
  s.entries.filter((e): e is CompactionJobEntry => e.type === 'compaction_job').map((e) => e.stage);

const markersIn = (text: string): string[] => [...text.matchAll(/M(\d+)M/g)].map((m) => m[1]!);

describe('runCompaction', () => {
  it('records cut point, request and the compaction entry, and the context becomes summary + kept', async () => {
    const s = SessionStore.inMemory();
    for (let i = 0; i < 5; i++) turn(s);
    const { complete, calls } = scriptedSummarizer(['## Goal\nShip it']);
    const out = await runCompaction(s, { model: testModel(), complete, settings, retry: fastRetry });
    expect(out.status).toBe('compacted');
    expect(calls).toHaveLength(1);
    expect(jobStages(s)).toEqual(['cut_point', 'summary_requested']);
    const leaf = s.getLeafEntry()!;
    expect(leaf).toMatchObject({ type: 'compaction' });
    expect('fromHook' in leaf).toBe(false);
    if (out.status !== 'compacted' || leaf.type !== 'compaction') throw new Error('unreachable');
    expect(leaf.jobId).toBe(out.jobId);
    expect(leaf.summary).toMatch(/^## Goal\nShip it\n\n<read-files>\n/);
    const ctx = s.buildContext().messages;
    expect(ctx[0]).toMatchObject({ role: 'compactionSummary' });
    expect(ctx[1]).toBe((s.getEntry(leaf.firstKeptEntryId) as { message: unknown }).message);
  });

  it('a retryable failure is recorded with its attempt and error, then retried to success', async () => {
    const s = SessionStore.inMemory();
    for (let i = 0; i < 5; i++) turn(s);
    const { complete, calls } = scriptedSummarizer([{ error: '529 overloaded_error: Overloaded' }, '## Goal\nok']);
    const out = await runCompaction(s, { model: testModel(), complete, settings, retry: fastRetry });
    expect(out).toMatchObject({ status: 'compacted', attempts: 2 });
    expect(calls).toHaveLength(2);
    expect(jobStages(s)).toEqual(['cut_point', 'summary_requested', 'attempt_failed', 'summary_requested']);
    const failed = s.entries.find((e) => e.type === 'compaction_job' && e.stage === 'attempt_failed');
    expect(failed).toMatchObject({ attempt: 1, retryInMs: 1, error: expect.stringMatching(/Overloaded/) });
  });

  it('gives up after the last attempt, leaving a readable reason and the context unchanged', async () => {
    const s = SessionStore.inMemory();
    for (let i = 0; i < 5; i++) turn(s);
    const before = s.buildContext();
    const { complete, calls } = scriptedSummarizer([{ error: 'rate limit exceeded (429)' }]);
    const out = await runCompaction(s, {
      model: testModel(),
      complete,
      settings,
      retry: { ...fastRetry, maxAttempts: 2 },
    });
    expect(out.status).toBe('failed');
    expect(calls).toHaveLength(2);
    const gaveUp = s.getLeafEntry();
    expect(gaveUp).toMatchObject({ type: 'compaction_job', stage: 'gave_up', attempts: 2 });
    expect((gaveUp as { reason: string }).reason).toMatch(
      /gave up after 2 attempts: Summarization failed: rate limit exceeded/,
    );
    expect(s.buildContext()).toEqual(before);
    // A later compaction is possible and notes nothing unfinished (the give-up closed the job).
    const again = await runCompaction(s, {
      model: testModel(),
      complete: scriptedSummarizer(['ok']).complete,
      settings,
    });
    expect(again.status).toBe('compacted');
  });

  it('does not retry errors that retrying cannot fix', async () => {
    const s = SessionStore.inMemory();
    for (let i = 0; i < 5; i++) turn(s);
    const { complete, calls } = scriptedSummarizer([{ error: '401 invalid api key' }]);
    const out = await runCompaction(s, { model: testModel(), complete, settings, retry: fastRetry });
    expect(out).toMatchObject({ status: 'failed', attempts: 1 });
    expect(calls).toHaveLength(1);
  });

  it('an aborted call ends the job as aborted without retrying', async () => {
    const s = SessionStore.inMemory();
    for (let i = 0; i < 5; i++) turn(s);
    const ac = new AbortController();
    ac.abort();
    const { complete } = scriptedSummarizer(['never']);
    const out = await runCompaction(s, { model: testModel(), complete, settings, signal: ac.signal, retry: fastRetry });
    expect(out.status).toBe('aborted');
    expect(s.getLeafEntry()).toMatchObject({ stage: 'gave_up' });
  });

  it('a host hook can veto or supply the summary', async () => {
    const s = SessionStore.inMemory();
    for (let i = 0; i < 5; i++) turn(s);
    const { complete, calls } = scriptedSummarizer();
    const vetoed = await runCompaction(s, {
      model: testModel(),
      complete,
      settings,
      beforeCompact: () => ({ cancel: true, reason: 'busy' }),
    });
    expect(vetoed).toEqual({ status: 'cancelled', message: 'busy' });
    expect(jobStages(s)).toEqual([]);
    const supplied = await runCompaction(s, {
      model: testModel(),
      complete,
      settings,
      beforeCompact: () => ({ summary: 'from the host' }),
    });
    expect(supplied).toMatchObject({ status: 'compacted', fromHook: true });
    expect(calls).toHaveLength(0);
    expect(s.getLeafEntry()).toMatchObject({ type: 'compaction', summary: 'from the host', fromHook: true });
  });

  it('skips with a reason when already compacted', async () => {
    const s = SessionStore.inMemory();
    for (let i = 0; i < 5; i++) turn(s);
    const { complete } = scriptedSummarizer();
    await runCompaction(s, { model: testModel(), complete, settings });
    expect(await runCompaction(s, { model: testModel(), complete, settings })).toMatchObject({
      status: 'skipped',
      reason: 'already_compacted',
    });
  });

  it('a file cut in the middle of a compaction job reopens with the pre-compaction context, and a new job restarts it', async () => {
    const path = join(tempDir(), 's.jsonl');
    const s = SessionStore.create(path);
    for (let i = 0; i < 5; i++) turn(s);
    const before = s.buildContext();
    await runCompaction(s, { model: testModel(), complete: scriptedSummarizer(['## Goal\nG']).complete, settings });
    s.close();
    // Drop the compaction line and tear the job's last line, as if killed while writing.
    const text = readFileSync(path, 'utf8').split('\n').filter(Boolean);
    const lastJob = text[text.length - 2]!;
    writeFileSync(path, `${text.slice(0, -2).join('\n')}\n${lastJob.slice(0, 30)}`);

    const r = SessionStore.open(path);
    expect(r.warnings).toHaveLength(1);
    expect(r.buildContext().messages).toEqual(before.messages);
    const unfinished = findIncompleteCompactionJob(r.getPath());
    expect(unfinished?.entries.map((e) => e.stage)).toEqual(['cut_point']);
    const out = await runCompaction(r, {
      model: testModel(),
      complete: scriptedSummarizer(['## Goal\nG2']).complete,
      settings,
    });
    expect(out.status).toBe('compacted');
    const cut = r.entries.filter((e) => e.type === 'compaction_job' && e.stage === 'cut_point');
    expect(cut[1]).toMatchObject({ restartsJobId: unfinished!.jobId });
    expect(SessionStore.open(path).buildContext().messages[0]).toMatchObject({ role: 'compactionSummary' });
  });

  it('three compactions lose no message: each was summarized by some compaction or is still in context', async () => {
    const s = SessionStore.inMemory();
    const { complete, calls } = scriptedSummarizer();
    for (let round = 0; round < 3; round++) {
      for (let i = 0; i < 4; i++) turn(s);
      const out = await runCompaction(s, { model: testModel(), complete, settings });
      expect(out.status).toBe('compacted');
    }
    turn(s);
    const all = new Set(s.entries.flatMap((e) => (e.type === 'message' ? markersIn(JSON.stringify(e.message)) : [])));
    const summarized = new Set(calls.flatMap((c) => markersIn(c.prompt.split('</conversation>')[0]!)));
    const inContext = new Set(s.buildContext().messages.flatMap((m) => markersIn(JSON.stringify(m))));
    const lost = [...all].filter((m) => !summarized.has(m) && !inContext.has(m));
    expect(all.size).toBeGreaterThan(40);
    expect(lost).toEqual([]);
    expect(calls).toHaveLength(3);
    expect(calls[1]!.prompt).toContain('<previous-summary>\n## Goal\nSummary #1');
  });
});

describe('a compaction that keeps nothing (keepRecentTokens 0: a whole session summarized, as for a handoff)', () => {
  it('summarizes every message as history (no split turn), points at itself, and the context is the summary alone, also after reopening', async () => {
    const dir = tempDir();
    const file = join(dir, 's.jsonl');
    const s = SessionStore.create(file);
    const first = marker + 1;
    turn(s); // one turn: with any keep budget above 0 its end would be kept and the turn split
    const { complete, calls } = scriptedSummarizer(['## Goal\nAll of it']);
    const out = await runCompaction(s, {
      model: testModel(),
      complete,
      settings: { ...settings, keepRecentTokens: 0 },
      retry: fastRetry,
    });
    if (out.status !== 'compacted') throw new Error(JSON.stringify(out));
    expect(calls).toHaveLength(1); // no turn-prefix summary
    expect(markersIn(JSON.stringify(calls[0]))).toEqual([0, 1, 2, 3].map((i) => String(first + i)));
    expect(out.result.summary).not.toContain('Turn Context');
    const leaf = s.getLeafEntry()!;
    if (leaf.type !== 'compaction') throw new Error('the leaf is not the compaction');
    expect(leaf.firstKeptEntryId).toBe(leaf.id);
    expect(out.result.firstKeptEntryId).toBe(leaf.id);
    expect(s.buildContext().messages.map((m) => m.role)).toEqual(['compactionSummary']);
    s.close();
    const reopened = SessionStore.open(file);
    expect(reopened.buildContext().messages.map((m) => m.role)).toEqual(['compactionSummary']);
    // Work after it is kept, and a later compaction starts after it.
    reopened.appendMessage(user('M99M next'));
    expect(reopened.buildContext().messages.map((m) => m.role)).toEqual(['compactionSummary', 'user']);
  });
});
