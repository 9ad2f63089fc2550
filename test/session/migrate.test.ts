import { copyFileSync, existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { migrateEntries } from '../../src/session/migrate.js';
import { SessionStore } from '../../src/session/session-store.js';
import { tempDir } from './message-builders.js';

const fixture = join(import.meta.dirname, 'fixtures', 'v1-session.jsonl');

describe('format migration', () => {
  it('migrates a v1 file to v3: ids, linear parents, firstKeptEntryIndex → id, hookMessage → custom', () => {
    const dir = tempDir();
    const path = join(dir, 'old.jsonl');
    copyFileSync(fixture, path);
    const s = SessionStore.open(path);
    expect(s.warnings).toEqual([expect.stringMatching(/migrated from format v1 to v3/)]);
    expect(existsSync(`${path}.v1.bak`)).toBe(true);
    expect(readFileSync(`${path}.v1.bak`, 'utf8')).toBe(readFileSync(fixture, 'utf8'));

    const objs = readFileSync(path, 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(objs[0]).toMatchObject({ type: 'session', version: 3, cwd: '/home/dev/app' });
    const entries = objs.slice(1);
    expect(entries.every((e) => typeof e.id === 'string' && /^[0-9a-f]{8}$/.test(e.id as string))).toBe(true);
    expect(entries[0]!.parentId).toBeNull();
    for (let i = 1; i < entries.length; i++) expect(entries[i]!.parentId).toBe(entries[i - 1]!.id);
    const compaction = entries.find((e) => e.type === 'compaction')!;
    expect(compaction.firstKeptEntryId).toBe(entries[4]!.id);
    expect('firstKeptEntryIndex' in compaction).toBe(false);
    expect((entries[3]!.message as { role: string }).role).toBe('custom');

    const ctx = s.buildContext();
    expect(ctx.messages.map((m) => m.role)).toEqual(['compactionSummary', 'user', 'assistant', 'user']);
    expect(ctx.model).toEqual({ provider: 'anthropic', modelId: 'claude-old' });
  });

  it("counts the header as index 0, as pi's v1 files do: the kept turn starts with its user message", () => {
    // The fixture's compaction says firstKeptEntryIndex 5: file line 5 (0-based, header = 0) is
    // the user message "now add tests" that opened the kept turn.
    const line5 = JSON.parse(readFileSync(fixture, 'utf8').split('\n')[5]!) as {
      message: { content: { text: string }[] };
    };
    expect(line5.message.content[0]!.text).toBe('now add tests');
    const path = join(tempDir(), 'old.jsonl');
    copyFileSync(fixture, path);
    const ctx = SessionStore.open(path).buildContext();
    const texts = ctx.messages.map((m) =>
      'content' in m && Array.isArray(m.content) ? (m.content[0] as { text?: string } | undefined)?.text : undefined,
    );
    expect(texts.slice(1)).toEqual(['now add tests', 'Tests added.', 'thanks']);

    const entries: Record<string, unknown>[] = [
      { type: 'message', message: { role: 'user' } },
      { type: 'message', message: { role: 'assistant' } },
      { type: 'compaction', firstKeptEntryIndex: 0 },
    ];
    migrateEntries(entries, 1);
    expect(entries[2]!.firstKeptEntryId).toBe(entries[0]!.id); // the header: everything is kept
  });

  it('is idempotent: a migrated file reopens with no warning and no rewrite', () => {
    const path = join(tempDir(), 'old.jsonl');
    copyFileSync(fixture, path);
    SessionStore.open(path).close();
    const once = readFileSync(path, 'utf8');
    const again = SessionStore.open(path);
    expect(again.warnings).toEqual([]);
    expect(readFileSync(path, 'utf8')).toBe(once);
  });

  it('v2 → v3 only renames hookMessage', () => {
    const entries = [{ type: 'message', id: 'a', parentId: null, message: { role: 'hookMessage' } }];
    expect(migrateEntries(entries, 2)).toEqual({ fromVersion: 2, toVersion: 3, changed: true });
    expect(entries[0]!.message.role).toBe('custom');
    expect(migrateEntries(entries, 3).changed).toBe(false);
  });
});
