import { describe, expect, it } from 'vitest';
import { displayWidth, fitToWidth, makePainter, shouldUseColor, stripAnsi, truncateToWidth } from '../../src/display/terminal-text.js';

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
});
