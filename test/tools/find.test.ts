import { describe, expect, it } from 'vitest';
import { createFindTool } from '../../src/tools/find.js';
import { makeTree } from './fixtures-tree.js';
import { errorOf, runTool, textOf } from './harness.js';

describe('find', () => {
  it('matches names at any depth, includes hidden files, marks folders, skips .git', async () => {
    const root = makeTree({
      'a.ts': '',
      'src/b.ts': '',
      '.config/c.ts': '',
      'src/d.js': '',
      '.git/e.ts': '',
      'x.ts/': '',
    });
    const text = textOf(await runTool(createFindTool({ cwd: root }), { pattern: '*.ts' }));
    expect(text).toBe('.config/c.ts\na.ts\nsrc/b.ts\nx.ts/');
  });

  it('matches against the path when the pattern has a slash', async () => {
    const root = makeTree({ 'src/a/b.test.ts': '', 'src/c.test.ts': '', 'test/d.test.ts': '' });
    const text = textOf(await runTool(createFindTool({ cwd: root }), { pattern: 'src/**/*.test.ts' }));
    expect(text).toBe('src/a/b.test.ts\nsrc/c.test.ts');
  });

  it('respects .gitignore files', async () => {
    const root = makeTree({
      '.gitignore': 'node_modules\nbuild/\n',
      'node_modules/m/index.js': '',
      'build/x.js': '',
      'lib/y.js': '',
      'lib/.gitignore': 'z.js',
      'lib/z.js': '',
    });
    expect(textOf(await runTool(createFindTool({ cwd: root }), { pattern: '*.js' }))).toBe('lib/y.js');
  });

  it('stops at the result limit and says how to get more', async () => {
    const root = makeTree(Object.fromEntries(Array.from({ length: 8 }, (_, i) => [`f${i}.txt`, ''])));
    const r = await runTool(createFindTool({ cwd: root }), { pattern: '*.txt', limit: 3 });
    expect(textOf(r)).toBe(
      'f0.txt\nf1.txt\nf2.txt\n\n[3 results limit reached. Use limit=6 for more, or refine pattern]',
    );
    expect(r.details).toEqual({ resultLimitReached: 3 });
  });

  it('does not claim a limit when exactly the limit matched', async () => {
    const root = makeTree({ 'a.txt': '', 'b.txt': '' });
    expect(textOf(await runTool(createFindTool({ cwd: root }), { pattern: '*.txt', limit: 2 }))).toBe('a.txt\nb.txt');
  });

  it('says when nothing matched and refuses a file as the search folder', async () => {
    const root = makeTree({ 'a.txt': '' });
    const find = createFindTool({ cwd: root });
    expect(textOf(await runTool(find, { pattern: '*.rs' }))).toBe('No files found matching pattern');
    expect(await errorOf(find, { pattern: '*', path: 'a.txt' })).toMatch(/^Not a directory: a\.txt/);
  });

  it('reports a malformed glob as a tool error instead of matching nothing', async () => {
    const root = makeTree({ 'a.txt': '' });
    const find = createFindTool({ cwd: root });
    expect(await errorOf(find, { pattern: 'projects/[z-a]*' })).toMatch(
      /invalid glob "projects\/\[z-a\]\*": a character range goes backwards/,
    );
    expect(await errorOf(find, { pattern: '{a,b' })).toMatch(/a "\{" is never closed; escape it \(\\\{\)/);
    expect(await errorOf(find, { pattern: '[[:alfa:]]' })).toMatch(/unknown character class \[:alfa:\]/);
  });

  it('finds with extglobs, negated classes and literal parentheses', async () => {
    const root = makeTree({ 'a.ts': '', 'b.js': '', 'notes (copy).md': '', 'notes c.md': '', axb: '', ayb: '' });
    const find = createFindTool({ cwd: root });
    expect(textOf(await runTool(find, { pattern: '*.@(ts|js)' }))).toBe('a.ts\nb.js');
    expect(textOf(await runTool(find, { pattern: 'notes (copy).md' }))).toBe('notes (copy).md');
    expect(textOf(await runTool(find, { pattern: 'a[!x]b' }))).toBe('ayb');
  });
});
