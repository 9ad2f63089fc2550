import { describe, expect, it } from 'vitest';
import { EntryIdSequence, newEntryId } from '../../src/session/entry-ids.js';
import { SessionStore } from '../../src/session/session-store.js';
import { assistant, user } from './message-builders.js';

describe('entry ids', () => {
  it('a sequence gives 8-hex-char ids that never repeat, without looking them up', () => {
    const seq = new EntryIdSequence();
    const seen = new Set<string>();
    for (let i = 0; i < 200_000; i++) seen.add(seq.next());
    expect(seen.size).toBe(200_000);
    for (const id of [...seen].slice(0, 100)) expect(id).toMatch(/^[0-9a-f]{8}$/);
  });

  it('two sequences (two stores) start at unrelated places', () => {
    const a = new EntryIdSequence();
    const b = new EntryIdSequence();
    const first = Array.from({ length: 50 }, () => a.next());
    expect(first).not.toContain(b.next());
  });

  it('skips an id that is already taken (ids read from a file or copied from another session)', () => {
    const probe = new EntryIdSequence();
    const copy = Object.assign(Object.create(Object.getPrototypeOf(probe) as object) as EntryIdSequence, probe);
    const taken = new Set([probe.next()]);
    const id = copy.next(taken);
    expect(taken.has(id)).toBe(false);
    expect(id).toBe(probe.next()); // the taken one was skipped, the next one used
  });

  it('a reopened session keeps adding ids unique against everything in the file', () => {
    const s = SessionStore.inMemory();
    for (let i = 0; i < 50; i++) s.appendMessage(i % 2 ? assistant(`a${i}`) : user(`u${i}`));
    s.persist();
    const storage = s.storage;
    const reopened = SessionStore.fromStorage(storage);
    for (let i = 0; i < 50; i++) reopened.appendMessage(user(`more ${i}`));
    const ids = reopened.entries.map((e) => e.id);
    expect(new Set(ids).size).toBe(100);
  });

  it('newEntryId re-draws on collision', () => {
    let calls = 0;
    const id = newEntryId({ has: () => ++calls < 3 });
    expect(calls).toBe(3);
    expect(id).toMatch(/^[0-9a-f]{8}$/);
  });
});
