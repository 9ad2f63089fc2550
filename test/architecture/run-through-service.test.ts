// The entry points start and resume runs through the service layer (issue #43): src/service's
// startRun / resumeRun / launchRun / launchResume compose a run (the orchestrator's run-recipe,
// the publish layer's runPublishing, traces, the Redis executor), and cli/, mcp/ and web/ only
// parse, call and render. Were an entry point to wire a run itself again, the two ways of
// starting one would drift apart (a run from the MCP server without its publish gate, say).
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';

const SRC = resolve(import.meta.dirname, '../../src');
const ENTRY_POINTS = ['cli', 'mcp', 'web'];
/** The modules that compose a run: only the service layer names them. */
const RUN_WIRING = [
  'orchestrator/run-recipe.ts',
  'publish/run-publishing.ts',
  'telemetry/run-tracing.ts',
  'cluster/redis-executor.ts',
  'service/redis-run.ts',
];

function* sourceFiles(dir: string): Generator<string> {
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch {
    return; // an entry point not built yet (web/)
  }
  for (const name of names) {
    const p = join(dir, name);
    if (statSync(p).isDirectory()) yield* sourceFiles(p);
    else if (/\.(ts|mts|cts)$/.test(name)) yield p;
  }
}

/** Each module of `wiring` that `file` imports (static, dynamic or type-only), as `file -> module`. */
export function wiringImports(file: string, srcRoot: string, wiring: readonly string[]): string[] {
  const found: string[] = [];
  const text = readFileSync(file, 'utf8');
  for (const m of text.matchAll(/(?:from\s*|import\(\s*)['"](\.{1,2}\/[^'"]+)['"]/g)) {
    const target = relative(srcRoot, resolve(dirname(file), m[1]!)).replace(/\.js$/, '.ts');
    if (wiring.includes(target)) found.push(`${relative(srcRoot, file)} -> ${target}`);
  }
  return found;
}

describe('runs start through the service layer', () => {
  it('cli/, mcp/ and web/ import none of the modules that compose a run', () => {
    const found = ENTRY_POINTS.flatMap((folder) =>
      [...sourceFiles(join(SRC, folder))].flatMap((f) => wiringImports(f, SRC, RUN_WIRING)),
    );
    expect(found).toEqual([]);
  });

  it('the check sees an import of run-recipe, static or dynamic', () => {
    // The check itself must be able to fail: the service files do import the wiring.
    expect(wiringImports(join(SRC, 'service/start-run.ts'), SRC, RUN_WIRING)).toEqual([
      'service/start-run.ts -> orchestrator/run-recipe.ts',
    ]);
    expect(wiringImports(join(SRC, 'service/run-execution.ts'), SRC, RUN_WIRING)).toEqual(
      expect.arrayContaining([
        'service/run-execution.ts -> publish/run-publishing.ts',
        'service/run-execution.ts -> telemetry/run-tracing.ts',
        'service/run-execution.ts -> service/redis-run.ts',
      ]),
    );
  });

  it('cli/commands/run.ts and resume.ts call the service to start and resume', () => {
    const run = readFileSync(join(SRC, 'cli/commands/run.ts'), 'utf8');
    const resume = readFileSync(join(SRC, 'cli/commands/resume.ts'), 'utf8');
    expect(run).toMatch(/from '\.\.\/\.\.\/service\/start-run\.js'/);
    expect(resume).toMatch(/from '\.\.\/\.\.\/service\/resume-run\.js'/);
    const mcp = readFileSync(join(SRC, 'mcp/run-tools.ts'), 'utf8');
    expect(mcp).toMatch(/from '\.\.\/service\/launch-run\.js'/);
  });
});
