import { describe, expect, it } from 'vitest';
import { IdIndex } from '../../src/session/id-index.js';
import { EntryIdSequence } from '../../src/session/entry-ids.js';

describe('IdIndex', () => {
  it('finds every id it was given, through many growths, and nothing else', () => {
    const index = new IdIndex();
    const seq = new EntryIdSequence();
    const ids = Array.from({ length: 50_000 }, () => seq.next());
    for (const [n, id] of ids.entries()) index.set(id, n);
    expect(index.size).toBe(ids.length);
    for (const [n, id] of ids.entries()) expect(index.get(id)).toBe(n);
    const other = new EntryIdSequence();
    const taken = new Set(ids);
    for (let i = 0; i < 1000; i++) {
      const id = other.next();
      expect(index.has(id)).toBe(taken.has(id));
    }
  });

  it('sequential ids from a file (00000000, 00000001, ...) and the extremes of 32 bits', () => {
    const index = new IdIndex();
    const ids = Array.from({ length: 5000 }, (_, i) => i.toString(16).padStart(8, '0'));
    ids.push('ffffffff', '80000000', '7fffffff');
    for (const [n, id] of ids.entries()) index.set(id, n);
    for (const [n, id] of ids.entries()) expect(index.get(id)).toBe(n);
    expect(index.get('00001388')).toBeUndefined(); // 5000, one past the last
  });

  it('ids of any other shape are kept apart: uppercase, short, long, UUIDs', () => {
    const index = new IdIndex();
    index.set('abcdef01', 1);
    index.set('ABCDEF01', 2);
    index.set('abcdef0', 3);
    index.set('abcdef012', 4);
    index.set('0x123456', 5);
    index.set('123e4567-e89b-12d3-a456-426614174000', 6);
    expect([
      index.get('abcdef01'),
      index.get('ABCDEF01'),
      index.get('abcdef0'),
      index.get('abcdef012'),
      index.get('0x123456'),
    ]).toEqual([1, 2, 3, 4, 5]);
    expect(index.get('123e4567-e89b-12d3-a456-426614174000')).toBe(6);
    expect(index.get('abcdeg01')).toBeUndefined();
    expect(index.size).toBe(6);
  });

  it('setting an id again replaces its node without growing the count', () => {
    const index = new IdIndex();
    index.set('0000000a', 1);
    index.set('0000000a', 7);
    index.set('not-hex', 1);
    index.set('not-hex', 8);
    expect(index.get('0000000a')).toBe(7);
    expect(index.get('not-hex')).toBe(8);
    expect(index.size).toBe(2);
  });
});
