// The execution stack every run builds (the coordinator's, a `publish --rebase` re-run's): a
// provider's own budget is set from the recipe and counts what the run's log says that provider
// spent, so a re-run cannot spend a provider's budget again; pairs get their second agent slot.
import { afterEach, describe, expect, it } from 'vitest';
import { executionStack } from '../../src/orchestrator/execution-stack.js';
import { providerScope } from '../../src/orchestrator/pacing/permit-broker.js';
import type { RunState } from '../../src/run/run-fold.js';
import { addProviderCall, type ProviderUsage } from '../../src/run/usage-summary.js';
import { zeroUsage } from '../../src/run/run-events.js';
import { loadTestRecipe } from './helpers/run-state-fixtures.js';

const RECIPE = `
name: stack
model: claude-haiku-4-5
providers:
  local:
    type: openai-compatible
    base_url: http://127.0.0.1:9/v1
    budget: { tokens: 1500 }
agents:
  worker: { provider: local, model: fake-model }
tasks:
  - id: a
    agent: worker
    prompt: go
`;

const closers: (() => unknown)[] = [];
afterEach(async () => {
  for (const c of closers.splice(0)) await c();
});

function stackOf(providers?: ProviderUsage) {
  const recipe = loadTestRecipe(RECIPE);
  const s = executionStack({
    recipe,
    ...(providers ? { replay: { providers } as RunState } : {}),
    taskOf: (id) => recipe.tasks.find((t) => t.id === id)!,
    stopping: () => undefined,
  });
  closers.push(() => s.broker.close());
  return s;
}

describe('executionStack', () => {
  it("sets each provider's own budget from the recipe", () => {
    const { ledger } = stackOf();
    expect(ledger.limitsOf(providerScope('local'))).toEqual({ tokens: 1500 });
    expect(ledger.exhausted(providerScope('local'))).toBe(false);
  });

  it("charges what the log says a provider spent: a re-run finds that provider's budget spent", () => {
    const spent: ProviderUsage = {};
    addProviderCall(spent, 'local', 'fake-model', { ...zeroUsage(), totalTokens: 2000, turns: 1 });
    const { ledger } = stackOf(spent);
    expect(ledger.exhausted(providerScope('local'))).toBe(true);
    expect(ledger.check([providerScope('local')], { usd: 0, tokens: 10 }).ok).toBe(false);
  });
});
