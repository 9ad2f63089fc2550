import { describe, expect, it } from 'vitest';
import { createGrepTool } from '../../src/tools/grep.js';
import { makeTree } from './fixtures-tree.js';
import { errorOf, runTool, textOf } from './harness.js';

describe('grep', () => {
  it('prints file:line: text for matches, includes hidden files and skips .git', async () => {
    const root = makeTree({
      'a.ts': 'const foo = 1;\nbar\n',
      '.hidden/b.ts': 'foo again',
      '.git/config': 'foo in git',
    });
    const text = textOf(await runTool(createGrepTool({ cwd: root }), { pattern: 'foo' }));
    expect(text).toBe('.hidden/b.ts:1: foo again\na.ts:1: const foo = 1;');
  });

  it('respects root and nested .gitignore files, with negation', async () => {
    const root = makeTree({
      '.gitignore': 'dist/\n*.log\n!keep.log\n',
      'dist/out.js': 'needle',
      'app.log': 'needle',
      'keep.log': 'needle',
      'pkg/.gitignore': '/gen\n',
      'pkg/gen/x.ts': 'needle',
      'pkg/src/gen/y.ts': 'needle',
      'src/z.ts': 'needle',
    });
    const text = textOf(await runTool(createGrepTool({ cwd: root }), { pattern: 'needle' }));
    expect(text.split('\n')).toEqual(['keep.log:1: needle', 'pkg/src/gen/y.ts:1: needle', 'src/z.ts:1: needle']);
  });

  it('applies the root .gitignore when searching a subfolder', async () => {
    const root = makeTree({ '.gitignore': '*.gen.ts\n', 'src/a.ts': 'needle', 'src/b.gen.ts': 'needle' });
    const text = textOf(await runTool(createGrepTool({ cwd: root }), { pattern: 'needle', path: 'src' }));
    expect(text).toBe('a.ts:1: needle');
  });

  it('stops at the match limit and says how to get more', async () => {
    const root = makeTree({ 'a.txt': Array.from({ length: 10 }, (_, i) => `hit ${i}`).join('\n') });
    const r = await runTool(createGrepTool({ cwd: root }), { pattern: 'hit', limit: 3 });
    expect(textOf(r)).toBe(
      'a.txt:1: hit 0\na.txt:2: hit 1\na.txt:3: hit 2\n\n[3 matches limit reached. Use limit=6 for more, or refine pattern]',
    );
    expect(r.details).toEqual({ matchLimitReached: 3 });
  });

  it('cuts long lines at 500 chars and says so', async () => {
    const root = makeTree({ 'min.js': `x${'y'.repeat(900)}` });
    const text = textOf(await runTool(createGrepTool({ cwd: root }), { pattern: '^x' }));
    expect(text).toBe(
      `min.js:1: x${'y'.repeat(499)}... [truncated]\n\n[Some lines truncated to 500 chars. Use read tool to see full lines]`,
    );
  });

  it('shows context lines with file-line- prefixes and separates distant groups', async () => {
    const root = makeTree({ 'c.txt': 'a\nb\nMATCH\nd\ne\nf\ng\nMATCH\ni' });
    const text = textOf(await runTool(createGrepTool({ cwd: root }), { pattern: 'MATCH', context: 1 }));
    expect(text).toBe('c.txt-2- b\nc.txt:3: MATCH\nc.txt-4- d\n--\nc.txt-7- g\nc.txt:8: MATCH\nc.txt-9- i');
  });

  it('supports literal, ignoreCase, glob filters and a single file path', async () => {
    const root = makeTree({ 'a.ts': 'Call(x)', 'b.md': 'call(x)', 'sub/c.ts': 'CALL(X)' });
    const grep = createGrepTool({ cwd: root });
    expect(textOf(await runTool(grep, { pattern: 'call(x)', literal: true, ignoreCase: true, glob: '*.ts' }))).toBe(
      'a.ts:1: Call(x)\nsub/c.ts:1: CALL(X)',
    );
    expect(textOf(await runTool(grep, { pattern: 'all', glob: '!*.ts' }))).toBe('b.md:1: call(x)');
    expect(textOf(await runTool(grep, { pattern: 'CALL', path: 'sub/c.ts' }))).toBe('c.ts:1: CALL(X)');
  });

  it('says No matches found, skips binary files, and explains a bad regex', async () => {
    const root = makeTree({ 'a.txt': 'nothing here', 'bin.dat': Buffer.from([0x6e, 0x65, 0, 0x65, 0x64, 0x6c, 0x65]) });
    const grep = createGrepTool({ cwd: root });
    expect(textOf(await runTool(grep, { pattern: 'needle' }))).toBe('No matches found');
    expect(textOf(await runTool(grep, { pattern: 'ed' }))).toBe('No matches found');
    expect(await errorOf(grep, { pattern: '(unclosed' })).toMatch(
      /^Invalid regular expression "\(unclosed".*literal=true/,
    );
  });

  it('caps the output at the byte limit', async () => {
    const root = makeTree({ 'a.txt': Array.from({ length: 50 }, (_, i) => `match ${'z'.repeat(40)} ${i}`).join('\n') });
    const text = textOf(await runTool(createGrepTool({ cwd: root, maxBytes: 300 }), { pattern: 'match' }));
    expect(text).toMatch(/\n\n\[300B limit reached\]$/);
  });

  it('strips a UTF-8 byte order mark on line 1, so ^import matches there (as ripgrep does)', async () => {
    const root = makeTree({
      'bom.ts': '\uFEFFimport x from "y";\nimport z from "w";\n',
      'plain.ts': 'import a from "b";\n',
    });
    const text = textOf(await runTool(createGrepTool({ cwd: root }), { pattern: '^import' }));
    expect(text.split('\n')).toEqual([
      'bom.ts:1: import x from "y";',
      'bom.ts:2: import z from "w";',
      'plain.ts:1: import a from "b";',
    ]);
  });

  it('filters with extglobs and POSIX classes, and reports a malformed glob as a tool error', async () => {
    const root = makeTree({ 'a.ts': 'needle', 'b.js': 'needle', 'c.md': 'needle', '9.ts': 'needle' });
    const grep = createGrepTool({ cwd: root });
    expect(textOf(await runTool(grep, { pattern: 'needle', glob: '*.@(ts|js)' }))).toBe(
      '9.ts:1: needle\na.ts:1: needle\nb.js:1: needle',
    );
    expect(textOf(await runTool(grep, { pattern: 'needle', glob: '!(*.ts)' }))).toBe('b.js:1: needle\nc.md:1: needle');
    expect(textOf(await runTool(grep, { pattern: 'needle', glob: '[[:alpha:]].ts' }))).toBe('a.ts:1: needle');
    expect(await errorOf(grep, { pattern: 'needle', glob: '[z-a]*' })).toMatch(
      /invalid glob "\[z-a\]\*": a character range goes backwards \(z-a\)/,
    );
  });
});
