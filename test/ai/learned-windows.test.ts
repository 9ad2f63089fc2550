// Learned windows: the smaller window an overflow states is kept per provider, endpoint and model;
// a larger one never grows it back, and one below the caller's minimum is not recorded (a later
// session in that process would only thrash in it).
import { beforeEach, describe, expect, it } from 'vitest';
import {
  forgetLearnedWindows,
  learnContextWindow,
  learnedContextWindow,
  withLearnedWindow,
} from '../../src/ai/learned-windows.js';
import { getModel } from '../../src/ai/models.js';

beforeEach(() => forgetLearnedWindows());

describe('learned context windows', () => {
  const model = { ...getModel('claude-haiku-4-5')!, baseUrl: 'http://127.0.0.1:1/' };

  it('keeps the smallest stated window for that provider, endpoint and model only', () => {
    expect(learnContextWindow(model, 'prompt is too long: 60425 tokens > 55000 maximum')).toBe(55_000);
    expect(learnContextWindow(model, 'prompt is too long: 90000 tokens > 80000 maximum')).toBe(80_000);
    expect(learnedContextWindow(model)).toBe(55_000);
    expect(withLearnedWindow(model).contextWindow).toBe(55_000);
    expect(withLearnedWindow({ ...model, baseUrl: 'http://127.0.0.1:2/' }).contextWindow).toBe(200_000);
    expect(withLearnedWindow({ ...model, id: 'other' }).contextWindow).toBe(200_000);
  });

  it('does not record a window below the minimum, nor an error without a figure', () => {
    expect(learnContextWindow(model, 'prompt is too long: 2100 tokens > 1500 maximum', 32_769)).toBeUndefined();
    expect(learnContextWindow(model, 'prompt is too long')).toBeUndefined();
    expect(learnedContextWindow(model)).toBeUndefined();
  });
});
