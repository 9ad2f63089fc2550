import { describe, expect, it } from 'vitest';
import { compileGlob, globStaticBase, hasGlobSyntax, matchGlob } from '../../src/tools/glob.js';

describe('glob', () => {
  it.each([
    ['*.ts', 'a.ts', true],
    ['*.ts', 'dir/a.ts', false],
    ['*.ts', '.hidden.ts', true],
    ['src/**/*.ts', 'src/a.ts', true],
    ['src/**/*.ts', 'src/x/y/a.ts', true],
    ['src/**/*.ts', 'lib/a.ts', false],
    ['**/*.md', 'README.md', true],
    ['**/*.md', 'docs/a/b.md', true],
    ['repos/*', 'repos/alpha', true],
    ['repos/*', 'repos/alpha/x', false],
    ['docs/**', 'docs/a/b', true],
    ['docs/**', 'docs', false],
    ['docs/**', 'docs/.env', true],
    ['**', 'any/thing', true],
    ['file?.txt', 'file1.txt', true],
    ['file?.txt', 'file10.txt', false],
    ['file?.txt', 'file/.txt', false],
    ['[abc].js', 'b.js', true],
    ['[!abc].js', 'b.js', false],
    ['[!abc].js', 'd.js', true],
    ['[a-c]x', 'bx', true],
    ['*.{ts,tsx}', 'a.tsx', true],
    ['*.{ts,tsx}', 'a.js', false],
    ['{src,test}/**/*.ts', 'test/a/b.ts', true],
    ['{a,{b,c}}.x', 'c.x', true],
    ['\\*.txt', '*.txt', true],
    ['\\*.txt', 'a.txt', false],
    ['a.b', 'aXb', false],
    ['(x)+', '(x)+', true],
  ])('%s matches %s: %s', (pattern, path, expected) => {
    expect(matchGlob(pattern, path)).toBe(expected);
  });

  it('supports case-insensitive matching', () => {
    expect(compileGlob('*.MD', { nocase: true }).test('readme.md')).toBe(true);
    expect(compileGlob('*.MD').test('readme.md')).toBe(false);
  });

  it('finds the static base and detects glob syntax', () => {
    expect(globStaticBase('src/a/*.ts')).toBe('src/a');
    expect(globStaticBase('repos/*')).toBe('repos');
    expect(globStaticBase('**/x')).toBe('');
    expect(hasGlobSyntax('plain/path.txt')).toBe(false);
    expect(hasGlobSyntax('a/{b,c}')).toBe(true);
  });
});
