import { describe, expect, it } from 'vitest';
import { createLsTool } from '../../src/tools/ls.js';
import { makeTree } from './fixtures-tree.js';
import { errorOf, runTool, textOf } from './harness.js';

describe('ls', () => {
  it('lists dotfiles, sorts case-insensitively and marks folders', async () => {
    const root = makeTree({ 'b.txt': '', 'A.txt': '', '.env': '', 'src/x.ts': '', 'Zed/': '' });
    const r = await runTool(createLsTool({ cwd: root }), {});
    expect(textOf(r)).toBe('.env\nA.txt\nb.txt\nsrc/\nZed/');
  });

  it('stops at the entry limit and says how to see more', async () => {
    const files = Object.fromEntries(Array.from({ length: 12 }, (_, i) => [`f${String(i).padStart(2, '0')}`, '']));
    const root = makeTree(files);
    const r = await runTool(createLsTool({ cwd: root }), { limit: 5 });
    expect(textOf(r)).toBe('f00\nf01\nf02\nf03\nf04\n\n[5 entries limit reached (12 in total). Use limit=10 for more]');
    expect(r.details).toEqual({ entryLimitReached: 5 });
  });

  it('caps the listing at the byte limit', async () => {
    const files = Object.fromEntries(Array.from({ length: 40 }, (_, i) => [`${'n'.repeat(60)}${i}`, '']));
    const root = makeTree(files);
    const r = await runTool(createLsTool({ cwd: root, maxBytes: 500 }), {});
    expect(textOf(r)).toMatch(/\n\n\[500B limit reached\]$/);
    expect(Buffer.byteLength(textOf(r).split('\n\n[')[0] as string)).toBeLessThanOrEqual(500);
  });

  it('says when a folder is empty, missing or a file', async () => {
    const root = makeTree({ 'empty/': '', 'file.txt': 'x' });
    const ls = createLsTool({ cwd: root });
    expect(textOf(await runTool(ls, { path: 'empty' }))).toBe('(empty directory)');
    expect(await errorOf(ls, { path: 'missing' })).toBe(`Path not found: ${root}/missing`);
    expect(await errorOf(ls, { path: 'file.txt' })).toMatch(/^Not a directory: /);
  });
});
