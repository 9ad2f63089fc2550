import {
  chmodSync,
  linkSync,
  lstatSync,
  readdirSync,
  readFileSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { createEditTool, type EditToolDetails } from '../../src/tools/edit.js';
import { errorOf, folderMadeReadOnly, runTool, tempDir, textOf } from './harness.js';

function setup(content: string | Buffer) {
  const dir = tempDir();
  const file = join(dir, 'f.txt');
  writeFileSync(file, content);
  return {
    dir,
    file,
    tool: createEditTool({ cwd: dir }),
    read: () => readFileSync(file, 'utf8'),
    bytes: () => readFileSync(file),
  };
}

describe('edit: locating the text', () => {
  it('replaces an exact unique match and reports a diff', async () => {
    const { tool, read } = setup('alpha\nbeta\ngamma\n');
    const r = await runTool(tool, { path: 'f.txt', edits: [{ oldText: 'beta', newText: 'BETA' }] });
    expect(textOf(r)).toBe('Successfully replaced text in f.txt.');
    expect(read()).toBe('alpha\nBETA\ngamma\n');
    const d = r.details as EditToolDetails;
    expect(d.firstChangedLine).toBe(2);
    expect(d.diff).toBe('--- a/f.txt\n+++ b/f.txt\n@@ -1,3 +1,3 @@\n alpha\n-beta\n+BETA\n gamma');
  });

  it('accepts the single oldText/newText form', async () => {
    const { tool, read } = setup('one two');
    await runTool(tool, { path: 'f.txt', oldText: 'two', newText: '2' });
    expect(read()).toBe('one 2');
  });

  it('says the text must match exactly and points at the most similar line', async () => {
    const { tool, read } = setup('function add(a, b) {\n  return a + b;\n}\n');
    const msg = await errorOf(tool, { path: 'f.txt', edits: [{ oldText: '  return a - b;', newText: 'x' }] });
    expect(msg).toMatch(/^Could not find the oldText of the edit in f\.txt\. It must match the file exactly/);
    expect(msg).toContain('The most similar line is 2: "  return a + b;"');
    expect(read()).toBe('function add(a, b) {\n  return a + b;\n}\n');
  });

  it('refuses duplicates and lists their lines', async () => {
    const { tool } = setup('x = 1\ny = 2\nx = 1\nz\nx = 1\n');
    const msg = await errorOf(tool, { path: 'f.txt', edits: [{ oldText: 'x = 1', newText: 'x = 9' }] });
    expect(msg).toMatch(/^Found 3 occurrences of the oldText of the edit in f\.txt at lines 1, 3, 5\./);
  });

  it('refuses duplicates that only appear after normalization', async () => {
    const { tool } = setup('say “hi”  \nsay "hi"\t\n');
    const msg = await errorOf(tool, { path: 'f.txt', edits: [{ oldText: 'say "hi"\n', newText: 'x' }] });
    expect(msg).toMatch(
      /Found 2 occurrences .* \(after normalizing whitespace, quotes and line endings\) at lines 1, 2\./,
    );
  });

  it('refuses duplicates that only appear after CRLF normalization', async () => {
    const { tool } = setup('a\r\nb\r\na\r\nb\r\n');
    expect(await errorOf(tool, { path: 'f.txt', edits: [{ oldText: 'a\nb', newText: 'c' }] })).toMatch(
      /Found 2 occurrences .* at lines 1, 3\./,
    );
  });

  it.each([
    [
      'trailing whitespace',
      'const a = 1;   \nconst b = 2;\n',
      'const a = 1;\nconst b = 2;',
      'const a = 10;\nconst b = 20;',
      'const a = 10;\nconst b = 20;\n',
    ],
    ['smart single quotes', 'it’s ‘here’\n', "it's 'here'", 'gone', 'gone\n'],
    ['smart double quotes', 'say “hello”\n', 'say "hello"', 'said', 'said\n'],
    ['dashes', 'range 1–5 and 6—9 and −1\n', 'range 1-5 and 6-9 and -1', 'ok', 'ok\n'],
    ['NBSP and special spaces', 'a\u00a0b\u2003c\u3000d\n', 'a b c d', 'abcd', 'abcd\n'],
    ['NFKC compatibility forms', 'ｆｕｌｌ ﬁle①\n', 'full file1', 'x', 'x\n'],
  ])('matches despite %s and splices at the original position', async (_name, file, oldText, newText, expected) => {
    const { tool, read } = setup(`keep before\n${file}keep after\n`);
    const r = await runTool(tool, { path: 'f.txt', edits: [{ oldText, newText }] });
    expect(read()).toBe(`keep before\n${expected}keep after\n`);
    expect((r.details as EditToolDetails).fuzzyEdits).toEqual([1]);
  });

  it('prefers an exact match over fuzzy look-alikes', async () => {
    const { tool, read } = setup('say “hi”\nsay "hi"\n');
    await runTool(tool, { path: 'f.txt', edits: [{ oldText: 'say "hi"', newText: 'exact' }] });
    expect(read()).toBe('say “hi”\nexact\n');
  });

  it('keeps every byte outside the fuzzy match identical', async () => {
    const before = 'top “quoted”\u00a0line   \r\nx\u2014y  \nmid ’s\ttail  \n';
    const { tool, bytes } = setup(`${before}target  line  \nafter “q”\u00a0 \t\r\n`);
    await runTool(tool, { path: 'f.txt', edits: [{ oldText: 'target  line', newText: 'T' }] });
    expect(bytes().equals(Buffer.from(`${before}T  \nafter “q”\u00a0 \t\r\n`))).toBe(true);
    await runTool(tool, { path: 'f.txt', edits: [{ oldText: 'x-y\nmid', newText: 'Z' }] });
    expect(bytes().toString('utf8')).toBe('top “quoted”\u00a0line   \r\nZ ’s\ttail  \nT  \nafter “q”\u00a0 \t\r\n');
  });
});

describe('edit: preserving the file format', () => {
  it('keeps CRLF line endings, including in the inserted text', async () => {
    const { tool, bytes } = setup('one\r\ntwo\r\nthree\r\n');
    await runTool(tool, { path: 'f.txt', edits: [{ oldText: 'two\nthree', newText: 'TWO\nTHREE\nFOUR' }] });
    expect(bytes().toString('utf8')).toBe('one\r\nTWO\r\nTHREE\r\nFOUR\r\n');
  });

  it('keeps a UTF-8 byte order mark', async () => {
    const { tool, bytes } = setup(Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from('hello\nworld\n')]));
    await runTool(tool, { path: 'f.txt', edits: [{ oldText: 'hello', newText: 'bye' }] });
    expect([...bytes().subarray(0, 3)]).toEqual([0xef, 0xbb, 0xbf]);
    expect(bytes().subarray(3).toString('utf8')).toBe('bye\nworld\n');
  });
});

