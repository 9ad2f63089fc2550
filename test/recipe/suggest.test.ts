import { describe, expect, it } from 'vitest';
import { didYouMean, editDistance, suggestionHint } from '../../src/recipe/suggest.js';

describe('did you mean', () => {
  it('counts a swap of neighbours as one edit', () => {
    expect(editDistance('modle', 'model')).toBe(1);
    expect(editDistance('kitten', 'sitting')).toBe(3);
    expect(editDistance('abc', 'abc')).toBe(0);
  });

  it('suggests close names and keys other tools use, and nothing for far ones', () => {
    const keys = ['needs', 'prompt', 'run', 'for_each', 'timeout', 'system_file'];
    expect(didYouMean('promt', keys)).toBe('prompt');
    expect(didYouMean('depends_on', keys)).toBe('needs');
    expect(didYouMean('matrix', keys)).toBe('for_each');
    expect(didYouMean('timeout_sec', keys)).toBe('timeout');
    expect(didYouMean('file', keys)).toBe('system_file');
    expect(didYouMean('zebra', keys)).toBeUndefined();
    expect(didYouMean('file', ['prompt'])).toBeUndefined();
  });

  it('falls back to listing the valid names', () => {
    expect(suggestionHint('zebra', ['a', 'b'], 'agents')).toBe('valid agents: a, b');
    expect(suggestionHint('x', [], 'agents')).toBe('no agents is defined');
  });
});
