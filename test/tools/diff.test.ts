import { describe, expect, it } from 'vitest';
import { unifiedDiff } from '../../src/tools/diff.js';
import { seededRandom } from '../helpers/seeded-random.js';

/** Applies a unified diff to `old` (test oracle: the diff must reproduce the new text). */
function applyPatch(old: string, diff: string): string {
  const a = old === '' ? [] : old.replace(/\n$/, '').split('\n');
  const out: string[] = [];
  let ai = 0;
  for (const line of diff.split('\n').slice(2)) {
    const h = /^@@ -(\d+),(\d+) \+\d+,\d+ @@$/.exec(line);
    if (h) {
      const start = Number(h[2]) === 0 ? Number(h[1]) : Number(h[1]) - 1;
      while (ai < start) out.push(a[ai++] as string);
      continue;
    }
    const body = line.slice(1);
    if (line[0] === ' ') {
      expect(a[ai]).toBe(body);
      out.push(body);
      ai++;
    } else if (line[0] === '-') {
      expect(a[ai]).toBe(body);
      ai++;
    } else out.push(body);
  }
  while (ai < a.length) out.push(a[ai++] as string);
  return out.join('\n');
}

describe('unifiedDiff', () => {
  it('returns no diff for equal texts', () => {
    expect(unifiedDiff('a\nb\n', 'a\nb\n')).toEqual({ diff: '', firstChangedLine: undefined });
  });

  it('separates distant changes into hunks with three lines of context', () => {
    const old = Array.from({ length: 30 }, (_, i) => `l${i + 1}`).join('\n');
    const neu = old.replace('l5', 'L5').replace('l25', 'L25');
    const { diff, firstChangedLine } = unifiedDiff(old, neu, { path: 'x.ts' });
    expect(firstChangedLine).toBe(5);
    expect(diff.split('\n').filter((l) => l.startsWith('@@'))).toEqual(['@@ -2,7 +2,7 @@', '@@ -22,7 +22,7 @@']);
  });

  it('describes pure insertions and deletions at the edges', () => {
    expect(unifiedDiff('b\nc', 'a\nb\nc').diff).toBe('--- a/file\n+++ b/file\n@@ -1,2 +1,3 @@\n+a\n b\n c');
    expect(unifiedDiff('a\nb', 'a').firstChangedLine).toBe(2);
    expect(unifiedDiff('', 'x').diff).toBe('--- a/file\n+++ b/file\n@@ -0,0 +1,1 @@\n+x');
  });

  it('reproduces the new text when applied, for random edits', () => {
    const rand = seededRandom(42);
    for (let round = 0; round < 200; round++) {
      const words = ['a', 'b', 'c', 'd', 'e'];
      const old = Array.from({ length: Math.floor(rand() * 25) }, () => words[Math.floor(rand() * 5)]);
      const neu = [...old];
      for (let k = Math.floor(rand() * 6); k > 0; k--) {
        const at = Math.floor(rand() * (neu.length + 1));
        if (rand() < 0.5 && neu.length > 0) neu.splice(at, 1);
        else neu.splice(at, 0, words[Math.floor(rand() * 5)] as string);
      }
      const oldText = old.join('\n');
      const newText = neu.join('\n');
      const { diff } = unifiedDiff(oldText, newText, { context: 1 });
      if (oldText === newText) expect(diff).toBe('');
      else expect(applyPatch(oldText, diff)).toBe(newText);
    }
  });

  it('falls back to a block replace when the edit distance is too large, still correct', () => {
    const old = Array.from({ length: 50 }, (_, i) => `o${i}`).join('\n');
    const neu = Array.from({ length: 50 }, (_, i) => `n${i}`).join('\n');
    const { diff } = unifiedDiff(old, neu, { maxEditDistance: 3 });
    expect(applyPatch(old, diff)).toBe(neu);
  });
});