describe('edit: refusals and multiple edits', () => {
  it('rejects an identical replacement', async () => {
    const { tool } = setup('abc');
    expect(await errorOf(tool, { path: 'f.txt', edits: [{ oldText: 'b', newText: 'b' }] })).toMatch(
      /are identical, so nothing would change in f\.txt/,
    );
  });

  it('rejects a fuzzy replacement that produces identical content', async () => {
    const { tool } = setup('it’s\n');
    expect(await errorOf(tool, { path: 'f.txt', edits: [{ oldText: "it's", newText: 'it’s' }] })).toMatch(
      /^No changes made to f\.txt/,
    );
  });

  it('rejects an empty oldText', async () => {
    const { tool } = setup('abc');
    expect(await errorOf(tool, { path: 'f.txt', edits: [{ oldText: '', newText: 'x' }] })).toMatch(
      /oldText of the edit is empty/,
    );
  });

  it('applies several edits located in the original file', async () => {
    const { tool, read } = setup('a1\nb2\nc3\nd4\n');
    const r = await runTool(tool, {
      path: 'f.txt',
      edits: [
        { oldText: 'c3', newText: 'C3\nextra' },
        { oldText: 'a1', newText: 'A1' },
      ],
    });
    expect(textOf(r)).toBe('Successfully applied 2 edits to f.txt.');
    expect(read()).toBe('A1\nb2\nC3\nextra\nd4\n');
    expect((r.details as EditToolDetails).firstChangedLine).toBe(1);
  });

  it('rejects overlapping edits and leaves the file alone', async () => {
    const { tool, read } = setup('one two three');
    const msg = await errorOf(tool, {
      path: 'f.txt',
      edits: [
        { oldText: 'one two', newText: 'x' },
        { oldText: 'two three', newText: 'y' },
      ],
    });
    expect(msg).toMatch(/^Edits 1 and 2 overlap in f\.txt/);
    expect(read()).toBe('one two three');
  });

  it('names which edit failed when one of several is not found', async () => {
    const { tool, read } = setup('abc\n');
    const msg = await errorOf(tool, {
      path: 'f.txt',
      edits: [
        { oldText: 'abc', newText: 'x' },
        { oldText: 'zzz', newText: 'y' },
      ],
    });
    expect(msg).toMatch(/oldText of edit 2 of 2/);
    expect(read()).toBe('abc\n');
  });

  it('reports a missing file with a hint to use write', async () => {
    const { tool } = setup('');
    expect(await errorOf(tool, { path: 'nope.txt', edits: [{ oldText: 'a', newText: 'b' }] })).toMatch(
      /^File not found: nope\.txt .*Use write/,
    );
  });
});

