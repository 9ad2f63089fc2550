// providers: in a recipe: a provider name nobody declared is an error at its file:line:col that
// lists the known ones, a key pasted into api_key_env is refused, presets need no declaration,
// and the dry run prices each side of a mixed recipe by its own model.
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { estimateRecipe } from '../../src/recipe/estimate.js';
import { loadRecipe } from '../../src/recipe/load.js';
import { buildPlan } from '../../src/recipe/plan.js';
import { lookupModelPrice } from '../../src/recipe/prices.js';
import { FALLBACK_PRICE, modelForProvider } from '../../src/ai/provider-config.js';
import { cleanupTempDirs, tempProject } from '../orchestrator/helpers/run-fixtures.js';
import { plannerWorkerRecipe } from './helpers/planner-worker-recipe.js';

afterAll(() => cleanupTempDirs());

const recipe = (workerProvider: string, extra = '') =>
  plannerWorkerRecipe({
    name: 'mixed',
    localLines: extra,
    qwenCoder: ['price: { input: 0, output: 0 }', 'context_window: 32k'],
    planner: '{ tools: [] }',
    worker: `{ tools: [], provider: ${workerProvider}, model: qwen-coder }`,
  });

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

  // A model nobody priced: free on a local server (a preset, `local: true`, or a loopback base_url),
  // the fallback price on a remote one, in the dry run and at run time alike.
  const undeclared = (provider: string, providers = '') => `name: local-price
model: claude-sonnet-4-5
${providers}agents:
  worker: { tools: [], provider: ${provider}, model: my-undeclared-model }
tasks:
  - id: work
    agent: worker
    prompt: "work"
`;
  const estimateOf = (text: string) => {
    const dir = tempProject({ 'recipe.yaml': text });
    const r = loadRecipe(join(dir, 'recipe.yaml'));
    if (!r.ok) throw new Error(JSON.stringify(r.problems));
    const planned = buildPlan(r.recipe);
    if (!planned.ok) throw new Error(JSON.stringify(planned.problems));
    const work = estimateRecipe(r.recipe, planned.plan).tasks.find((t) => t.taskId === 'work')!;
    const agent = r.recipe.agents.worker!;
    return { work, model: modelForProvider(agent.providerConfig!, agent.model, agent.modelSpec), recipe: r.recipe };
  };

  it('an undeclared model on a local provider is priced 0, and the dry run says so', () => {
    const cases = [
      undeclared('ollama'),
      undeclared('lmstudio'),
      undeclared('vllm'),
      undeclared('llamacpp'),
      undeclared(
        'gpu',
        'providers:\n  gpu: { type: openai-compatible, base_url: "http://gpu-box:8000/v1", local: true }\n',
      ),
      undeclared('box', 'providers:\n  box: { type: openai-compatible, base_url: "http://localhost:9000/v1" }\n'),
    ];
    for (const text of cases) {
      const { work, model, recipe } = estimateOf(text);
      expect(work.usd.high).toBe(0);
      expect(work.notes.join('\n')).toMatch(/my-undeclared-model on \w+: a local model nobody priced, counted at \$0/);
      expect(work.notes.join('\n')).not.toContain('no price known');
      expect(model.cost).toEqual({ input: 0, output: 0, cacheRead: 0, cacheWrite: 0 });
      const agent = recipe.agents.worker!;
      expect(lookupModelPrice(agent.model, agent.provider, recipe.models, recipe.providers)).toMatchObject({
        input: 0,
        output: 0,
        known: true,
        local: true,
      });
    }
  });

  it('an undeclared model on a remote provider gets the fallback price (budgets hold), and the dry run says it was assumed', () => {
    for (const text of [
      undeclared('openrouter'),
      undeclared('gw', 'providers:\n  gw: { type: openai-compatible, base_url: "https://gateway.example.com/v1" }\n'),
      undeclared(
        'lo',
        'providers:\n  lo: { type: openai-compatible, base_url: "http://127.0.0.1:9/v1", local: false }\n',
      ),
    ]) {
      const { work, model } = estimateOf(text);
      expect(work.usd.high).toBeGreaterThan(0);
      expect(work.notes.join('\n')).toContain('no price known for my-undeclared-model');
      expect(model.cost).toEqual({ ...FALLBACK_PRICE });
    }
  });
});
