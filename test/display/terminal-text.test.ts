import { describe, expect, it } from 'vitest';
import {
  clip,
  displayWidth,
  fitToWidth,
  makePainter,
  padStartToWidth,
  runDisplayChoice,
  shouldUseColor,
  stripAnsi,
  truncateToWidth,
} from '../../src/display/terminal-text.js';

/** No lone surrogate (half of an emoji) in the text. */
const wellFormed = (s: string): boolean => !/\p{Cs}/u.test(s);

describe('terminal text', () => {
  it('colour is off for NO_COLOR (non-empty), --no-color and non-TTY streams', () => {
    expect(shouldUseColor({ isTTY: true, env: {} })).toBe(true);
    expect(shouldUseColor({ isTTY: true, env: { NO_COLOR: '1' } })).toBe(false);
    expect(shouldUseColor({ isTTY: true, env: { NO_COLOR: '' } })).toBe(true);
    expect(shouldUseColor({ isTTY: true, noColorFlag: true, env: {} })).toBe(false);
    expect(shouldUseColor({ isTTY: false, env: {} })).toBe(false);
  });

  it('a disabled painter returns text untouched; an enabled one adds SGR codes that take no width', () => {
    expect(makePainter(false).paint('red', 'x')).toBe('x');
    const red = makePainter(true).paint('red', 'abc');
    expect(red).not.toBe('abc');
    expect(stripAnsi(red)).toBe('abc');
    expect(displayWidth(red)).toBe(3);
  });

  it('cuts to a width in cells with an ellipsis, counting wide characters as two and keeping colour balanced', () => {
    expect(truncateToWidth('abcdef', 4)).toBe('abc…');
    expect(displayWidth(truncateToWidth('日本語のテキスト', 7))).toBeLessThanOrEqual(7);
    const cut = truncateToWidth(makePainter(true).paint('green', 'abcdefgh'), 5);
    expect(displayWidth(cut)).toBe(5);
    expect(cut.endsWith('\x1b[0m')).toBe(true);
    expect(fitToWidth('ab', 5)).toBe('ab   ');
  });

  it('FORCE_COLOR forces colour on (or off with 0/false), over NO_COLOR and a pipe; --no-color still wins', () => {
    expect(shouldUseColor({ isTTY: false, env: { FORCE_COLOR: '1' } })).toBe(true);
    expect(shouldUseColor({ isTTY: false, env: { FORCE_COLOR: '' } })).toBe(true);
    expect(shouldUseColor({ isTTY: false, env: { FORCE_COLOR: '3', NO_COLOR: '1' } })).toBe(true);
    expect(shouldUseColor({ isTTY: true, env: { FORCE_COLOR: '0' } })).toBe(false);
    expect(shouldUseColor({ isTTY: true, env: { FORCE_COLOR: 'false' } })).toBe(false);
    expect(shouldUseColor({ isTTY: true, noColorFlag: true, env: { FORCE_COLOR: '1' } })).toBe(false);
  });

  it('the live view runs when stderr alone is a terminal (stdout redirected to a file)', () => {
    expect(runDisplayChoice({ stdoutIsTTY: false, stderrIsTTY: true, env: {} })).toEqual({
      live: true,
      color: true,
      summaryColor: false,
    });
    expect(runDisplayChoice({ stdoutIsTTY: true, stderrIsTTY: false, env: {} })).toEqual({
      live: false,
      color: false,
      summaryColor: true,
    });
    expect(runDisplayChoice({ stdoutIsTTY: false, stderrIsTTY: false, env: { FORCE_COLOR: '1' } })).toEqual({
      live: false,
      color: true,
      summaryColor: true,
    });
  });

  it.each([
    ['❤️', 2],
    ['⚡', 2],
    ['👍🏽', 2],
    ['👨‍👩‍👧', 2],
    ['🇯🇵', 2],
    ['e\u0301', 1],
    ['中文', 4],
    ['ok ✔', 4],
  ])('%s takes %i cells', (text, width) => {
    expect(displayWidth(text)).toBe(width);
  });

  it('cuts and pads between graphemes: emoji, skin tones, ZWJ families and flags stay whole', () => {
    const row = 'build 👨‍👩‍👧 ❤️ 👍🏽 🇯🇵 done';
    for (let w = 1; w <= displayWidth(row) + 1; w++) {
      const cut = truncateToWidth(row, w);
      expect(displayWidth(cut), `width ${w}`).toBeLessThanOrEqual(w);
      expect(wellFormed(cut), `width ${w}`).toBe(true);
      expect(row.startsWith(cut.replace(/…$/, '')), `width ${w}: ${cut}`).toBe(true);
      expect(displayWidth(fitToWidth(row, w))).toBe(w);
      expect(displayWidth(padStartToWidth(row, w))).toBe(w);
    }
    expect(truncateToWidth('ab👨‍👩‍👧cd', 4)).toBe('ab…');
    expect(truncateToWidth('ab👨‍👩‍👧cd', 5)).toBe('ab👨‍👩‍👧…');
  });

  it('clip counts user-perceived characters and never splits a surrogate pair', () => {
    expect(clip('abc', 3)).toBe('abc');
    expect(clip('😀😀😀😀', 3)).toBe('😀😀…');
    expect(clip('👍🏽👍🏽', 2)).toBe('👍🏽👍🏽');
    expect(clip('x😀y', 2)).toBe('x…');
    for (let n = 1; n < 8; n++) expect(wellFormed(clip('🇯🇵😀👨‍👩‍👧ab', n))).toBe(true);
  });
});
