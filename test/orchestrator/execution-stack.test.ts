// The execution stack every run builds (the coordinator's, a `publish --rebase` re-run's): a
// provider's own budget is set from the recipe and counts what the run's log says that provider
// spent, so a re-run cannot spend a provider's budget again; pairs get their second agent slot.
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { executionStack } from '../../src/orchestrator/execution-stack.js';
import { providerScope } from '../../src/orchestrator/pacing/permit-broker.js';
import type { RunState } from '../../src/run/run-fold.js';
import { addProviderCall, type ProviderUsage } from '../../src/run/usage-summary.js';
import { zeroUsage } from '../../src/run/run-events.js';
import { loadRecipe } from '../../src/recipe/index.js';
import { tempProject } from './helpers/run-fixtures.js';
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

  it("the scripted model's first call is no probe: a second call is granted while it is out (no headers will come)", async () => {
    const dir = tempProject({
      'recipe.yaml':
        'name: offline\nprovider: scripted\nscript: script.yaml\nagents:\n  worker: {}\ntasks:\n  - id: a\n    agent: worker\n    prompt: go\n',
      'script.yaml': 'conversations:\n  - match: go\n    turns:\n      - text: done\n',
    });
    const loaded = loadRecipe(join(dir, 'recipe.yaml'), { env: {} });
    if (!loaded.ok) throw new Error(loaded.problems.map((p) => p.message).join('\n'));
    const recipe = loaded.recipe;
    const s = executionStack({
      recipe,
      taskOf: (id) => recipe.tasks.find((t) => t.id === id)!,
      stopping: () => undefined,
    });
    closers.push(() => s.broker.close());
    const call = { uncachedInput: 1000, cachedInput: 0, maxOutput: 500 };
    const req = (key: string) => ({
      model: 'claude-sonnet-4-5',
      provider: 'scripted',
      scopes: ['run', `instance:${key}`],
      estimate: { usd: 0, tokens: 1500 },
      call,
    });
    const first = await s.broker.request(req('a'));
    expect(first.ok).toBe(true);
    // The first call has not answered (no usage reported): an adaptive provider would hold this one
    // back for up to 2 s to learn its limits from that answer's headers, and name that first call as
    // the reason (asserted on the reason, not on a wait measured in milliseconds).
    expect(s.broker.waitReason(req('b'))).not.toContain('first call');
    expect((await s.broker.request(req('b'))).ok).toBe(true);
  });
});
