import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { createReadTool } from '../../src/tools/read.js';
import { errorOf, runTool, tempDir, textOf } from './harness.js';

const numbered = (n: number): string => Array.from({ length: n }, (_, i) => `line ${i + 1}`).join('\n');
const PNG = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 13, 0x49, 0x48, 0x44, 0x52]);

function setup(files: Record<string, string | Buffer>) {
  const dir = tempDir();
  for (const [name, data] of Object.entries(files)) writeFileSync(join(dir, name), data);
  return { dir, tool: createReadTool({ cwd: dir }) };
}

describe('read', () => {
  it('returns a small file whole, without a notice', async () => {
    const { tool } = setup({ 'a.txt': 'hello\nworld\n' });
    const r = await runTool(tool, { path: 'a.txt' });
    expect(textOf(r)).toBe('hello\nworld');
    expect(r.details).toBeUndefined();
  });

  it('stops at 2000 lines and names the exact offset to continue from', async () => {
    const { tool } = setup({ 'big.txt': `${numbered(5000)}\n` });
    const r = await runTool(tool, { path: 'big.txt' });
    const text = textOf(r);
    expect(text.endsWith('line 2000\n\n[Showing lines 1-2000 of 5000. Use offset=2001 to continue.]')).toBe(true);
    const next = await runTool(tool, { path: 'big.txt', offset: 2001 });
    expect(textOf(next).startsWith('line 2001\n')).toBe(true);
    expect(textOf(next)).toContain('[Showing lines 2001-4000 of 5000. Use offset=4001 to continue.]');
  });

  it('stops at 50 KB and says the byte limit was hit', async () => {
    const line = 'x'.repeat(99);
    const { tool } = setup({ 'wide.txt': Array.from({ length: 1000 }, () => line).join('\n') });
    const text = textOf(await runTool(tool, { path: 'wide.txt' }));
    // 512 lines of 100 bytes (99 + newline) fit in 51200 bytes; the 513th would not.
    expect(text).toContain('[Showing lines 1-512 of 1000 (50.0KB limit). Use offset=513 to continue.]');
  });

  it('explains a first line over 50 KB and gives a sed command', async () => {
    const { tool } = setup({ 'min.js': `${'a'.repeat(60_000)}\nshort` });
    const text = textOf(await runTool(tool, { path: 'min.js' }));
    expect(text).toBe("[Line 1 is 58.6KB, exceeds the 50.0KB limit. Use bash: sed -n '1p' min.js | head -c 51200]");
  });

  it('refuses an offset beyond the end of the file', async () => {
    const { tool } = setup({ 'a.txt': numbered(100) });
    expect(await errorOf(tool, { path: 'a.txt', offset: 200 })).toBe(
      'Offset 200 is beyond the end of the file (100 lines)',
    );
  });

  it('applies offset and limit and says how many lines remain', async () => {
    const { tool } = setup({ 'a.txt': numbered(100) });
    const text = textOf(await runTool(tool, { path: 'a.txt', offset: 10, limit: 3 }));
    expect(text).toBe('line 10\nline 11\nline 12\n\n[88 more lines in file. Use offset=13 to continue.]');
    const tail = textOf(await runTool(tool, { path: 'a.txt', offset: 98, limit: 10 }));
    expect(tail).toBe('line 98\nline 99\nline 100');
  });

  it('detects images by their bytes, not their extension', async () => {
    const { tool } = setup({ 'photo.dat': PNG, 'fake.png': 'just text\n' });
    const img = await runTool(tool, { path: 'photo.dat' });
    expect(img.content[0]).toEqual({ type: 'text', text: 'Read image file [image/png]' });
    expect(img.content[1]).toEqual({ type: 'image', mimeType: 'image/png', data: PNG.toString('base64') });
    const fake = await runTool(tool, { path: 'fake.png' });
    expect(fake.content).toEqual([{ type: 'text', text: 'just text' }]);
  });

  it('refuses images above the size limit with a way forward', async () => {
    const dir = tempDir();
    writeFileSync(join(dir, 'big.gif'), Buffer.concat([Buffer.from('GIF89a'), Buffer.alloc(2000)]));
    const tool = createReadTool({ cwd: dir, imageMaxBytes: 1000 });
    expect(await errorOf(tool, { path: 'big.gif' })).toMatch(/above the 1000B limit for images.*smaller copy/);
  });

  it('refuses binary files (NUL bytes or invalid UTF-8)', async () => {
    const { tool } = setup({
      'a.bin': Buffer.from([0x41, 0x00, 0x42]),
      'b.bin': Buffer.from([0x41, 0xff, 0xfe, 0x42]),
    });
    expect(await errorOf(tool, { path: 'a.bin' })).toMatch(/looks like a binary file/);
    expect(await errorOf(tool, { path: 'b.bin' })).toMatch(/looks like a binary file/);
  });

  it('passes the fs error through with the path for a missing file', async () => {
    const { dir, tool } = setup({});
    const msg = await errorOf(tool, { path: 'nope.txt' });
    expect(msg).toContain('ENOENT');
    expect(msg).toContain(join(dir, 'nope.txt'));
  });

  it('keeps multibyte text intact at the byte limit', async () => {
    const line = '中文😀'.repeat(10); // 70 bytes
    const { tool } = setup({ 'cjk.txt': Array.from({ length: 2000 }, () => line).join('\n') });
    const text = textOf(await runTool(tool, { path: 'cjk.txt' }));
    expect(text).not.toContain('\uFFFD');
    const body = text.slice(0, text.indexOf('\n\n['));
    expect(body.split('\n').every((l) => l === line)).toBe(true);
    expect(Buffer.byteLength(body)).toBeLessThanOrEqual(51200);
  });

  it('aborts before touching the file when the signal has fired', async () => {
    const { tool } = setup({ 'a.txt': 'x' });
    const ac = new AbortController();
    ac.abort();
    expect(await errorOf(tool, { path: 'a.txt' }, { signal: ac.signal })).toBe('Operation aborted');
  });
});
