// recipe `fallback:`: an entry must be provider/model with a known provider and (for the anthropic
// type) a known or declared model, each mistake at its own file:line:col; a valid list reaches
// the loaded agent with each target's endpoint and declared price; an agent without its own list
// takes its provider's.
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { loadRecipe } from '../../src/recipe/load.js';
import { splitFallbackEntry } from '../../src/recipe/fallback.js';
import { cleanupTempDirs, tempProject } from '../orchestrator/helpers/run-fixtures.js';
import { plannerWorkerRecipe } from './helpers/planner-worker-recipe.js';

afterAll(() => cleanupTempDirs());

const recipe = (agentFallback: string, providerFallback = '') =>
  plannerWorkerRecipe({
    name: 'fb',
    localLines: providerFallback,
    qwenCoder: ['price: { input: 0.1, output: 0.2 }'],
    planner: `{ tools: [], fallback: ${agentFallback} }`,
    worker: '{ tools: [], provider: local, model: qwen-coder }',
  });

describe('recipe fallback:', () => {
  it('an unknown provider, an unknown anthropic model and an entry without a slash are problems at their entries', () => {
    const dir = tempProject({ 'recipe.yaml': recipe('[lokal/qwen-coder, anthropic/claude-sonet-9, haiku]') });
    const r = loadRecipe(join(dir, 'recipe.yaml'));
    expect(r.ok).toBe(false);
    if (r.ok) return;
    expect(r.problems).toEqual([
      expect.objectContaining({
        code: 'unknown_provider',
        line: 11,
        col: 36,
        message: 'fallback entry "lokal/qwen-coder" names unknown provider "lokal"',
      }),
      expect.objectContaining({
        code: 'unknown_model',
        line: 11,
        col: 54,
        message: 'fallback entry "anthropic/claude-sonet-9" names unknown model "claude-sonet-9"',
      }),
      expect.objectContaining({
        code: 'unknown_model',
        line: 11,
        col: 80,
        message: 'fallback entry "haiku" is not provider/model',
      }),
    ]);
    expect(r.problems[0]!.hint).toContain('local');
  });

  it('the scripted provider cannot be a fallback', () => {
    const dir = tempProject({ 'recipe.yaml': recipe('[scripted/x]') });
    const r = loadRecipe(join(dir, 'recipe.yaml'));
    expect(r.ok).toBe(false);
    if (r.ok) return;
    expect(r.problems[0]).toMatchObject({ code: 'unknown_provider', line: 11 });
    expect(r.problems[0]!.hint).toContain('scripted provider cannot be a fallback');
  });

  it("a valid list reaches the agent with each target's endpoint and price; a provider's list is its agents' default", () => {
    const dir = tempProject({
      'recipe.yaml': recipe(
        '[local/qwen-coder, anthropic/claude-haiku-4-5]',
        '\n    fallback: [anthropic/claude-haiku-4-5]',
      ),
    });
    const r = loadRecipe(join(dir, 'recipe.yaml'));
    if (!r.ok) throw new Error(JSON.stringify(r.problems));
    expect(r.recipe.agents.planner!.fallback).toEqual([
      {
        provider: 'local',
        model: 'qwen-coder',
        modelSpec: expect.objectContaining({ cost: expect.objectContaining({ input: 0.1, output: 0.2 }) }),
        providerConfig: expect.objectContaining({ name: 'local', baseUrl: 'http://127.0.0.1:11434/v1' }),
      },
      { provider: 'anthropic', model: 'claude-haiku-4-5' },
    ]);
    expect(r.recipe.agents.worker!.fallback).toEqual([{ provider: 'anthropic', model: 'claude-haiku-4-5' }]);
  });

  it('splits at the first slash: a gateway model id keeps its own slashes', () => {
    expect(splitFallbackEntry('openrouter/anthropic/claude-sonnet-4-5')).toEqual({
      provider: 'openrouter',
      model: 'anthropic/claude-sonnet-4-5',
    });
    expect(splitFallbackEntry('/x')).toBeUndefined();
    expect(splitFallbackEntry('x/')).toBeUndefined();
  });
});
