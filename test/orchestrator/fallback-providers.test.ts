// recipe `fallback:` end to end, through both real SDKs: the agent's own provider (the fake
// Anthropic API) answers 529 overloaded to every request, and its fallback (an OpenAI-compatible
// fake) works. The instance succeeds on the fallback; run.jsonl says where each call went and why,
// `show` and `show --json` say it too, and the spend is priced by the model that served it. The
// same recipe without `fallback:` fails with class overloaded, as before, and never reaches the other server.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { computeCost, emptyUsage } from '../../src/ai/usage.js';
import { runRecipeFile } from '../../src/orchestrator/run-recipe.js';
import type { ResultFile } from '../../src/run/run-state.js';
import { loadRunFolder } from '../../src/display/run-folder.js';
import { formatRunDetails } from '../../src/display/run-details-text.js';
import { runJson } from '../../src/display/run-json.js';
import { PlainLog } from '../../src/display/plain-log.js';
import type { RunEvent } from '../../src/run/run-events.js';
import { PassThrough } from 'node:stream';
import { startFakeAnthropic } from '../helpers/fake-anthropic-server.js';
import { startFakeOpenAI } from '../helpers/fake-openai-server.js';
import { cleanupTempDirs, tempProject } from './helpers/run-fixtures.js';

afterAll(() => cleanupTempDirs());

const PRICE = { input: 0.5, output: 1, cacheRead: 0.25, cacheWrite: 0 };

function recipe(localUrl: string, fallback: boolean): string {
  return `name: fallback
model: claude-haiku-4-5
providers:
  local:
    type: openai-compatible
    base_url: ${localUrl}
models:
  fake-model:
    price: { input: 0.5, output: 1, cache_read: 0.25 }
    context_window: 64k
    max_tokens: 8k
agents:
  worker:
    tools: [ls]
    summaries: extractive
${fallback ? '    fallback: [local/fake-model]\n' : ''}tasks:
  - id: count
    agent: worker
    retries: 0
    prompt: "Count the files"
`;
}

async function servers() {
  const anthropic = await startFakeAnthropic({
    respond: () => ({ kind: 'http-error', status: 529, errorType: 'overloaded_error', message: 'Overloaded' }),
  });
  const local = await startFakeOpenAI({
    respond: ({ body }) => {
      const messages = body.messages as { role: string }[];
      if (!messages.some((m) => m.role === 'assistant'))
        return {
          kind: 'chat',
          toolCalls: [{ name: 'ls', arguments: { path: '.' } }],
          usage: { prompt_tokens: 1000, completion_tokens: 30 },
        };
      return { kind: 'chat', text: 'counted 1 file', usage: { prompt_tokens: 1200, completion_tokens: 10 } };
    },
  });
  return { anthropic, local };
}

const env = (anthropicUrl: string) => ({
  ...process.env,
  ANTHROPIC_API_KEY: 'sk-test-primary',
  ANTHROPIC_BASE_URL: anthropicUrl,
  OPENAI_API_KEY: undefined,
  ORCHESTRATE_RETRY_BASE_MS: '1',
});

