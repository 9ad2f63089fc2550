// No value-import cycle under src/. A cycle makes a module's exports undefined while it loads
// whenever a test or entry point happens to enter the cycle from another file: schema.ts ->
// publish-spec.ts -> duration.ts -> schema.ts once made five recipe test files fail to load at
// all ("Cannot read properties of undefined (reading 'optional')"), depending only on which file
// a test imported first. Type-only imports are erased at compile time and may form cycles.
import { relative, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { sourceFiles, valueImports } from './value-imports.js';

const SRC = resolve(import.meta.dirname, '../../src');

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
