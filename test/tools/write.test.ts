import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { createWriteTool } from '../../src/tools/write.js';
import { runTool, tempDir, textOf } from './harness.js';

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
