// providers: in a recipe: a provider name nobody declared is an error at its file:line:col that
// lists the known ones, a key pasted into api_key_env is refused, presets need no declaration,
// and the dry run prices each side of a mixed recipe by its own model.
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { estimateRecipe } from '../../src/recipe/estimate.js';
import { loadRecipe } from '../../src/recipe/load.js';
import { buildPlan } from '../../src/recipe/plan.js';
import { cleanupTempDirs, tempProject } from '../orchestrator/helpers/run-fixtures.js';

afterAll(() => cleanupTempDirs());

const recipe = (workerProvider: string, extra = '') => `name: mixed
model: claude-sonnet-4-5
providers:
  local:
    type: openai-compatible
    base_url: http://127.0.0.1:11434/v1${extra}
models:
  qwen-coder:
    price: { input: 0, output: 0 }
    context_window: 32k
agents:
  planner: { tools: [] }
  worker: { tools: [], provider: ${workerProvider}, model: qwen-coder }
tasks:
  - id: plan
    agent: planner
    prompt: "plan"
  - id: work
    agent: worker
    prompt: "work"
`;

describe('recipe providers', () => {
  it('an unknown provider is an error at its position, naming the known ones', () => {
    const dir = tempProject({ 'recipe.yaml': recipe('lokal') });
    const r = loadRecipe(join(dir, 'recipe.yaml'));
    expect(r.ok).toBe(false);
    if (r.ok) return;
    expect(r.problems).toEqual([
      expect.objectContaining({ code: 'unknown_provider', line: 13, col: 34, message: 'unknown provider "lokal"' }),
    ]);
    expect(r.problems[0]!.hint).toContain('local');
    expect(r.problems[0]!.hint).toContain('ollama');
  });

  it('a key written into api_key_env is refused (it takes a variable name)', () => {
    const dir = tempProject({ 'recipe.yaml': recipe('local', '\n    api_key_env: sk-abc123') });
    const r = loadRecipe(join(dir, 'recipe.yaml'));
    expect(r.ok).toBe(false);
    if (r.ok) return;
    expect(r.problems.map((p) => p.message).join('\n')).toContain('api_key_env is the NAME of an environment variable');
  });

  it('a declared provider and a preset load; the dry run prices each side by its own model', () => {
    for (const provider of ['local', 'ollama']) {
      const dir = tempProject({ 'recipe.yaml': recipe(provider) });
      const r = loadRecipe(join(dir, 'recipe.yaml'));
      if (!r.ok) throw new Error(JSON.stringify(r.problems));
      const worker = r.recipe.agents.worker!;
      expect(worker.provider).toBe(provider);
      expect(worker.providerConfig).toMatchObject({
        name: provider,
        type: 'openai-compatible',
        baseUrl: 'http://127.0.0.1:11434/v1',
      });
      expect(worker.modelSpec?.contextWindow).toBe(32_000);
      const planned = buildPlan(r.recipe);
      if (!planned.ok) throw new Error(JSON.stringify(planned.problems));
      const est = estimateRecipe(r.recipe, planned.plan);
      const of = (id: string) => est.tasks.find((t) => t.taskId === id)!;
      expect(of('work').models).toEqual(['qwen-coder']);
      expect(of('work').usd.high).toBe(0);
      expect(of('plan').usd.high).toBeGreaterThan(0);
    }
  });
});
