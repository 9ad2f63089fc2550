// What the workspace transfer tests share: a scratch folder removed after the file's tests, fresh
// paths in it, writing a file at any depth, and packing that throws on a refusal.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterAll } from 'vitest';
import { type PackedWorkspace, packWorkspace } from '../../src/cluster/workspace-transfer.js';

/** A scratch folder for one test file (removed after its tests) and fresh names inside it. */
export function scratchFolder(prefix: string) {
  const scratch = mkdtempSync(join(tmpdir(), prefix));
  afterAll(() => rmSync(scratch, { recursive: true, force: true }));
  let counter = 0;
  /** A path that does not exist yet (unpack creates it). */
  const freshPath = (name: string): string => join(scratch, `${name}-${++counter}`);
  const freshDir = (name: string): string => {
    const d = freshPath(name);
    mkdirSync(d, { recursive: true });
    return d;
  };
  return { scratch, freshPath, freshDir };
}

export function write(root: string, rel: string, content: string | Buffer): void {
  mkdirSync(dirname(join(root, rel)), { recursive: true });
  writeFileSync(join(root, rel), content);
}

export async function pack(dir: string, opts?: { maxBytes?: number; exclude?: string[] }): Promise<PackedWorkspace> {
  const r = await packWorkspace(dir, opts);
  if (!r.ok) throw new Error(r.error);
  return r.packed;
}
