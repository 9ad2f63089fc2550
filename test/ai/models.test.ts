import { describe, expect, it } from 'vitest';
import { getModel, listModels, resolveModel, scriptedModel } from '../../src/ai/models.js';

describe('model table', () => {
  it('lists current Claude models with limits and prices', () => {
    const ids = listModels().map((m) => m.id);
    expect(ids).toEqual(
      expect.arrayContaining([
        'claude-opus-4-5',
        'claude-sonnet-4-5',
        'claude-haiku-4-5',
        'claude-opus-4-1',
        'claude-sonnet-4-0',
      ]),
    );
    for (const m of listModels()) {
      expect(m.api).toBe('anthropic-messages');
      expect(m.contextWindow).toBeGreaterThan(0);
      expect(m.maxTokens).toBeGreaterThan(0);
      expect(m.cost.cacheRead).toBeCloseTo(m.cost.input / 10);
      expect(m.cost.cacheWrite).toBeCloseTo(m.cost.input * 1.25);
    }
    expect(getModel('claude-haiku-4-5')?.cost).toEqual({ input: 1, output: 5, cacheRead: 0.1, cacheWrite: 1.25 });
  });

  it('resolves aliases and dated ids, and returns copies', () => {
    expect(getModel('claude-sonnet-4')?.id).toBe('claude-sonnet-4-0');
    expect(getModel('claude-sonnet-4-5-20250929')?.id).toBe('claude-sonnet-4-5');
    expect(getModel('Claude-Opus-4-1')?.id).toBe('claude-opus-4-1');
    const a = getModel('claude-opus-4-5')!;
    a.cost.input = 999;
    expect(getModel('claude-opus-4-5')!.cost.input).toBe(5);
  });

  it('resolveModel names the known ids when a model is unknown', () => {
    expect(() => resolveModel('gpt-5')).toThrow(/Unknown model "gpt-5".*claude-sonnet-4-5.*claude-haiku-4-5/s);
    expect(() => resolveModel('claude-sonnet-4-5', 'openai')).toThrow(/Unknown provider "openai".*anthropic, scripted/);
    expect(resolveModel('claude-opus-4-5').api).toBe('anthropic-messages');
  });

  it('resolves any name for the scripted provider, borrowing known limits but not prices', () => {
    const m = resolveModel('claude-opus-4-1', 'scripted');
    expect(m).toMatchObject({ api: 'scripted', provider: 'scripted', id: 'claude-opus-4-1', maxTokens: 32_000 });
    expect(m.cost).toEqual({ input: 0, output: 0, cacheRead: 0, cacheWrite: 0 });
    expect(resolveModel('anything', 'scripted').id).toBe('anything');
  });

  it('scriptedModel has a 200000-token window and zero cost unless overridden', () => {
    expect(scriptedModel()).toMatchObject({ api: 'scripted', contextWindow: 200_000, cost: { input: 0, output: 0 } });
    expect(scriptedModel({ contextWindow: 1000 }).contextWindow).toBe(1000);
  });
});
