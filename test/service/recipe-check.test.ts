// service/recipe-check.ts and service/dry-run.ts on real recipe files: what `orchestrate validate`,
// `--dry-run` and the MCP server's validate_recipe / dry_run tools share, as data.
import { resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { dryRunRecipe } from '../../src/service/dry-run.js';
import { checkRecipe, problemsJson } from '../../src/service/recipe-check.js';

const ROOT = resolve(import.meta.dirname, '../..');
const where = { cwd: ROOT, env: {} };

describe('service: check and dry-run a recipe', () => {
  it('a broken file is code problems, each at file:line:col with its hint', () => {
    const r = checkRecipe('test/fixtures/recipes/bad/01-yaml-syntax.yaml', where);
    expect(r).toMatchObject({ ok: false, code: 'problems', file: 'test/fixtures/recipes/bad/01-yaml-syntax.yaml' });
    if (r.ok) return;
    expect(problemsJson(r.problems)[0]).toMatchObject({ code: 'yaml_syntax', line: 4, col: 1 });
    expect(problemsJson(r.problems)[0]?.hint).toBeTruthy();
  });

  it('a valid recipe gives its counts, and its dry run the plan and the MCP part without starting anything', async () => {
    const r = checkRecipe('recipes/fan-out/recipe.yaml', where);
    expect(r).toMatchObject({ ok: true, file: 'recipes/fan-out/recipe.yaml', tasks: 2, agents: 2, publish: [] });
    if (!r.ok) return;
    const d = await dryRunRecipe(r.recipe, where, { listMcp: false });
    expect(d.ok).toBe(true);
    if (!d.ok) return;
    expect(d.report.plan.tasks.map((t) => t.id)).toEqual(['survey', 'overview']);
    expect(d.mcp).toEqual({ agents: [], listed: false });
  });
});
