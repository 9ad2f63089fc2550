// Builds a file tree in a temp folder from a { path: content } map.
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { tempDir } from './harness.js';

export function makeTree(files: Record<string, string | Buffer>): string {
  const root = tempDir('tree-');
  for (const [rel, content] of Object.entries(files)) {
    const path = join(root, rel);
    mkdirSync(dirname(path), { recursive: true });
    if (rel.endsWith('/')) mkdirSync(path, { recursive: true });
    else writeFileSync(path, content);
  }
  return root;
}
