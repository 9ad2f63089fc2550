// The JSON Schema generated from the zod schema: a standard validator accepts the shipped
// recipes with it, rejects broken ones, and the committed copy stays in sync.
import { existsSync, readFileSync, readdirSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { Ajv2020 } from 'ajv/dist/2020.js';
import { parse } from 'yaml';
import { describe, expect, it } from 'vitest';
import { RecipeSchema, recipeJsonSchema } from '../../src/recipe/schema.js';

const ROOT = resolve(import.meta.dirname, '../..');
const EXAMPLES = readdirSync(join(ROOT, 'recipes'), { withFileTypes: true })
  .filter((d) => d.isDirectory())
  .map((d) => join('recipes', d.name, 'recipe.yaml'))
  .filter((f) => existsSync(join(ROOT, f)));

function validator() {
  const ajv = new Ajv2020({ allErrors: true, strict: false });
  return ajv.compile(recipeJsonSchema());
}

describe('recipe JSON Schema', () => {
  it('there are at least three example recipes', () => {
    expect(EXAMPLES.length).toBeGreaterThanOrEqual(3);
  });

  it.each(EXAMPLES)('%s validates against the schema with ajv (draft 2020-12)', (file) => {
    const validate = validator();
    const data: unknown = parse(readFileSync(join(ROOT, file), 'utf8'));
    expect(validate(data), JSON.stringify(validate.errors)).toBe(true);
  });

  it.each(EXAMPLES)('%s points yaml-language-server at the committed schema', (file) => {
    const first = readFileSync(join(ROOT, file), 'utf8').split('\n')[0];
    expect(first).toBe('# yaml-language-server: $schema=../recipe.schema.json');
  });

  it('ajv rejects unknown keys, wrong enums and bad durations, as zod does', () => {
    const validate = validator();
    const cases: unknown[] = [
      { name: 'x', tasks: [{ id: 'a', prompt: 'p', colour: 'red' }] },
      { name: 'x', provider: 7, tasks: [{ id: 'a', prompt: 'p' }] },
      { name: 'x', tasks: [{ id: 'a', prompt: 'p', timeout: '10 minutes' }] },
      { name: 'x', tasks: [] },
      { tasks: [{ id: 'a', prompt: 'p' }] },
    ];
    for (const c of cases) {
      expect(validate(c), JSON.stringify(c)).toBe(false);
      expect(RecipeSchema.safeParse(c).success).toBe(false);
    }
    expect(
      validate({
        name: 'x',
        tasks: [{ id: 'a', prompt: 'p', timeout: '1h30m', retries: { count: 2, on: ['timeout'] } }],
      }),
    ).toBe(true);
  });

  it('recipes/recipe.schema.json is the current generated schema', () => {
    const committed: unknown = JSON.parse(readFileSync(join(ROOT, 'recipes/recipe.schema.json'), 'utf8'));
    expect(committed, 'regenerate with: npx tsx src/cli/main.ts schema > recipes/recipe.schema.json').toEqual(
      recipeJsonSchema(),
    );
  });

  it('fields carry descriptions for editor tooltips', () => {
    const schema = recipeJsonSchema() as { properties: Record<string, { description?: string }> };
    for (const key of ['model', 'concurrency', 'budget', 'inputs', 'agents', 'tasks'])
      expect(schema.properties[key]?.description, key).toBeTruthy();
  });
});
