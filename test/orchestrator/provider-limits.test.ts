// A provider's own budget (`providers: NAME: {budget}`) through a real run on real worker threads
// and both real SDKs: once the local server's budget is spent, that provider's agents stop with a
// typed budget denial naming the provider, while the agents on Anthropic finish; the run goes on
// (no run-wide budget_exhausted). A resume that retries one of them charges the provider's spend
// from the log again: the retried agent is refused before it reaches the server.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { resumeRunDir, runRecipeFile } from '../../src/orchestrator/run-recipe.js';
import type { RunEvent } from '../../src/run/run-events.js';
import { readRunLog } from '../../src/run/run-store.js';
import type { ResultFile } from '../../src/run/run-state.js';
import { startFakeAnthropic } from '../helpers/fake-anthropic-server.js';
import { startFakeOpenAI } from '../helpers/fake-openai-server.js';
import { cleanupTempDirs, conversationResponder, tempProject } from './helpers/run-fixtures.js';

afterAll(() => cleanupTempDirs());

describe("a provider's budget", { timeout: 120_000 }, () => {
  it("stops only that provider's agents, with a budget failure naming the provider", async () => {
    const anthropic = await startFakeAnthropic({
      respond: conversationResponder([
        { match: /Cloud item/, turns: [{ tools: [{ name: 'ls', args: { path: '.' } }] }, { text: 'cloud done' }] },
      ]),
    });
    // Every local call costs 1030 tokens of a 1500-token budget. A call reserves at least the input
    // its worker measured in the request (more than half the budget here): one first call goes,
    // and after it no call fits what is left. Before, a first call reserved 1/20 of the budget
    // whatever its size, so all three went and spent 3090 of the 1500.
    const local = await startFakeOpenAI({
      respond: ({ body }) => {
        const replies = (body.messages as { role: string }[]).filter((m) => m.role === 'assistant').length;
        return replies === 0
          ? {
              kind: 'chat',
              toolCalls: [{ name: 'ls', arguments: { path: '.' } }],
              usage: { prompt_tokens: 1000, completion_tokens: 30 },
            }
          : { kind: 'chat', text: 'counted', usage: { prompt_tokens: 1000, completion_tokens: 30 } };
      },
    });
    try {
      const dir = tempProject({
        'recipe.yaml': `name: provider-budget
model: claude-haiku-4-5
concurrency: 5
providers:
  local:
    type: openai-compatible
    base_url: ${local.url}
    budget: { tokens: 1500 }
    rate_limit: 600
models:
  fake-model:
    price: { input: 0.5, output: 1 }
agents:
  remote: { tools: [ls] }
  worker: { tools: [ls], provider: local, model: fake-model, summaries: extractive }
tasks:
  - id: cloud
    for_each: [a, b]
    agent: remote
    prompt: "Cloud item \${{ item }}"
  - id: count
    for_each: [a, b, c]
    agent: worker
    prompt: "Count item \${{ item }}"
`,
      });
      const r = await runRecipeFile(
        join(dir, 'recipe.yaml'),
        { cwd: dir },
        {
          runsDir: join(dir, 'runs'),
          env: { ...process.env, ANTHROPIC_API_KEY: 'sk-test', ANTHROPIC_BASE_URL: anthropic.url },
        },
      );
      if (!r.ok) throw new Error(JSON.stringify(r));
      expect(r.outcome.status).toBe('failed');
      const result = JSON.parse(readFileSync(join(r.outcome.dir, 'result.json'), 'utf8')) as ResultFile;
      const of = (task: string) => result.instances.filter((i) => i.task === task);
      expect(of('cloud').map((i) => i.status)).toEqual(['done', 'done']);
      expect(of('count').map((i) => i.status)).toEqual(['failed', 'failed', 'failed']);
      for (const i of of('count')) {
        expect(i.failure).toBe('budget');
        expect(i.error).toMatch(/budget of provider local of 1500 tokens is spent/);
        expect(i.attempts).toBe(1); // a budget failure is not retried
      }
      // One call was sent; the provider's spend is that call, within its budget.
      expect(local.requests).toHaveLength(1);
      expect(result.providers.local!.usage.totalTokens).toBe(1030);
      const events: RunEvent[] = readRunLog(join(r.outcome.dir, 'run.jsonl')).events;
      const denials = events.filter((e) => e.type === 'permit_deny');
      expect(denials.length).toBeGreaterThanOrEqual(3);
      for (const d of denials) expect(d.type === 'permit_deny' && d.key.startsWith('count')).toBe(true);
      // Not the run's budget: the run went on and never said it was exhausted.
      expect(events.some((e) => e.type === 'budget_exhausted')).toBe(false);

      // Resume with a retry of one local instance: the provider's budget still counts what the log spent.
      const resumed = await resumeRunDir(r.outcome.dir, {
        cwd: dir,
        retry: ['count.a'],
        env: { ...process.env, ANTHROPIC_API_KEY: 'sk-test', ANTHROPIC_BASE_URL: anthropic.url },
      });
      if (!resumed.ok) throw new Error(JSON.stringify(resumed));
      expect(local.requests).toHaveLength(1);
      const again = readRunLog(join(r.outcome.dir, 'run.jsonl')).events.filter(
        (e) => e.type === 'instance_failed' && e.key === 'count.a',
      );
      expect(again).toHaveLength(2);
      expect(again[1]).toMatchObject({ failure: 'budget', attempt: 2 });
      if (again[1]?.type === 'instance_failed') expect(again[1].error).toMatch(/budget of provider local/);
    } finally {
      await anthropic.close();
      await local.close();
    }
  });
});
