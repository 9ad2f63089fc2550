import { describe, expect, it } from 'vitest';
import { isRecord, stringOf } from '../../src/util/unknown-value.js';

describe('isRecord', () => {
  it('is true for plain objects only', () => {
    expect(isRecord({})).toBe(true);
    expect(isRecord({ a: 1 })).toBe(true);
    expect(isRecord(Object.create(null))).toBe(true);
    for (const v of [null, undefined, [], [1], 'x', 1, true]) expect(isRecord(v)).toBe(false);
  });
});

describe('stringOf', () => {
  it('gives a string back as it is (empty too) and undefined for anything else', () => {
    expect(stringOf('a b')).toBe('a b');
    expect(stringOf('')).toBe('');
    for (const v of [null, undefined, 1, {}, ['x']]) expect(stringOf(v)).toBeUndefined();
  });
});
