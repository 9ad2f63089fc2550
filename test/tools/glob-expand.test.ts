import { describe, expect, it } from 'vitest';
import { expandGlob } from '../../src/tools/glob-expand.js';
import { makeTree } from './fixtures-tree.js';

describe('expandGlob', () => {
  it('expands one level for repos/* and can keep folders only', async () => {
    const root = makeTree({ 'repos/a/x.ts': '', 'repos/b/y.ts': '', 'repos/file.txt': '', 'other/c/z.ts': '' });
    expect(await expandGlob('repos/*', { cwd: root })).toEqual(['repos/a', 'repos/b', 'repos/file.txt']);
    expect(await expandGlob('repos/*', { cwd: root, onlyDirectories: true })).toEqual(['repos/a', 'repos/b']);
    expect(await expandGlob('./repos/*/', { cwd: root, onlyDirectories: true })).toEqual(['repos/a', 'repos/b']);
  });

  it('expands ** across depths, skipping node_modules and .git', async () => {
    const root = makeTree({
      'a.ts': '',
      'src/b.ts': '',
      'src/deep/c.ts': '',
      'node_modules/m/d.ts': '',
      '.git/e.ts': '',
    });
    expect(await expandGlob('**/*.ts', { cwd: root })).toEqual(['a.ts', 'src/b.ts', 'src/deep/c.ts']);
  });

  it('returns a plain path only if it exists, and nothing for a missing base', async () => {
    const root = makeTree({ 'x.txt': '' });
    expect(await expandGlob('x.txt', { cwd: root })).toEqual(['x.txt']);
    expect(await expandGlob('y.txt', { cwd: root })).toEqual([]);
    expect(await expandGlob('missing/*', { cwd: root })).toEqual([]);
  });
});
