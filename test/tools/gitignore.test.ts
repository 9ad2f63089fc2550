import { describe, expect, it } from 'vitest';
import { ignoreFileAt, isIgnored } from '../../src/tools/gitignore.js';

const check = (rules: string, path: string, isDir = false, base = ''): boolean =>
  isIgnored([ignoreFileAt(base, rules)], path, isDir);

describe('gitignore rules', () => {
  it('matches a bare name at any depth', () => {
    expect(check('*.log', 'a.log')).toBe(true);
    expect(check('*.log', 'deep/er/a.log')).toBe(true);
    expect(check('*.log', 'a.txt')).toBe(false);
  });

  it('anchors patterns with a slash to the ignore file folder', () => {
    expect(check('/build', 'build', true)).toBe(true);
    expect(check('/build', 'sub/build', true)).toBe(false);
    expect(check('doc/*.txt', 'doc/a.txt')).toBe(true);
    expect(check('doc/*.txt', 'x/doc/a.txt')).toBe(false);
  });

  it('applies a trailing slash to folders only', () => {
    expect(check('out/', 'out', true)).toBe(true);
    expect(check('out/', 'out', false)).toBe(false);
  });

  it('re-includes with negation, last rule wins', () => {
    expect(check('*.log\n!keep.log', 'keep.log')).toBe(false);
    expect(check('*.log\n!keep.log', 'drop.log')).toBe(true);
    expect(check('!keep.log\n*.log', 'keep.log')).toBe(true);
  });

  it('handles ** in the middle and at the start', () => {
    expect(check('a/**/z', 'a/z')).toBe(true);
    expect(check('a/**/z', 'a/b/c/z')).toBe(true);
    expect(check('**/cache', 'x/y/cache', true)).toBe(true);
  });

  it('skips comments and blanks, honours escapes', () => {
    expect(check('# comment\n\n\\#file', '#file')).toBe(true);
    expect(check('# comment', '# comment')).toBe(false);
    expect(check('\\!bang', '!bang')).toBe(true);
  });

  it('matches rules of a nested file relative to its folder only', () => {
    expect(check('/gen', 'pkg/gen', true, 'pkg')).toBe(true);
    expect(check('/gen', 'gen', true, 'pkg')).toBe(false);
  });

  it('lets an inner file override an outer one', () => {
    const files = [ignoreFileAt('', '*.log'), ignoreFileAt('pkg', '!important.log')];
    expect(isIgnored(files, 'pkg/important.log', false)).toBe(false);
    expect(isIgnored(files, 'pkg/other.log', false)).toBe(true);
    expect(isIgnored(files, 'important.log', false)).toBe(true);
  });
});
