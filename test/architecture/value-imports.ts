// The value imports of a source file under src/ (what loading it loads), for the architecture
// tests that walk the import graph: cycles, and what an agent thread's start-up loads.
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';

export function* sourceFiles(dir: string): Generator<string> {
  for (const name of readdirSync(dir)) {
    const p = join(dir, name);
    if (statSync(p).isDirectory()) yield* sourceFiles(p);
    else if (name.endsWith('.ts') && !name.endsWith('.d.ts')) yield p;
  }
}

// `import type {…}`, and `import {type A, type B}` where every name is a type, load nothing.
const STATIC_IMPORT_RE = /^(?:import|export)\s+(type\s+)?([^;]*?)\s*from\s*'(\.[^']+)';/gm;

export function valueImports(file: string): string[] {
  const deps: string[] = [];
  for (const m of readFileSync(file, 'utf8').matchAll(STATIC_IMPORT_RE)) {
    if (m[1]) continue;
    const names = (m[2] ?? '').trim();
    const braced = /^\{([\s\S]*)\}$/.exec(names);
    const list = braced?.[1]
      ?.split(',')
      .map((n) => n.trim())
      .filter(Boolean);
    if (list && list.length > 0 && list.every((n) => n.startsWith('type '))) continue;
    deps.push(resolve(dirname(file), (m[3] ?? '').replace(/\.js$/, '.ts')));
  }
  return deps;
}
