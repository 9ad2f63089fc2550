// A fan-out at the provider's ceiling, end to end: 12 agents on real worker threads, the real
// Anthropic SDK against a fake API that enforces its limits as token buckets the way the
// documentation describes them (uncached input tokens per minute binding, 429 + retry-after beyond,
// whole seconds only, as the real API sends it) and states them in anthropic-ratelimit-* headers
// on every response. The run learns the limits
// from the headers and paces by them: no agent fails and almost no request is refused. (Before,
// the whole first wave went out at once and most of it came back 429.) Nothing here measures time.
import { afterAll, describe, expect, it } from 'vitest';
import type { ResultFile } from '../../src/run/run-state.js';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { CHECK_ITEM, checkItemsRecipe, runOnFakeAnthropic, withFakeAnthropic } from '../helpers/fake-anthropic-run.js';
import type { RespondInput, ResponseSpec } from '../helpers/fake-anthropic-server.js';
import { bodyTokens, ProviderLimitEnforcer } from '../helpers/provider-rate-limits.js';
import { cleanupTempDirs, conversationResponder, events, ofType } from './helpers/run-fixtures.js';

afterAll(() => cleanupTempDirs());

describe('a fan-out paced by the limits the provider states', { timeout: 180_000 }, () => {
  it('12 agents against a binding input-token limit: none fails, at most a couple of 429s', async () => {
    // 600k input tokens per minute (10k per second) but only 5k left when the run starts: the
    // first wave (12 calls of ~1-2k tokens each) does not fit, and the rest comes as it refills.
    const enforcer = new ProviderLimitEnforcer('anthropic', {
      windowMs: 60_000,
      requests: 60_000,
      inputTokens: 600_000,
      outputTokens: 100_000_000,
      startShare: 1 / 120,
    });
    const responder = conversationResponder([CHECK_ITEM]);
    let refused = 0;
    const stated: Record<string, string>[] = [];
    const respond = (req: RespondInput): ResponseSpec => {
      const spec = responder(req);
      if (spec.kind !== 'message') return spec;
      const input = bodyTokens(req.body);
      const admission = enforcer.admit({ input, maxTokens: Number(req.body.max_tokens) });
      if (!admission.ok) {
        refused++;
        stated.push(admission.headers);
        return {
          kind: 'http-error',
          status: 429,
          errorType: 'rate_limit_error',
          message: `input tokens per minute exceeded (${input} asked)`,
          headers: admission.headers,
        };
      }
      enforcer.finish(admission.ticket, 10);
      return {
        ...spec,
        usage: { input_tokens: input, output_tokens: 1 },
        deltaUsage: { output_tokens: 10 },
        headers: admission.headers,
      };
    };
    await withFakeAnthropic({ respond }, async (server) => {
      const { outcome } = await runOnFakeAnthropic(
        server,
        checkItemsRecipe({ name: 'paced', items: [...'abcdefghijkl'], top: ['concurrency: 12'] }),
        { apiKey: 'sk-test-paced' },
      );
      const result = JSON.parse(readFileSync(join(outcome.dir, 'result.json'), 'utf8')) as ResultFile;
      expect(result.instances.map((i) => i.status)).toEqual(Array(12).fill('done'));
      expect(outcome.status).toBe('succeeded');
      // 12 agents x (2 turns + a handoff summary).
      expect(enforcer.stats.admitted).toBe(36);
      expect(refused).toBeLessThanOrEqual(2);
      // What a 429 said is what the real API says: a wait in whole seconds, and nothing finer.
      for (const h of stated) {
        expect(h['retry-after']).toMatch(/^[1-9]\d*$/);
        expect(h['retry-after-ms']).toBeUndefined();
      }
      // The wait was the provider's limit, and the log says so.
      const waits = ofType(events(outcome.dir), 'permit_wait');
      expect(waits.some((w) => /input tokens per minute|first call/.test(w.reason))).toBe(true);
      // The key itself is nowhere in the run's log.
      expect(readFileSync(join(outcome.dir, 'run.jsonl'), 'utf8')).not.toContain('sk-test-paced');
    });
  });
});
