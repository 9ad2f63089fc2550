import {
  chmodSync,
  linkSync,
  lstatSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { createWriteTool } from '../../src/tools/write.js';
import { errorOf, runTool, tempDir, textOf, tmpfsFolder } from './harness.js';

describe('write', () => {
  it('creates parent folders and reports the UTF-8 byte count', async () => {
    const dir = tempDir();
    const r = await runTool(createWriteTool({ cwd: dir }), { path: 'a/b/c.txt', content: 'héllo 😀' });
    expect(textOf(r)).toBe('Successfully wrote 11 bytes to a/b/c.txt');
    expect(readFileSync(join(dir, 'a/b/c.txt'), 'utf8')).toBe('héllo 😀');
  });

  it('overwrites an existing file', async () => {
    const dir = tempDir();
    const write = createWriteTool({ cwd: dir });
    await runTool(write, { path: 'x.txt', content: 'first version' });
    await runTool(write, { path: 'x.txt', content: 'v2' });
    expect(readFileSync(join(dir, 'x.txt'), 'utf8')).toBe('v2');
  });
});

describe('write: replacing a file safely', () => {
  it('keeps the mode of the file it replaces and leaves no temp file', async () => {
    const dir = tempDir();
    writeFileSync(join(dir, 'run.sh'), '#!/bin/sh\necho old\n');
    chmodSync(join(dir, 'run.sh'), 0o755);
    await runTool(createWriteTool({ cwd: dir }), { path: 'run.sh', content: '#!/bin/sh\necho new\n' });
    expect(statSync(join(dir, 'run.sh')).mode & 0o777).toBe(0o755);
    expect(readdirSync(dir)).toEqual(['run.sh']);
  });

  it('writes through a symlink: the link stays a link and its target gets the content', async () => {
    const dir = tempDir();
    writeFileSync(join(dir, 'target.txt'), 'old');
    symlinkSync('target.txt', join(dir, 'link.txt'));
    await runTool(createWriteTool({ cwd: dir }), { path: 'link.txt', content: 'new' });
    expect(lstatSync(join(dir, 'link.txt')).isSymbolicLink()).toBe(true);
    expect(readFileSync(join(dir, 'target.txt'), 'utf8')).toBe('new');
  });

  it('refuses to overwrite a file with another hard link (which may be outside the workspace); both links stay unchanged', async () => {
    const dir = tempDir();
    const outside = join(tempDir(), 'outside.txt');
    writeFileSync(outside, 'keep me');
    linkSync(outside, join(dir, 'linked.txt'));
    const msg = await errorOf(createWriteTool({ cwd: dir }), { path: 'linked.txt', content: 'overwritten' });
    expect(msg).toMatch(/^Refused to change linked\.txt: it has 2 hard links/);
    expect(readFileSync(outside, 'utf8')).toBe('keep me');
    expect(readFileSync(join(dir, 'linked.txt'), 'utf8')).toBe('keep me');
  });

  it('a full disk: a clear error, the original intact, no half-written temp file', async (ctx) => {
    const dir = tmpfsFolder('64k');
    if (!dir) return ctx.skip();
    writeFileSync(join(dir, 'f.txt'), 'original');
    const msg = await errorOf(createWriteTool({ cwd: dir }), { path: 'f.txt', content: 'x'.repeat(200_000) });
    expect(msg).toMatch(/^Could not write f\.txt: ENOSPC.*\. The file is unchanged\./);
    expect(readFileSync(join(dir, 'f.txt'), 'utf8')).toBe('original');
    expect(readdirSync(dir)).toEqual(['f.txt']);
  });

  it('refuses a path that is a folder with a clear error', async () => {
    const dir = tempDir();
    mkdirSync(join(dir, 'sub'));
    expect(await errorOf(createWriteTool({ cwd: dir }), { path: 'sub', content: 'x' })).toBe(
      'Could not write sub: it is a folder. Give the path of a file.',
    );
  });
});
