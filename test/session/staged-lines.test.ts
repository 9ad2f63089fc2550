// The store's staging buffer: lines become "<utf-8>\n" in order; a line can go first (the header
// of a session released by its first reply) and come off again; a mark undoes what came after
// it; and it grows past its first size and shrinks back once emptied.
import { describe, expect, it } from 'vitest';
import { StagedLines } from '../../src/session/staged-lines.js';

const text = (s: StagedLines): string => Buffer.from(s.view()).toString('utf8');
const utf8 = (s: string): Uint8Array => Buffer.from(s);

describe('StagedLines', () => {
  it('keeps lines in order, each ending in a newline, and counts them', () => {
    const s = new StagedLines();
    s.push(utf8('{"a":1}'));
    s.push(utf8('{"t":"日本"}'));
    expect(text(s)).toBe('{"a":1}\n{"t":"日本"}\n');
    expect(s.count).toBe(2);
    expect(s.size).toBe(Buffer.byteLength(text(s)));
  });

  it('unshift puts a line first and shift takes it off again', () => {
    const s = new StagedLines();
    s.push(utf8('one'));
    s.push(utf8('two'));
    s.unshift(utf8('header'));
    expect(text(s)).toBe('header\none\ntwo\n');
    expect(s.shift()).toBe('header\n'.length);
    expect(text(s)).toBe('one\ntwo\n');
    expect(s.count).toBe(2);
  });

  it('truncate to a mark drops what came after it', () => {
    const s = new StagedLines();
    s.push(utf8('kept'));
    const mark = [s.size, s.count] as const;
    s.push(utf8('dropped'));
    s.push(utf8('dropped too'));
    s.truncate(...mark);
    s.push(utf8('next'));
    expect(text(s)).toBe('kept\nnext\n');
    expect(s.count).toBe(2);
  });

  it('grows for big batches, keeps every byte across growth, and clear() empties it', () => {
    const s = new StagedLines();
    const lines = Array.from({ length: 50 }, (_, i) => `${i} ${'é'.repeat(20_000)}`);
    for (const l of lines) s.push(utf8(l));
    s.unshift(utf8('head'));
    expect(text(s)).toBe(`${['head', ...lines].join('\n')}\n`);
    s.clear();
    expect(s.size).toBe(0);
    expect(s.count).toBe(0);
    s.push(utf8('fresh'));
    expect(text(s)).toBe('fresh\n');
  });
});
