// The one glob engine against the real thing: each pattern is expanded by bash (globstar,
// extglob, nullglob; with and without dotglob) over the same tree and by our two walkers (the
// fan-out walker hides dotfiles like bash, the tools walker includes them like dotglob).
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { expandGlob as expandFanOut } from '../../src/recipe/glob.js';
import { expandGlob as expandTools } from '../../src/tools/glob-expand.js';
import { compileGlob, globError } from '../../src/tools/glob.js';

const FILES = [
  'a.txt',
  'b.txt',
  'c.txt',
  'axb',
  'ayb',
  'a-b',
  'lit*star',
  'notes (copy).md',
  'A1',
  '9z',
  'README.md',
  'f1.log',
  'f2.log',
  'f5.log',
  '.env',
  'src/a.ts',
  'src/b.js',
  'src/x/y/c.ts',
  'src/x/d.md',
  'docs/r.md',
  '.hidden/h.ts',
];

const dir = mkdtempSync(join(tmpdir(), 'orchestrate-glob-semantics-'));
for (const f of FILES) {
  mkdirSync(join(dir, f, '..'), { recursive: true });
  writeFileSync(join(dir, f), '');
}
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** What bash expands the pattern to (existing paths only: brace expansion also makes words). */
function bash(pattern: string, dotglob: boolean): string[] {
  const opts = ['-O', 'extglob', '-O', 'globstar', '-O', 'nullglob', ...(dotglob ? ['-O', 'dotglob'] : [])];
  const out = execFileSync('bash', [...opts, '-c', `printf '%s\\n' ${pattern}`], { cwd: dir, encoding: 'utf8' });
  return [...new Set(out.split('\n').filter((l) => l !== '' && existsSync(join(dir, l))))].sort();
}

// [our pattern, the same pattern written for a bash command line]
const PATTERNS: [string, string][] = [
  ['*', '*'],
  ['src/**/*.ts', 'src/**/*.ts'],
  ['**/*.md', '**/*.md'],
  ['**/*.ts', '**/*.ts'],
  ['a[!x]b', 'a[!x]b'],
  ['a[^x]b', 'a[^x]b'],
  ['[a-c].txt', '[a-c].txt'],
  ['a[-]b', 'a[-]b'],
  ['{a,{b,c}}.txt', '{a,{b,c}}.txt'],
  ['lit\\*star', 'lit\\*star'],
  ['notes (copy).md', 'notes\\ \\(copy\\).md'],
  ['src/*.@(ts|js)', 'src/*.@(ts|js)'],
  ['src/!(*.ts)', 'src/!(*.ts)'],
  ['+(a|b).txt', '+(a|b).txt'],
  ['[[:digit:]]*', '[[:digit:]]*'],
  ['[[:upper:]]*', '[[:upper:]]*'],
  ['f{1..3}.log', 'f{1..3}.log'],
  ['f?.log', 'f?.log'],
  ['src/*/*', 'src/*/*'],
  ['.*', '.*'],
];

describe('glob semantics match bash', () => {
  it.each(PATTERNS)('%s (hidden names only when written with a dot)', (ours, theirs) => {
    expect(expandFanOut(dir, ours, 'any')).toEqual(bash(theirs, false));
  });

  it.each(PATTERNS.filter(([p]) => p !== '.*'))(
    '%s (tools: hidden names included, like dotglob)',
    async (ours, theirs) => {
      expect(await expandTools(ours, { cwd: dir })).toEqual(bash(theirs, true));
    },
  );
});

describe('malformed globs are errors, not silent no-matches', () => {
  it.each([
    ['[z-a]', /character range goes backwards \(z-a\)/],
    ['projects/[z-a]*', /character range goes backwards/],
    ['[abc', /a "\[" is never closed; escape it \(\\\[\)/],
    ['{a,b', /a "\{" is never closed/],
    ['@(a|b', /a "\(" is never closed/],
    ['[[:alfa:]]', /unknown character class \[:alfa:\]/],
    ['a\\', /lone backslash/],
  ])('%s', (pattern, reason) => {
    expect(globError(pattern)).toMatch(reason);
    expect(() => compileGlob(pattern)).toThrow(/^invalid glob/);
  });

  it('accepts what bash accepts', () => {
    for (const p of ['*', 'a/**', '{a,{b,c}}', '\\*', '[]]', '!(x)', '[[:alpha:]]*', 'notes (copy).md', 'a|b'])
      expect(globError(p)).toBeUndefined();
  });

  it('"dir/**" names what is inside dir, as in git', () => {
    expect(compileGlob('docs/**').test('docs')).toBe(false);
    expect(compileGlob('docs/**').test('docs/a/b.md')).toBe(true);
  });
});
