// How tests start the real CLI as a child process. When dist/ was built from the sources as they
// are now (CI builds it before the tests), `node dist/cli/main.js`: the program users run, and a
// start without tsx's loader costs a third of the CPU (each TypeScript module goes through a
// loader thread), which adds up over the hundreds of CLI processes the suite starts. Otherwise
// (no build, or a source changed since) `node --import tsx src/cli/main.ts`, so a test never
// runs stale code. ORCHESTRATE_TEST_CLI=src forces the sources.
import { existsSync, readdirSync, statSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';

const REPO = resolve(import.meta.dirname, '../..');
const SRC = join(REPO, 'src');
const DIST = join(REPO, 'dist');

/** The built file of a source file (`.ts`/`.tsx` -> `.js`, `.cts` -> `.cjs`, `.mts` -> `.mjs`). */
function builtPath(source: string): string {
  return join(DIST, relative(SRC, source)).replace(
    /\.(c|m)?tsx?$/,
    (_m, kind: string | undefined) => `.${kind ?? ''}js`,
  );
}

function sourcesUnder(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const p = join(dir, e.name);
    if (e.isDirectory()) return sourcesUnder(p);
    return /\.(c|m)?tsx?$/.test(e.name) && !e.name.endsWith('.d.ts') ? [p] : [];
  });
}

/** True when every source file has a built file at least as new as itself. */
export function distIsCurrent(): boolean {
  if (!existsSync(join(DIST, 'cli', 'main.js'))) return false;
  return sourcesUnder(SRC).every((source) => {
    const built = builtPath(source);
    return existsSync(built) && statSync(built).mtimeMs >= statSync(source).mtimeMs;
  });
}

const fromDist = process.env.ORCHESTRATE_TEST_CLI !== 'src' && distIsCurrent();

/** The CLI's entry file, absolute. */
export const CLI_ENTRY = fromDist ? join(DIST, 'cli', 'main.js') : join(SRC, 'cli', 'main.ts');

/**
 * Node's arguments before the CLI's own: `[...CLI_NODE_ARGS, 'agent', '--help']`. tsx is named by
 * URL, so the child may start in any folder.
 */
export const CLI_NODE_ARGS: readonly string[] = fromDist
  ? [CLI_ENTRY]
  : ['--import', import.meta.resolve('tsx'), CLI_ENTRY];

/** The same as one line for a shell (tmux panes): paths quoted. */
export const CLI_SHELL = `node ${CLI_NODE_ARGS.map((a) => `'${a}'`).join(' ')}`;

/** Node's arguments for a child that imports modules of src/ given by childModule(). */
export const CHILD_LOADER_ARGS: readonly string[] = fromDist ? [] : ['--import', import.meta.resolve('tsx')];

/** A module of src/ (a path relative to it, e.g. `tools/edit.ts`) for a child: built or source. */
export function childModule(sourcePath: string): string {
  const source = join(SRC, sourcePath);
  return fromDist ? builtPath(source) : source;
}
