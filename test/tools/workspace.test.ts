import { mkdirSync, readFileSync, symlinkSync, writeFileSync, existsSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { createEditTool } from '../../src/tools/edit.js';
import { createReadTool } from '../../src/tools/read.js';
import { createWriteTool } from '../../src/tools/write.js';
import { Workspace, expandPath } from '../../src/tools/workspace.js';
import { errorOf, runTool, tempDir, textOf } from './harness.js';

function setup() {
  const outside = tempDir('outside-');
  writeFileSync(join(outside, 'secret.txt'), 'secret');
  const root = tempDir('root-');
  mkdirSync(join(root, 'sub'));
  writeFileSync(join(root, 'sub', 'a.txt'), 'inside');
  writeFileSync(join(root, 'top.txt'), 'top');
  return { root, outside };
}

describe('workspace confinement', () => {
  it('refuses ../x with a message naming the workspace', async () => {
    const { root } = setup();
    const read = createReadTool({ cwd: join(root, 'sub'), root });
    expect(await errorOf(read, { path: '../../x' })).toBe(
      `Path "../../x" is outside the workspace ${root}; tools may only use files under it. Use a path inside the workspace (relative paths start at ${join(root, 'sub')}).`,
    );
  });

  it('refuses an absolute path outside, such as /etc/passwd', async () => {
    const { root } = setup();
    expect(await errorOf(createReadTool({ cwd: root }), { path: '/etc/passwd' })).toMatch(
      /^Path "\/etc\/passwd" is outside the workspace/,
    );
  });

  it('refuses a symlink that points outside', async () => {
    const { root, outside } = setup();
    symlinkSync(join(outside, 'secret.txt'), join(root, 'link.txt'));
    const msg = await errorOf(createReadTool({ cwd: root }), { path: 'link.txt' });
    expect(msg).toMatch(/^Path "link\.txt" resolves to .*secret\.txt through a symbolic link, outside the workspace/);
  });

  it('refuses a new file under a symlinked parent folder that points outside', async () => {
    const { root, outside } = setup();
    symlinkSync(outside, join(root, 'linked-dir'));
    const msg = await errorOf(createWriteTool({ cwd: root }), { path: 'linked-dir/new/file.txt', content: 'x' });
    expect(msg).toMatch(/through a symbolic link, outside the workspace/);
    expect(existsSync(join(outside, 'new'))).toBe(false);
  });

  it('refuses writing through a dangling symlink whose target is outside', async () => {
    const { root, outside } = setup();
    symlinkSync(join(outside, 'created-by-write.txt'), join(root, 'dangling'));
    expect(await errorOf(createWriteTool({ cwd: root }), { path: 'dangling', content: 'x' })).toMatch(
      /outside the workspace/,
    );
    expect(existsSync(join(outside, 'created-by-write.txt'))).toBe(false);
  });

  it('allows a path with .. that stays inside the root', async () => {
    const { root } = setup();
    const r = await runTool(createReadTool({ cwd: join(root, 'sub'), root }), { path: '../sub/../top.txt' });
    expect(textOf(r)).toBe('top');
  });

  it('allows a symlink whose target is inside the root', async () => {
    const { root } = setup();
    symlinkSync(join(root, 'sub'), join(root, 'alias'));
    expect(textOf(await runTool(createReadTool({ cwd: root }), { path: 'alias/a.txt' }))).toBe('inside');
  });

  it('allows everything with allowOutside', async () => {
    const { root, outside } = setup();
    const r = await runTool(createReadTool({ cwd: root, allowOutside: true }), { path: join(outside, 'secret.txt') });
    expect(textOf(r)).toBe('secret');
  });

  it('refuses writes outside the write scope, naming the allowed globs', async () => {
    const { root } = setup();
    const opts = { cwd: root, writeScope: ['docs/**', '*.md'] };
    const write = createWriteTool(opts);
    expect(textOf(await runTool(write, { path: 'docs/a/b.txt', content: 'ok' }))).toBe(
      'Successfully wrote 2 bytes to docs/a/b.txt',
    );
    expect(textOf(await runTool(write, { path: 'README.md', content: 'ok' }))).toMatch(/^Successfully wrote/);
    const msg = await errorOf(write, { path: 'src/x.ts', content: 'no' });
    expect(msg).toBe(
      `Path "src/x.ts" is outside this agent's write scope; it may only write files matching "docs/**", "*.md" (relative to ${root}). Choose a path inside the scope, or report that the change is needed elsewhere.`,
    );
    expect(await errorOf(createEditTool(opts), { path: 'top.txt', oldText: 'top', newText: 'x' })).toMatch(
      /outside this agent's write scope/,
    );
    expect(readFileSync(join(root, 'top.txt'), 'utf8')).toBe('top');
    // A link inside the scope that leads out of it does not widen the scope.
    symlinkSync(join(root, 'top.txt'), join(root, 'docs', 'link.txt'));
    expect(await errorOf(write, { path: 'docs/link.txt', content: 'no' })).toMatch(/outside this agent's write scope/);
    expect(readFileSync(join(root, 'top.txt'), 'utf8')).toBe('top');
    // Reading is not limited by the write scope.
    expect(textOf(await runTool(createReadTool(opts), { path: 'top.txt' }))).toBe('top');
  });
});

describe('expandPath', () => {
  it('strips a leading @, expands ~ and normalizes exotic spaces', () => {
    expect(expandPath('@src/a.ts')).toBe('src/a.ts');
    expect(expandPath('~')).toBe(homedir());
    expect(expandPath('~/x')).toBe(join(homedir(), 'x'));
    expect(expandPath('a\u00a0b\u202fc')).toBe('a b c');
  });

  it('resolves relative to cwd and reports the path relative to the root', () => {
    const { root } = setup();
    const ws = new Workspace({ cwd: join(root, 'sub'), root });
    const abs = ws.resolve('@x.txt');
    expect(abs).toBe(join(root, 'sub', 'x.txt'));
    expect(ws.relativeToRoot(abs)).toBe('sub/x.txt');
  });
});
