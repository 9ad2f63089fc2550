// A mixed run through both real SDKs: the planner on the fake Anthropic API, the fan-out workers
// on the fake OpenAI-compatible server (a recipe providers: entry with models: prices). Every
// request goes where its agent says, the strict server sees valid conversations, and result.json
// prices each call by its own model and groups the costs per provider (and model), as `show
// --json`, `show` and the report do from the same log.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { resolveModel } from '../../src/ai/models.js';
import { computeCost, emptyUsage } from '../../src/ai/usage.js';
import { runRecipeFile } from '../../src/orchestrator/run-recipe.js';
import type { ResultFile } from '../../src/run/run-state.js';
import { buildHtmlReport } from '../../src/display/html-report.js';
import { loadRunFolder } from '../../src/display/run-folder.js';
import { formatRunDetails } from '../../src/display/run-details-text.js';
import { runJson } from '../../src/display/run-json.js';
import { startFakeAnthropic } from '../helpers/fake-anthropic-server.js';
import { startFakeOpenAI } from '../helpers/fake-openai-server.js';
import { SUMMARIZER_SYSTEM_PROMPT } from '../../src/session/summarize.js';
import { cleanupTempDirs, conversationResponder, tempProject } from './helpers/run-fixtures.js';

afterAll(() => cleanupTempDirs());

const ITEMS = ['alpha', 'beta', 'gamma'];