describe('fallback: providers', { timeout: 120_000 }, () => {
  it('moves the calls of an agent whose provider stays overloaded to its fallback, and says so', async () => {
    const { anthropic, local } = await servers();
    try {
      const dir = tempProject({ 'recipe.yaml': recipe(local.url, true), 'a.txt': 'a\n' });
      const r = await runRecipeFile(
        join(dir, 'recipe.yaml'),
        { cwd: dir },
        { runsDir: join(dir, 'runs'), env: env(anthropic.url) },
      );
      if (!r.ok) throw new Error(JSON.stringify(r));
      expect(r.outcome.status).toBe('succeeded');
      // The primary had its whole retry budget (4 requests) on the first call before the call moved.
      expect(anthropic.requests.length).toBeGreaterThanOrEqual(4);
      expect(local.requests.length).toBe(2);
      expect(local.rejected).toEqual([]);
      expect(local.requests.every((q) => q.body.model === 'fake-model')).toBe(true);
      // The primary's key never went to the fallback's server.
      expect(local.requests.some((q) => JSON.stringify(q.headers).includes('sk-test-primary'))).toBe(false);

      const events = readFileSync(join(r.outcome.dir, 'run.jsonl'), 'utf8')
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l) as Record<string, unknown>);
      const routes = events.filter((e) => e.type === 'call_fallback');
      expect(routes).toHaveLength(2);
      expect(routes[0]).toMatchObject({
        task: 'count',
        primary: 'anthropic/claude-haiku-4-5',
        served: 'local/fake-model',
        kind: 'overloaded',
        status: 529,
      });
      expect(routes[0]!.reason).toMatch(/^anthropic\/claude-haiku-4-5 failed: .*Overloaded.*no retries left/);
      // The next call skips the primary while it cools down, and says why.
      expect(routes[1]!.reason).toMatch(/anthropic\/claude-haiku-4-5 skipped while cooling down for \d+ s more/);
      // Spend follows the model that served: every call priced as fake-model on provider local.
      const usages = events.filter((e) => e.type === 'call_usage') as { model: string; provider?: string }[];
      expect(usages.map((u) => `${u.provider}/${u.model}`)).toEqual(['local/fake-model', 'local/fake-model']);
      const result = JSON.parse(readFileSync(join(r.outcome.dir, 'result.json'), 'utf8')) as ResultFile;
      const cost =
        computeCost({ cost: PRICE }, { ...emptyUsage(), input: 1000, output: 30 }).cost.total +
        computeCost({ cost: PRICE }, { ...emptyUsage(), input: 1200, output: 10 }).cost.total;
      expect(result.usage.cost).toBeCloseTo(cost, 12);
      expect(Object.keys(result.providers)).toEqual(['local']);

      const folder = loadRunFolder(r.outcome.dir);
      const text = formatRunDetails(folder);
      expect(text).toContain('fallback: 2 calls went to local/fake-model instead of anthropic/claude-haiku-4-5');
      // The plain log says when a call moved because the primary failed (not each cooled-down skip).
      const out = new PassThrough();
      let logged = '';
      out.on('data', (d: Buffer) => (logged += d.toString()));
      const plain = new PlainLog(out);
      for (const e of events) plain.handle(e as unknown as RunEvent);
      expect(logged.match(/call moved to/g)).toHaveLength(1);
      expect(logged).toContain('count: call moved to local/fake-model (anthropic/claude-haiku-4-5 overloaded 529)');
      const json = runJson(folder) as { instances: { fallbacks?: { served: string; calls: number }[] }[] };
      expect(json.instances[0]!.fallbacks).toMatchObject([{ served: 'local/fake-model', calls: 2 }]);
    } finally {
      await anthropic.close();
      await local.close();
    }
  });

  it('without fallback: the instance fails overloaded as before and the other server is never asked', async () => {
    const { anthropic, local } = await servers();
    try {
      const dir = tempProject({ 'recipe.yaml': recipe(local.url, false) });
      const r = await runRecipeFile(
        join(dir, 'recipe.yaml'),
        { cwd: dir },
        { runsDir: join(dir, 'runs'), env: env(anthropic.url) },
      );
      if (!r.ok) throw new Error(JSON.stringify(r));
      expect(r.outcome.status).toBe('failed');
      const result = JSON.parse(readFileSync(join(r.outcome.dir, 'result.json'), 'utf8')) as ResultFile;
      expect(result.instances[0]).toMatchObject({ status: 'failed', failure: 'overloaded' });
      expect(anthropic.requests).toHaveLength(4);
      expect(local.requests).toHaveLength(0);
      expect(readFileSync(join(r.outcome.dir, 'run.jsonl'), 'utf8')).not.toContain('call_fallback');
    } finally {
      await anthropic.close();
      await local.close();
    }
  });
});
