import { describe, expect, it } from 'vitest';
import { didYouMean, editDistance, suggestionHint } from '../../src/util/did-you-mean.js';

describe('did you mean', () => {
  it('counts a swap of neighbours as one edit', () => {
    expect(editDistance('modle', 'model')).toBe(1);
    expect(editDistance('kitten', 'sitting')).toBe(3);
    expect(editDistance('abc', 'abc')).toBe(0);
  });

  it('suggests close names, a truncated one, and nothing for far ones', () => {
    const keys = ['needs', 'prompt', 'run', 'for_each', 'timeout', 'system_file'];
    expect(didYouMean('promt', keys)).toBe('prompt');
    expect(didYouMean('timeout_sec', keys)).toBe('timeout');
    expect(didYouMean('zebra', keys)).toBeUndefined();
  });

  it('takes an alias only when its target is a candidate', () => {
    const aliases = { depends_on: 'needs' };
    expect(didYouMean('depends_on', ['needs', 'prompt'], aliases)).toBe('needs');
    expect(didYouMean('depends_on', ['prompt'], aliases)).toBeUndefined();
    expect(didYouMean('depends_on', ['needs', 'prompt'])).toBeUndefined();
    // Names of Object.prototype are not aliases.
    expect(didYouMean('constructor', ['needs'], aliases)).toBeUndefined();
  });

  it('falls back to listing the valid names', () => {
    expect(suggestionHint('zebra', ['a', 'b'], 'agents')).toBe('valid agents: a, b');
    expect(suggestionHint('x', [], 'agents')).toBe('no agents defined');
    expect(suggestionHint('depends_on', ['needs'], 'keys', { depends_on: 'needs' })).toBe('did you mean "needs"?');
  });
});
