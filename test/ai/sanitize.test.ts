import { describe, expect, it } from 'vitest';
import { sanitizeSurrogates } from '../../src/ai/sanitize.js';

describe('sanitizeSurrogates', () => {
  it('removes lone high and low surrogates and keeps valid pairs', () => {
    expect(sanitizeSurrogates('a\uD83D b')).toBe('a b');
    expect(sanitizeSurrogates('a\uDE00b')).toBe('ab');
    expect(sanitizeSurrogates('ok \uD83D\uDE00 end\uD83D')).toBe('ok \uD83D\uDE00 end');
  });

  it('returns clean strings unchanged', () => {
    const s = 'plain text, ünïcödé, 中文';
    expect(sanitizeSurrogates(s)).toBe(s);
  });
});
