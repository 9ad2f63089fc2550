// No value-import cycle under src/. A cycle makes a module's exports undefined while it loads
// whenever a test or entry point happens to enter the cycle from another file: schema.ts ->
// publish-spec.ts -> duration.ts -> schema.ts once made five recipe test files fail to load at
// all ("Cannot read properties of undefined (reading 'optional')"), depending only on which file
// a test imported first. Type-only imports are erased at compile time and may form cycles.
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';

const SRC = resolve(import.meta.dirname, '../../src');

function* sourceFiles(dir: string): Generator<string> {
  for (const name of readdirSync(dir)) {
    const p = join(dir, name);
    if (statSync(p).isDirectory()) yield* sourceFiles(p);
    else if (name.endsWith('.ts') && !name.endsWith('.d.ts')) yield p;
  }
}

// `import type {…}`, and `import {type A, type B}` where every name is a type, load nothing.
const STATIC_IMPORT_RE = /^(?:import|export)\s+(type\s+)?([^;]*?)\s*from\s*'(\.[^']+)';/gm;

function valueImports(file: string): string[] {
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

/** Each strongly connected group of two or more files, as paths relative to src/. */
export function importCycles(srcRoot: string): string[][] {
  const graph = new Map<string, string[]>();
  for (const file of sourceFiles(srcRoot)) graph.set(file, valueImports(file));
  // Tarjan's algorithm.
  let next = 0;
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const cycles: string[][] = [];
  const visit = (v: string): void => {
    index.set(v, next);
    low.set(v, next);
    next++;
    stack.push(v);
    onStack.add(v);
    for (const w of graph.get(v) ?? []) {
      if (!graph.has(w)) continue;
      if (!index.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v) ?? 0, low.get(w) ?? 0));
      } else if (onStack.has(w)) low.set(v, Math.min(low.get(v) ?? 0, index.get(w) ?? 0));
    }
    if (low.get(v) !== index.get(v)) return;
    const group: string[] = [];
    let w: string | undefined;
    do {
      w = stack.pop();
      if (w === undefined) break;
      onStack.delete(w);
      group.push(relative(srcRoot, w));
    } while (w !== v);
    if (group.length > 1) cycles.push(group.sort());
  };
  for (const v of graph.keys()) if (!index.has(v)) visit(v);
  return cycles;
}

describe('import cycles', () => {
  it('no two modules under src/ import each other, directly or around a loop', () => {
    expect(importCycles(SRC)).toEqual([]);
  });
});
