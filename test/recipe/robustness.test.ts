// Whatever a recipe holds, loading it never throws: random mutations of the shipped examples
// either load (and dry-run) or come back as problems with a position and a message.
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative, resolve } from 'node:path';
import { parse, stringify } from 'yaml';
import { afterAll, describe, expect, it } from 'vitest';
import { dryRun } from '../../src/recipe/dry-run.js';
import { loadRecipe } from '../../src/recipe/load.js';
import { seededRandom } from '../helpers/seeded-random.js';

const ROOT = resolve(import.meta.dirname, '../..');
const EXAMPLES = ['fan-out', 'planner-worker', 'batch-refactor'];

const PALETTE: unknown[] = [
  null,
  0,
  -1,
  1.5,
  '',
  'x',
  '${{ tasks.nope.output }}',
  '${{',
  '${{ item }}',
  [],
  [null],
  {},
  { glob: 5 },
  true,
  '10 minutes',
  { count: 'x' },
  ['a', 'a'],
  { planner: 1 },
  'read',
];

type Node = Record<string, unknown> | unknown[];
function containers(value: unknown, out: Node[] = []): Node[] {
  if (value && typeof value === 'object') {
    out.push(value as Node);
    for (const v of Object.values(value)) containers(v, out);
  }
  return out;
}

function mutate(doc: unknown, random: () => number): unknown {
  const copy = structuredClone(doc);
  const pick = <T>(list: readonly T[]): T => list[Math.floor(random() * list.length)]!;
  for (let n = 1 + Math.floor(random() * 3); n > 0; n--) {
    const target = pick(containers(copy));
    const keys = Object.keys(target);
    const action = random();
    if (keys.length && action < 0.6) (target as Record<string, unknown>)[pick(keys)] = structuredClone(pick(PALETTE));
    else if (keys.length && action < 0.8 && !Array.isArray(target))
      delete (target as Record<string, unknown>)[pick(keys)];
    else if (!Array.isArray(target))
      target[pick(['needs', 'for_each', 'agent', 'bogus', 'pair', 'verify', 'tools', 'as', 'key'])] = structuredClone(
        pick(PALETTE),
      );
  }
  return copy;
}

describe('robustness', () => {
  const dirs: string[] = [];
  afterAll(() => {
    for (const d of dirs) rmSync(d, { recursive: true, force: true });
  });

  it.each(EXAMPLES)('%s: 120 random mutations load or report problems, never throw', (name) => {
    const from = join(ROOT, 'recipes', name);
    const dir = mkdtempSync(join(tmpdir(), `orchestrate-fuzz-${name}-`));
    dirs.push(dir);
    cpSync(from, dir, { recursive: true, filter: (src) => !relative(from, src).startsWith('work') });
    const original: unknown = parse(readFileSync(join(from, 'recipe.yaml'), 'utf8'));
    const random = seededRandom(name.length * 7919);
    let loaded = 0;
    for (let i = 0; i < 120; i++) {
      writeFileSync(join(dir, 'recipe.yaml'), stringify(mutate(original, random)));
      const r = loadRecipe(join(dir, 'recipe.yaml'), { cwd: dir, env: {} });
      if (r.ok) {
        loaded++;
        const d = dryRun(r.recipe, { env: {} });
        if (!d.ok) expect(d.problems.length).toBeGreaterThan(0);
      } else {
        expect(r.problems.length).toBeGreaterThan(0);
        for (const p of r.problems) {
          expect(p.line).toBeGreaterThanOrEqual(1);
          expect(p.col).toBeGreaterThanOrEqual(1);
          expect(p.message.length).toBeGreaterThan(0);
          expect(p.message).not.toMatch(/\[object Object\]|NaN/);
        }
      }
    }
    // Some mutations are harmless (a changed description), so both outcomes must occur.
    expect(loaded).toBeGreaterThan(0);
    expect(loaded).toBeLessThan(120);
  });
});
