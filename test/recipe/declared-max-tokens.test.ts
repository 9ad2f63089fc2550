// A recipe's declared `max_tokens` is what each request asks for (capped by the context window),
// on the wire through the real SDKs: it used to be divided by three (4k was sent as 1333). A
// model without a declared max_tokens still asks for a third of its output limit.
import { afterEach, describe, expect, it } from 'vitest';
import { streamAnthropic } from '../../src/ai/anthropic.js';
import { modelFromSpec } from '../../src/ai/models.js';
import { streamOpenAIChat } from '../../src/ai/openai-compatible.js';
import { modelForProvider } from '../../src/ai/provider-config.js';
import type { Model, StreamFunction } from '../../src/ai/types.js';
import { loadRecipe } from '../../src/recipe/load.js';
import { startFakeAnthropic } from '../helpers/fake-anthropic-server.js';
import { startFakeOpenAI } from '../helpers/fake-openai-server.js';
import { type TempRecipe, tempRecipe } from './recipe-files.js';

const cleanups: (() => unknown)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0)) await c();
});

function recipeAgents(models: string, baseUrl = 'http://127.0.0.1:9/v1') {
  const temp: TempRecipe = tempRecipe(
    `name: r\nmodel: claude-future-7\nproviders:\n  local: { type: openai-compatible, base_url: "${baseUrl}" }\nmodels:\n${models}\nagents:\n  a: { tools: [] }\n  b: { tools: [], provider: local, model: local-model }\ntasks:\n  - id: t\n    agent: a\n    prompt: p\n  - id: u\n    agent: b\n    prompt: p\n`,
  );
  cleanups.push(temp.cleanup);
  const r = loadRecipe(temp.file, { cwd: temp.dir, env: {} });
  if (!r.ok) throw new Error(r.problems.map((p) => p.message).join('\n'));
  return r.recipe.agents;
}

/** One request with the model's own output budget (no maxTokens option), answered successfully. */
async function sendOne(stream: StreamFunction, model: Model): Promise<void> {
  const s = stream(model, { messages: [{ role: 'user', content: 'hi', timestamp: 1 }] }, { apiKey: 'sk-test' });
  const result = await s.result();
  expect(result.stopReason, result.errorMessage).toBe('stop');
}

describe('a declared max_tokens is sent as declared', () => {
  it('Anthropic and OpenAI-compatible requests ask for the declared 4k, not a third of it', async () => {
    const anthropic = await startFakeAnthropic({
      responses: [{ kind: 'message', content: [{ type: 'text', text: 'ok' }] }],
    });
    const openai = await startFakeOpenAI({ responses: [{ kind: 'chat', text: 'ok' }] });
    cleanups.push(
      () => anthropic.close(),
      () => openai.close(),
    );
    const agents = recipeAgents(
      '  claude-future-7: { price: { input: 1, output: 2 }, max_tokens: 4k }\n  local-model: { price: { input: 0, output: 0 }, max_tokens: 4k, context_window: 32k }',
      openai.url,
    );
    const a = agents.a!;
    const b = agents.b!;
    await sendOne(streamAnthropic, { ...modelFromSpec('claude-future-7', a.modelSpec!), baseUrl: anthropic.url });
    await sendOne(streamOpenAIChat, modelForProvider(b.providerConfig!, 'local-model', b.modelSpec));
    expect(anthropic.requests[0]!.body.max_tokens).toBe(4000);
    expect(openai.requests[0]!.body.max_tokens).toBe(4000);
  });

  it('is capped by the context window', async () => {
    const anthropic = await startFakeAnthropic({
      responses: [{ kind: 'message', content: [{ type: 'text', text: 'ok' }] }],
    });
    cleanups.push(() => anthropic.close());
    const agents = recipeAgents(
      '  claude-future-7: { price: { input: 1, output: 2 }, max_tokens: 64k, context_window: 16k }\n  local-model: { price: { input: 0, output: 0 } }',
    );
    await sendOne(streamAnthropic, {
      ...modelFromSpec('claude-future-7', agents.a!.modelSpec!),
      baseUrl: anthropic.url,
    });
    expect(anthropic.requests[0]!.body.max_tokens).toBe(16_000);
  });

  it('without a declared max_tokens, a request asks for a third of the output limit', async () => {
    const anthropic = await startFakeAnthropic({
      responses: [{ kind: 'message', content: [{ type: 'text', text: 'ok' }] }],
    });
    cleanups.push(() => anthropic.close());
    const agents = recipeAgents(
      '  claude-future-7: { price: { input: 1, output: 2 } }\n  local-model: { price: { input: 0, output: 0 } }',
    );
    expect(agents.a!.modelSpec!.maxTokensDeclared).toBeUndefined();
    await sendOne(streamAnthropic, {
      ...modelFromSpec('claude-future-7', agents.a!.modelSpec!),
      baseUrl: anthropic.url,
    });
    expect(anthropic.requests[0]!.body.max_tokens).toBe(Math.floor(32_000 / 3));
  });
});
