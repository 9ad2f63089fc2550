import { describe, expect, it } from 'vitest';
import { closestLine, locate, normalizeForMatch, similarity } from '../../src/tools/fuzzy-match.js';

describe('normalizeForMatch', () => {
  it('maps every normalized character back to its original span', () => {
    const original = 'a“b”\u00a0c  \r\nﬁ—x';
    const n = normalizeForMatch(original);
    expect(n.text).toBe('a"b" c\nfi-x');
    for (let i = 0; i < n.text.length; i++) {
      const span = original.slice(n.starts[i], n.ends[i]);
      expect(span.length).toBeGreaterThan(0);
    }
    // The newline covers the whole CRLF; the ligature's two letters share one span.
    expect(original.slice(n.starts[6], n.ends[6])).toBe('\r\n');
    expect(original.slice(n.starts[7], n.ends[8])).toBe('ﬁ');
  });

  it('keeps combining marks with their base character', () => {
    expect(normalizeForMatch('e\u0301x').text).toBe('éx');
  });
});

describe('locate', () => {
  it('returns original coordinates for a fuzzy match, including trailing whitespace inside the span', () => {
    const content = 'keep\nfoo   \nbar\nkeep';
    const m = locate(content, 'foo\nbar', () => normalizeForMatch(content));
    expect(m).toEqual({ kind: 'unique', start: 5, end: 15, fuzzy: true });
    expect(content.slice(5, 15)).toBe('foo   \nbar');
  });

  it('finds CRLF text given with LF without the fuzzy pass', () => {
    const content = 'a\r\nb\r\nc';
    expect(locate(content, 'a\nb', () => normalizeForMatch(content))).toEqual({
      kind: 'unique',
      start: 0,
      end: 4,
      fuzzy: false,
    });
  });
});

describe('hints', () => {
  it('rates similar strings higher and finds the closest line', () => {
    expect(similarity('return a + b;', 'return a - b;')).toBeGreaterThan(similarity('return a + b;', 'const z = 9'));
    expect(closestLine('x\n  return a + b;\ny', 'return a - b;', 100)).toEqual({ line: 2, text: '  return a + b;' });
    expect(closestLine('x\ny', 'completely different', 100)).toBeUndefined();
  });
});