describe('a run with the planner on Anthropic and workers on an OpenAI-compatible server', { timeout: 120_000 }, () => {
  it('routes each agent to its endpoint and prices every call by its own model', async () => {
    const anthropic = await startFakeAnthropic({
      respond: conversationResponder([
        { match: /List the items/, turns: [{ text: JSON.stringify({ items: ITEMS }) }] },
      ]),
    });
    const local = await startFakeOpenAI({
      respond: ({ body }) => {
        const messages = body.messages as { role: string; content: unknown }[];
        if (
          typeof messages[0]?.content === 'string' &&
          messages[0].content.startsWith(SUMMARIZER_SYSTEM_PROMPT.slice(0, 60))
        )
          return {
            kind: 'chat',
            text: '## Goal\nCount an item.',
            usage: { prompt_tokens: 300, completion_tokens: 20 },
          };
        const asked = JSON.stringify(messages);
        const item = ITEMS.find((i) => asked.includes(`Count item ${i}`)) ?? 'none';
        const replies = messages.filter((m) => m.role === 'assistant').length;
        if (replies === 0)
          return {
            kind: 'chat',
            toolCalls: [{ name: 'ls', arguments: { path: '.' } }],
            usage: { prompt_tokens: 1000, completion_tokens: 30, cached_tokens: 400 },
          };
        return {
          kind: 'chat',
          text: `counted ${item}`,
          usage: { prompt_tokens: 1200, completion_tokens: 10, cached_tokens: 1000 },
        };
      },
    });
    try {
      const dir = tempProject({
        'recipe.yaml': `name: mixed
model: claude-haiku-4-5
providers:
  local:
    type: openai-compatible
    base_url: ${local.url}
models:
  fake-model:
    price: { input: 0.5, output: 1, cache_read: 0.25 }
    context_window: 64k
    max_tokens: 8k
agents:
  planner: { tools: [] }
  worker: { tools: [ls], provider: local, model: fake-model }
tasks:
  - id: list
    agent: planner
    prompt: "List the items"
    output: json
  - id: count
    needs: [list]
    for_each: \${{ tasks.list.output.items }}
    agent: worker
    prompt: "Count item \${{ item }}"
`,
      });
      const r = await runRecipeFile(
        join(dir, 'recipe.yaml'),
        { cwd: dir },
        {
          runsDir: join(dir, 'runs'),
          env: {
            ...process.env,
            ANTHROPIC_API_KEY: 'sk-test',
            ANTHROPIC_BASE_URL: anthropic.url,
            OPENAI_API_KEY: undefined,
          },
        },
      );
      if (!r.ok) throw new Error(JSON.stringify(r));
      expect(r.outcome.status).toBe('succeeded');
      // Each endpoint got only its own agents' requests.
      expect(anthropic.requests.every((q) => q.body.model === 'claude-haiku-4-5')).toBe(true);
      expect(local.requests.length).toBeGreaterThanOrEqual(ITEMS.length * 2);
      expect(local.requests.every((q) => q.body.model === 'fake-model')).toBe(true);
      expect(local.rejected).toEqual([]);
      // The coordinator's Anthropic key never reached the other endpoint.
      expect(local.requests.some((q) => JSON.stringify(q.headers).includes('sk-test'))).toBe(false);

      const result = JSON.parse(readFileSync(join(r.outcome.dir, 'result.json'), 'utf8')) as ResultFile;
      const worker = { cost: { input: 0.5, output: 1, cacheRead: 0.25, cacheWrite: 0 } };
      let localCost = 0;
      for (const q of local.requests) {
        const messages = q.body.messages as { role: string; content: unknown }[];
        const summary =
          typeof messages[0]?.content === 'string' &&
          messages[0].content.startsWith(SUMMARIZER_SYSTEM_PROMPT.slice(0, 60));
        const replies = messages.filter((m) => m.role === 'assistant').length;
        const u = summary
          ? { prompt: 300, out: 20, cached: 0 }
          : replies === 0
            ? { prompt: 1000, out: 30, cached: 400 }
            : { prompt: 1200, out: 10, cached: 1000 };
        localCost += computeCost(worker, {
          ...emptyUsage(),
          input: u.prompt - u.cached,
          output: u.out,
          cacheRead: u.cached,
        }).cost.total;
      }
      const counts = result.instances.filter((i) => i.task === 'count');
      expect(counts).toHaveLength(ITEMS.length);
      const workerCost = counts.reduce((n, i) => n + i.usage.cost, 0);
      expect(workerCost).toBeCloseTo(localCost, 12);
      const planner = result.instances.find((i) => i.task === 'list')!;
      const haiku = resolveModel('claude-haiku-4-5');
      expect(planner.usage.cost).toBeGreaterThan(0);
      expect(planner.usage.cost).toBeLessThan(haiku.cost.output); // a few hundred tokens, not millions
      expect(result.usage.cost).toBeCloseTo(planner.usage.cost + workerCost, 12);

      // Costs per provider, and per model within each: exactly two providers, each with its own model.
      expect(Object.keys(result.providers).sort()).toEqual(['anthropic', 'local']);
      expect(Object.keys(result.providers.local!.models)).toEqual(['fake-model']);
      expect(Object.keys(result.providers.anthropic!.models)).toEqual(['claude-haiku-4-5']);
      expect(result.providers.local!.usage.cost).toBeCloseTo(localCost, 12);
      expect(result.providers.local!.models['fake-model']!.cost).toBeCloseTo(localCost, 12);
      expect(result.providers.local!.usage.turns).toBe(local.requests.length);
      expect(result.providers.local!.usage.cacheRead).toBeGreaterThan(0);
      expect(result.providers.anthropic!.usage.cost).toBeCloseTo(planner.usage.cost, 12);
      expect(result.providers.anthropic!.usage.turns).toBe(anthropic.requests.length);
      // The views fold run.jsonl and agree with result.json to the cent and the token.
      const folder = loadRunFolder(r.outcome.dir);
      expect(runJson(folder).providers).toEqual(result.providers);
      const text = formatRunDetails(folder);
      expect(text).toMatch(/cost per provider:\n {2}(anthropic|local): \$/);
      expect(text).toContain(`  local: $${result.providers.local!.usage.cost.toFixed(4)}`);
      const html = buildHtmlReport(folder);
      expect(html).toContain('<h2>Cost per provider</h2>');
      expect(html).toContain('<strong>local</strong>');
      expect(html).toContain('<strong>anthropic</strong>');
      expect(html).toContain(`$${result.providers.anthropic!.usage.cost.toFixed(4)}`);
    } finally {
      await anthropic.close();
      await local.close();
    }
  });
});
