import { appendFileSync, copyFileSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ConversationCache } from '../../src/display/conversation-cache.js';
import { KEYS, writeSyntheticRun } from './fixtures/synthetic-run.js';

const TORN = '{"type":"message","id":"zz';

describe('ConversationCache', () => {
  it('parses the session file again only when it changed, and again after forget()', () => {
    const { store } = writeSyntheticRun(mkdtempSync(join(tmpdir(), 'conv-cache-')));
    const file = store.sessionFile(KEYS.c);
    const cache = new ConversationCache();
    const first = cache.read(file);
    expect(first.items.length).toBe(3);
    expect(cache.read(file)).toBe(first);
    appendFileSync(file, TORN);
    const grown = cache.read(file);
    expect(grown).not.toBe(first);
    expect(grown.warnings.join('\n')).toMatch(/line \d+ is incomplete/);
    expect(cache.read(file)).toBe(grown);
    cache.forget();
    const again = cache.read(file);
    expect(again).not.toBe(grown);
    expect(again.items.length).toBe(3);
  });

  it('a file read before it exists is read when it appears; another file is not served from the cache', () => {
    const dir = mkdtempSync(join(tmpdir(), 'conv-cache-'));
    const { store } = writeSyntheticRun(dir);
    const later = join(dir, 'later.jsonl');
    const cache = new ConversationCache();
    expect(cache.read(later)).toMatchObject({ exists: false, items: [] });
    copyFileSync(store.sessionFile(KEYS.b), later);
    expect(cache.read(later)).toMatchObject({ exists: true });
    expect(cache.read(later).items.length).toBe(4);
    expect(cache.read(store.sessionFile(KEYS.c)).items.length).toBe(3);
  });

  it('while the run is live, a last line still being appended is no warning; other damage still is', () => {
    const { store } = writeSyntheticRun(mkdtempSync(join(tmpdir(), 'conv-cache-')));
    const file = store.sessionFile(KEYS.c);
    appendFileSync(file, `not json at all\n${TORN}`);
    const live = new ConversationCache({ whileLive: true }).read(file);
    const after = new ConversationCache().read(file);
    expect(after.warnings.some((w) => /is incomplete/.test(w))).toBe(true);
    expect(live.warnings.some((w) => /is incomplete/.test(w))).toBe(false);
    expect(live.warnings.length).toBe(after.warnings.length - 1);
    expect(live.warnings.length).toBeGreaterThan(0);
  });
});
