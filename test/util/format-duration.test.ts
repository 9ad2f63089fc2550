import { describe, expect, it } from 'vitest';
import { formatDuration } from '../../src/util/format-duration.js';

describe('formatDuration', () => {
  it('keeps durations short and same-width within a unit', () => {
    expect(formatDuration(200)).toBe('200ms');
    expect(formatDuration(1_500)).toBe('1.5s');
    expect(formatDuration(12_345)).toBe('12s');
    expect(formatDuration(64_000)).toBe('1m04s');
    expect(formatDuration(600_000)).toBe('10m00s');
    expect(formatDuration(3_720_000)).toBe('1h02m');
    expect(formatDuration(5_400_000)).toBe('1h30m');
  });

  it('shows an unknown duration as "?"', () => {
    expect(formatDuration(-1)).toBe('?');
    expect(formatDuration(Number.NaN)).toBe('?');
  });
});
