// Dependencies point downward only: util <- ai <- agent <- tools/session <- runtime <- recipe <- run <- orchestrator
// <- cluster/display <- cli (docs/architecture.md; the same ranks as ../shared/tools/check-layers.mjs).
// This test fails the run when any import under src/ points up or sideways.
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';

const RANK: Record<string, number> = {
  util: -1,
  ai: 0,
  agent: 1,
  tools: 2,
  session: 2,
  runtime: 3,
  recipe: 4,
  run: 5,
  orchestrator: 6,
  publish: 7,
  cluster: 7,
  display: 7,
  telemetry: 7,
  service: 8,
  cli: 9,
  mcp: 9,
  web: 9,
};
const SRC = resolve(import.meta.dirname, '../../src');

function* sourceFiles(dir: string): Generator<string> {
  for (const name of readdirSync(dir)) {
    const p = join(dir, name);
    if (statSync(p).isDirectory()) yield* sourceFiles(p);
    else if (/\.(ts|mts|js|mjs)$/.test(name) && !name.endsWith('.d.ts')) yield p;
  }
}
const layerOf = (file: string): string => relative(SRC, file).split('/')[0] ?? '';
const IMPORT_RE = /(?:import|export)[^'"]*?from\s*['"](\.[^'"]+)['"]|import\(\s*['"](\.[^'"]+)['"]\s*\)/g;

export function upwardImports(srcRoot: string): string[] {
  const bad: string[] = [];
  for (const file of sourceFiles(srcRoot)) {
    const from = layerOf(file);
    if (from === relative(srcRoot, file)) continue; // src/index.ts, the public surface, may import any layer
    if (!(from in RANK)) throw new Error(`src/${from} is not ranked: add it to RANK (and to the shared checker)`);
    const text = readFileSync(file, 'utf8');
    for (const m of text.matchAll(IMPORT_RE)) {
      const spec = m[1] ?? m[2] ?? '';
      const to = layerOf(resolve(dirname(file), spec));
      if (to === from || !(to in RANK)) continue;
      if ((RANK[to] ?? 0) >= (RANK[from] ?? 0))
        bad.push(`${relative(srcRoot, file)} imports ${spec} (${from} -> ${to})`);
    }
  }
  return bad;
}

describe('layering', () => {
  it('no import under src/ points up or sideways', () => {
    expect(upwardImports(SRC)).toEqual([]);
  });

  it('the Anthropic and OpenAI SDKs are only loaded lazily (each costs hundreds of ms to import)', () => {
    const eager: string[] = [];
    for (const file of sourceFiles(SRC)) {
      const text = readFileSync(file, 'utf8');
      if (/^import\s+(?!type\b)[^;]*from\s+['"](@anthropic-ai\/sdk|openai)(\/[^'"]*)?['"]/m.test(text))
        eager.push(relative(SRC, file));
    }
    expect(eager).toEqual([]);
  });
});