describe('edit: replacing the file safely', () => {
  it('keeps an executable script executable', async () => {
    const { dir, file, tool, read } = setup('#!/bin/sh\necho old\n');
    chmodSync(file, 0o755);
    await runTool(tool, { path: 'f.txt', edits: [{ oldText: 'old', newText: 'new' }] });
    expect(read()).toBe('#!/bin/sh\necho new\n');
    expect(statSync(file).mode & 0o777).toBe(0o755);
    expect(readdirSync(dir)).toEqual(['f.txt']);
  });

  it('edits through a symlink: the link stays a link and its target changes', async () => {
    const { dir, tool, read } = setup('alpha\n');
    symlinkSync('f.txt', join(dir, 'link.txt'));
    await runTool(tool, { path: 'link.txt', edits: [{ oldText: 'alpha', newText: 'beta' }] });
    expect(lstatSync(join(dir, 'link.txt')).isSymbolicLink()).toBe(true);
    expect(read()).toBe('beta\n');
  });

  it('refuses a file with another hard link (which may be outside the workspace) and says what to do; both links stay unchanged', async () => {
    const outsideDir = tempDir();
    const outside = join(outsideDir, 'secret.txt');
    writeFileSync(outside, 'token=1\n');
    const { dir, tool } = setup('unused');
    linkSync(outside, join(dir, 'linked.txt'));
    const msg = await errorOf(tool, { path: 'linked.txt', edits: [{ oldText: 'token=1', newText: 'token=2' }] });
    expect(msg).toMatch(
      /^Refused to change linked\.txt: it has 2 hard links, and another link may be a file outside the workspace/,
    );
    expect(msg).toContain('cp linked.txt linked.txt.copy && mv linked.txt.copy linked.txt');
    expect(readFileSync(outside, 'utf8')).toBe('token=1\n');
    expect(readFileSync(join(dir, 'linked.txt'), 'utf8')).toBe('token=1\n');
    expect(statSync(outside).nlink).toBe(2);
  });

  it('a folder that cannot be written: a clear error, the original intact, no temp file', async (ctx) => {
    const folder = folderMadeReadOnly();
    if (!folder) return ctx.skip();
    writeFileSync(join(folder.dir, 'f.txt'), 'alpha\n');
    folder.makeReadOnly();
    const msg = await errorOf(createEditTool({ cwd: folder.dir }), {
      path: 'f.txt',
      edits: [{ oldText: 'alpha', newText: 'beta' }],
    });
    expect(msg).toMatch(
      /^Could not write f\.txt: (EROFS|EACCES).*\. The file is unchanged\. Files are replaced through a temporary file in the same folder/,
    );
    expect(readFileSync(join(folder.dir, 'f.txt'), 'utf8')).toBe('alpha\n');
    expect(readdirSync(folder.dir)).toEqual(['f.txt']);
  });
});
