import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isDirectory, isFile } from '../../src/util/path-kind.js';

let root: string;

beforeAll(() => {
  root = mkdtempSync(join(tmpdir(), 'path-kind-'));
  writeFileSync(join(root, 'file.txt'), 'x');
  mkdirSync(join(root, 'folder'));
  symlinkSync(join(root, 'file.txt'), join(root, 'link-to-file'));
  symlinkSync(join(root, 'folder'), join(root, 'link-to-folder'));
  symlinkSync(join(root, 'gone'), join(root, 'dangling'));
});

afterAll(() => rmSync(root, { recursive: true, force: true }));

describe('isFile / isDirectory', () => {
  it('tell a file from a folder, following links', () => {
    expect([isFile(join(root, 'file.txt')), isDirectory(join(root, 'file.txt'))]).toEqual([true, false]);
    expect([isFile(join(root, 'folder')), isDirectory(join(root, 'folder'))]).toEqual([false, true]);
    expect([isFile(join(root, 'link-to-file')), isDirectory(join(root, 'link-to-file'))]).toEqual([true, false]);
    expect([isFile(join(root, 'link-to-folder')), isDirectory(join(root, 'link-to-folder'))]).toEqual([false, true]);
  });

  it('are false for a missing path, a dangling link and a path through a file', () => {
    for (const p of ['missing', 'dangling', 'file.txt/below']) {
      expect(isFile(join(root, p))).toBe(false);
      expect(isDirectory(join(root, p))).toBe(false);
    }
  });
});
