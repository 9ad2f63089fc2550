import { describe, expect, it } from 'vitest';
import { didYouMean, suggestionHint } from '../../src/recipe/suggest.js';

describe('did you mean, for recipe keys', () => {
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

  it('hints with an alias, or lists the valid names', () => {
    expect(suggestionHint('dependencies', ['needs'], 'keys')).toBe('did you mean "needs"?');
    expect(suggestionHint('zebra', ['a', 'b'], 'agents')).toBe('valid agents: a, b');
  });
});
