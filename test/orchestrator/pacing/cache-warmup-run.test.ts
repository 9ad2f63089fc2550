// A fan-out through the real coordinator, worker threads and SDK against the fake API with its
// prompt-cache simulation: with the warm-up, the wave's first request goes out alone and every
// other instance's first request reads the shared prefix (tools + the agent's system text) that
// it wrote, instead of writing it again. result.json carries the cache reads and writes.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { resolveModel } from '../../../src/ai/models.js';
import type { ResultFile } from '../../../src/run/run-state.js';
import {
  CHECK_ITEM,
  checkItemsRecipe,
  runOnFakeAnthropic,
  withFakeAnthropic,
} from '../../helpers/fake-anthropic-run.js';
import { isSummaryRequest } from '../../helpers/summary-request.js';
import { cleanupTempDirs, conversationResponder } from '../helpers/run-fixtures.js';

afterAll(() => cleanupTempDirs());

const ITEMS = ['a', 'b', 'c', 'd', 'e', 'f'];

describe('cache warm-up in a fan-out run', { timeout: 120_000 }, () => {
  it('sends the first request alone; the other first requests read the prefix it wrote', async () => {
    const respond = conversationResponder([CHECK_ITEM]);
    // Replies take a while to start, so without the warm-up the six first requests would overlap and all write.
    await withFakeAnthropic({ respond, promptCache: { firstByteDelayMs: 30 } }, async (server) => {
      const { dir, outcome } = await runOnFakeAnthropic(
        server,
        checkItemsRecipe({
          name: 'warm',
          items: ITEMS,
          agent: '{ system: "You check items carefully.", tools: [ls, read] }',
          top: ['concurrency: 6'],
        }),
      );
      expect(outcome.status).toBe('succeeded');
      const firsts = server.requests.filter((q) => q.body?.messages?.length === 1 && !isSummaryRequest(q.body));
      expect(firsts).toHaveLength(ITEMS.length);
      const [leader, ...rest] = firsts;
      expect(leader!.cache!.read).toBe(0);
      for (const q of rest) {
        expect(q.cache!.read).toBeGreaterThan(0);
        expect(q.cache!.write).toBeLessThan(leader!.cache!.write);
      }
      // Every handoff summary is asked for inside its conversation: it reads what the last turn wrote.
      const summaries = server.requests.filter((q) => isSummaryRequest(q.body));
      expect(summaries).toHaveLength(ITEMS.length);
      const firstUser = (q: (typeof summaries)[number]): string =>
        JSON.stringify(q.body.messages[0], (k, v: unknown) => (k === 'cache_control' ? undefined : v));
      for (const q of summaries) {
        const last = server.requests
          .filter((t) => t.index < q.index && !isSummaryRequest(t.body) && firstUser(t) === firstUser(q))
          .pop()!;
        expect(q.cache!.read).toBe(last.cache!.read + last.cache!.write);
      }
      // result.json: cache reads and writes per instance and for the run, and what they saved.
      const result = JSON.parse(readFileSync(join(outcome.dir, 'result.json'), 'utf8')) as ResultFile;
      const read = server.requests.reduce((n, q) => n + (q.cache?.read ?? 0), 0);
      const written = server.requests.reduce((n, q) => n + (q.cache?.write ?? 0), 0);
      expect(result.usage.cacheRead).toBe(read);
      expect(result.usage.cacheWrite).toBe(written);
      expect(result.instances.every((i) => i.usage.cacheRead > 0)).toBe(true);
      // Saved against uncached prices: reads at 0.1x instead of 1x, writes at 1.25x.
      const price = resolveModel('claude-haiku-4-5', 'anthropic').cost;
      const saved = (read * (price.input - price.cacheRead) - written * (price.cacheWrite - price.input)) / 1e6;
      expect(result.usage.cacheSaved).toBeCloseTo(saved, 10);
      expect(saved).toBeGreaterThan(0);
      // `orchestrate show` prints the run's and every instance's cache figures.
      const { main } = await import('../../../src/cli/main.js');
      let shown = '';
      expect(
        await main(['show', outcome.dir, '--no-color'], {
          stdout: (t) => (shown += t),
          stderr: () => undefined,
          cwd: dir,
          env: { PATH: process.env.PATH },
        }),
      ).toBe(0);
      const share = Math.round(
        (100 * read) / server.requests.reduce((n, q) => n + q.cache!.read + q.cache!.write + q.cache!.input, 0),
      );
      expect(shown).toContain(`cache: ${share}% of input read`);
      expect(shown.match(/usage: .* · cache: \d+% of input read/g)).toHaveLength(ITEMS.length);
    });
  });
});
