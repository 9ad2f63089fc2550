import { describe, expect, it } from 'vitest';
import { displayPath } from '../../src/util/display-path.js';

describe('displayPath', () => {
  it('is relative inside the base folder and absolute outside it', () => {
    expect(displayPath('/work/p/recipe.yaml', '/work/p')).toBe('recipe.yaml');
    expect(displayPath('/work/p/a/b.yaml', '/work/p')).toBe('a/b.yaml');
    expect(displayPath('/work/q/recipe.yaml', '/work/p')).toBe('/work/q/recipe.yaml');
    expect(displayPath('/work/p', '/work/p')).toBe('/work/p');
    expect(displayPath('/work/p..x/r.yaml', '/work/p')).toBe('/work/p..x/r.yaml');
  });
});
