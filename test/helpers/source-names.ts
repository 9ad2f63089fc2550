// What a source file names of another folder of src/: every quoted relative path in it (an import,
// a dynamic import, a path constant) that resolves into that folder. The entry-point hand-over
// tests (cli -> mcp, cli -> web) use it to check that the one path the layer checker cannot see
// is the only one (issue #43: one reader, not two copies).
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';

export const SRC = resolve(import.meta.dirname, '../../src');

/** Every TypeScript source file under `dir`. */
export function* sourceFiles(dir: string): Generator<string> {
  for (const name of readdirSync(dir)) {
    const p = join(dir, name);
    if (statSync(p).isDirectory()) yield* sourceFiles(p);
    else if (/\.(ts|mts|cts)$/.test(name)) yield p;
  }
}

/** Every quoted relative path in `file` that resolves into src/<folder>/, with where it is written. */
export function namesOf(file: string, folder: string): string[] {
  const found: string[] = [];
  for (const m of readFileSync(file, 'utf8').matchAll(/['"`](\.{1,2}\/[^'"`\s]+)['"`]/g)) {
    const target = relative(SRC, resolve(dirname(file), m[1]!));
    if (target.split('/')[0] === folder) found.push(`${relative(SRC, file)}: ${m[1]}`);
  }
  return found;
}
