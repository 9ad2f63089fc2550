// What every agent thread loads at its start (orchestrator/worker/worker.ts and its value imports):
// not the run log's schemas. run-events.ts builds a zod schema for every run event when it loads;
// a worker thread needs none of them, and loading it there made each thread's start-up slower
// (protocol.ts once imported CallFallbackSchema from it: 16 more modules in every thread).
import { relative, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { valueImports } from './value-imports.js';

const SRC = resolve(import.meta.dirname, '../../src');

/** Every file under src/ that loading `entry` loads (static value imports, transitively). */
function loadedBy(entry: string): Set<string> {
  const seen = new Set<string>();
  const walk = (file: string): void => {
    if (seen.has(file)) return;
    seen.add(file);
    for (const dep of valueImports(file)) walk(dep);
  };
  walk(entry);
  return new Set([...seen].map((f) => relative(SRC, f)));
}

describe('what an agent thread loads', () => {
  it("the worker's module graph leaves out the run log's event schemas and the recipe schema", () => {
    const loaded = loadedBy(resolve(SRC, 'orchestrator/worker/worker.ts'));
    expect(loaded.has('orchestrator/protocol.ts')).toBe(true); // the walk does reach the protocol
    expect(loaded.has('run/run-events.ts')).toBe(false);
    expect(loaded.has('recipe/schema.ts')).toBe(false);
  });
});
