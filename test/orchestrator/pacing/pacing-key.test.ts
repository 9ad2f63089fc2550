// `pacing:` (issue 41): adaptive (the default) paces a provider's calls by the limits its response
// headers state; fixed ignores them (rate_limit: alone paces). Set on the recipe for every provider
// or on one provider; a wrong value is a problem at its file:line:col. The broker is built from the
// loaded recipe by executionStack(), as a run builds it, and taught the limits a response states.
import { join } from 'node:path';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import type { RateLimitSnapshot } from '../../../src/ai/rate-limit-headers.js';
import { executionStack } from '../../../src/orchestrator/execution-stack.js';
import type { PermitBroker, PermitRequest } from '../../../src/orchestrator/pacing/permit-broker.js';
import { loadRecipe } from '../../../src/recipe/load.js';
import { zeroUsage } from '../../../src/run/usage-summary.js';
import { cleanupTempDirs, tempProject } from '../helpers/run-fixtures.js';
import { loadTestRecipe } from '../helpers/run-state-fixtures.js';

afterAll(() => cleanupTempDirs());
const brokers: PermitBroker[] = [];
afterEach(() => {
  for (const b of brokers.splice(0)) b.close();
});

const recipe = (top: string, local: string) => `name: pacing
model: claude-haiku-4-5
${top}providers:
  local:
    type: openai-compatible
    base_url: http://127.0.0.1:9/v1
${local}agents:
  worker: { provider: local, model: fake-model }
tasks:
  - id: a
    agent: worker
    prompt: go
`;

/** Input tokens per minute all spent: a call paced by them must wait for the refill. */
const spent: RateLimitSnapshot = {
  vendor: 'anthropic',
  keyHash: 'k',
  limits: { requests: { limit: 1000, remaining: 1000 }, inputTokens: { limit: 6000, remaining: 0 } },
};

const call = (provider: string, model: string): PermitRequest => ({
  model,
  provider,
  scopes: ['run'],
  estimate: { usd: 0, tokens: 0 },
  call: { uncachedInput: 3000, cachedInput: 0, maxOutput: 10 },
});

/** The run's broker, after a first call on each provider heard that the input tokens are spent. */
async function brokerOf(yaml: string): Promise<PermitBroker> {
  const r = loadTestRecipe(yaml);
  const { broker } = executionStack({
    recipe: r,
    taskOf: (id) => r.tasks.find((t) => t.id === id)!,
    stopping: () => undefined,
  });
  brokers.push(broker);
  for (const [provider, model] of [
    ['local', 'fake-model'],
    ['anthropic', 'claude-haiku-4-5'],
  ] as const) {
    const first = await broker.request({
      ...call(provider, model),
      call: { uncachedInput: 0, cachedInput: 0, maxOutput: 0 },
    });
    if (!first.ok) throw new Error(first.reason);
    broker.started(first.slotId, Date.now(), { rateLimits: spent });
    broker.usage(first.slotId, zeroUsage());
  }
  return broker;
}

/** Whether a call is granted before a macrotask passes (a paced one waits seconds for the refill). */
async function grantedAtOnce(broker: PermitBroker, provider: string, model: string): Promise<boolean> {
  const controller = new AbortController();
  const outcome = broker.request({ ...call(provider, model), signal: controller.signal });
  const first = await Promise.race([outcome, new Promise<'waiting'>((r) => setImmediate(() => r('waiting')))]);
  controller.abort();
  await outcome;
  return first !== 'waiting' && first.ok;
}

describe('pacing:', () => {
  it('adaptive by default: both providers wait for the learned input tokens', async () => {
    const broker = await brokerOf(recipe('', ''));
    expect(await grantedAtOnce(broker, 'local', 'fake-model')).toBe(false);
    expect(await grantedAtOnce(broker, 'anthropic', 'claude-haiku-4-5')).toBe(false);
    expect(broker.waitReason(call('local', 'fake-model'))).toContain('input tokens per minute (6000, learned)');
  });

  it("fixed on one provider: its calls ignore the headers' limits, the other provider's still wait", async () => {
    const broker = await brokerOf(recipe('', '    pacing: fixed\n'));
    expect(await grantedAtOnce(broker, 'local', 'fake-model')).toBe(true);
    expect(await grantedAtOnce(broker, 'anthropic', 'claude-haiku-4-5')).toBe(false);
  });

  it('fixed on the recipe: every provider without its own, and a provider may say adaptive', async () => {
    const all = await brokerOf(recipe('pacing: fixed\n', ''));
    expect(await grantedAtOnce(all, 'local', 'fake-model')).toBe(true);
    expect(await grantedAtOnce(all, 'anthropic', 'claude-haiku-4-5')).toBe(true);
    const mixed = await brokerOf(recipe('pacing: fixed\n', '    pacing: adaptive\n'));
    expect(await grantedAtOnce(mixed, 'local', 'fake-model')).toBe(false);
    expect(await grantedAtOnce(mixed, 'anthropic', 'claude-haiku-4-5')).toBe(true);
  });

  it('a wrong value is a problem at its position naming the values', () => {
    const dir = tempProject({ 'recipe.yaml': recipe('', '    pacing: adaptiv\n') });
    const r = loadRecipe(join(dir, 'recipe.yaml'), { env: { ANTHROPIC_API_KEY: 'sk-test' } });
    expect(r.ok).toBe(false);
    if (r.ok) return;
    expect(r.problems).toHaveLength(1);
    expect(r.problems[0]).toMatchObject({ line: 7, col: 13, hint: 'did you mean "adaptive"?' });
    expect(r.problems[0]!.message).toContain('must be one of: adaptive, fixed (got "adaptiv")');
  });
});
