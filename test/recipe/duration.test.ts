import { describe, expect, it } from 'vitest';
import { parseDuration, parseTokenCount } from '../../src/recipe/duration.js';

describe('durations and token counts', () => {
  it('parses seconds, units and compound durations into ms', () => {
    expect(parseDuration(90)).toBe(90_000);
    expect(parseDuration('90')).toBe(90_000);
    expect(parseDuration('30s')).toBe(30_000);
    expect(parseDuration('10m')).toBe(600_000);
    expect(parseDuration('1h30m')).toBe(5_400_000);
    expect(parseDuration('500ms')).toBe(500);
    expect(parseDuration('1.5s')).toBe(1_500);
  });

  it('rejects what is not a duration', () => {
    for (const bad of ['10 minutes', 'soon', '', '1d', '-5s', 'm']) expect(parseDuration(bad), bad).toBeUndefined();
    expect(parseDuration(0)).toBeUndefined();
    expect(parseDuration(Number.NaN)).toBeUndefined();
  });

  it('parses token counts with k and M', () => {
    expect(parseTokenCount(400)).toBe(400);
    expect(parseTokenCount('400k')).toBe(400_000);
    expect(parseTokenCount('1.5M')).toBe(1_500_000);
    expect(parseTokenCount('lots')).toBeUndefined();
    expect(parseTokenCount(1.5)).toBeUndefined();
  });
});
