// The provider limits a run learned are kept across resume (issue 41): the run folder's
// learned-limits.json holds them, and the resumed coordinator paces by them at once, with no
// first-call probe. End to end: the real Anthropic SDK on worker threads against a fake API that
// states its limits in anthropic-ratelimit-* headers. Run 1 learns them in task a and is
// interrupted as task b's two agents make their first call. On resume the fake API holds the
// first call's answer until the second call has arrived: with the limits known, both go out
// together; before, the second waited for the first one's headers (a probe), which the log names
// in a permit_wait "first call". Nothing here measures time.
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { LearnedLimits } from '../../../src/orchestrator/pacing/learned-limits.js';
import { readLearnedLimits } from '../../../src/orchestrator/pacing/learned-limits-file.js';
import { resumeRunDir, runRecipeFile } from '../../../src/orchestrator/run-recipe.js';
import { startFakeAnthropic, type RespondInput, type ResponseSpec } from '../../helpers/fake-anthropic-server.js';
import {
  cleanupTempDirs,
  conversationKey,
  conversationResponder,
  events,
  ofType,
  tempProject,
} from '../helpers/run-fixtures.js';

afterAll(() => cleanupTempDirs());

/** Far from binding: whatever a resume refills of them in a moment fits every call here. */
const HEADERS = {
  'anthropic-ratelimit-requests-limit': '1000000',
  'anthropic-ratelimit-requests-remaining': '999990',
  'anthropic-ratelimit-input-tokens-limit': '60000000',
  'anthropic-ratelimit-input-tokens-remaining': '59990000',
  'anthropic-ratelimit-output-tokens-limit': '10000000',
  'anthropic-ratelimit-output-tokens-remaining': '9990000',
};

const RECIPE = `name: limits-resume
model: claude-haiku-4-5
concurrency: 2
agents:
  checker: { tools: [] }
tasks:
  - id: a
    agent: checker
    prompt: "Check item first"
  - id: b
    needs: [a]
    for_each: [x, y]
    agent: checker
    prompt: "Check item \${{ item }}"
`;

describe('learned limits across resume', { timeout: 120_000 }, () => {
  it('a resumed run paces by the limits learned before: no first-call probe', async () => {
    const answer = conversationResponder([{ match: /Check item/, turns: [{ text: 'checked' }] }]);
    const withHeaders = (spec: ResponseSpec): ResponseSpec =>
      spec.kind === 'message' ? { ...spec, headers: HEADERS } : spec;
    const interrupt = new AbortController();
    let resumed = false;
    /** Resumed run: the first call of task b is answered once the second one has arrived. */
    const bCalls: string[] = [];
    let secondArrived: () => void = () => {};
    const second = new Promise<void>((r) => (secondArrived = r));
    const server = await startFakeAnthropic({
      respond: async (req: RespondInput) => {
        const key = conversationKey(req.body);
        const isB = /Check item [xy]/.test(key);
        if (isB && !resumed) interrupt.abort();
        if (isB && resumed && bCalls.length < 2) {
          bCalls.push(key);
          if (bCalls.length === 2) secondArrived();
          else await second;
        }
        return withHeaders(answer(req));
      },
    });
    try {
      const dir = tempProject({ 'recipe.yaml': RECIPE });
      const env = { ...process.env, ANTHROPIC_API_KEY: 'sk-test-limits', ANTHROPIC_BASE_URL: server.url };
      const first = await runRecipeFile(
        join(dir, 'recipe.yaml'),
        { cwd: dir },
        { runsDir: join(dir, 'runs'), env, signal: interrupt.signal },
      );
      if (!first.ok) throw new Error(JSON.stringify(first));
      expect(first.outcome.status).toBe('interrupted');
      const runDir = first.outcome.dir;
      // What run 1 learned is in its folder: the limits and a short hash of the key, never the key.
      expect(readLearnedLimits(runDir)).toEqual([
        expect.objectContaining({
          provider: 'anthropic',
          model: 'claude-haiku-4-5',
          vendor: 'anthropic',
          limits: { requests: 1_000_000, inputTokens: 60_000_000, outputTokens: 10_000_000 },
        }),
      ]);
      expect(readFileSync(join(runDir, 'learned-limits.json'), 'utf8')).not.toContain('sk-test-limits');

      resumed = true;
      const again = await resumeRunDir(runDir, { cwd: dir, runsDir: join(dir, 'runs'), env });
      if (!again.ok) throw new Error(JSON.stringify(again));
      expect(again.outcome.status).toBe('succeeded');
      expect(bCalls).toHaveLength(2);
      const resumedEvents = events(runDir).slice(events(runDir).findIndex((e) => e.type === 'run_resume'));
      const waits = ofType(resumedEvents, 'permit_wait');
      expect(waits.filter((w) => /first call/.test(w.reason))).toEqual([]);
      expect(existsSync(join(runDir, 'learned-limits.json'))).toBe(true);
    } finally {
      await server.close();
    }
  });
});

describe('LearnedLimits.restore', () => {
  const record = {
    provider: 'anthropic',
    model: 'm',
    keyHash: 'k',
    vendor: 'anthropic' as const,
    limits: { requests: 600, inputTokens: 6000 },
  };
  const call = { uncachedInput: 3000, cachedInput: 0, maxOutput: 0 };

  it('starts each bucket at what the provider refilled since the last event: a quarter window, a quarter', () => {
    const now = 1_000_000;
    const limits = new LearnedLimits({ now: () => now, windowMs: 60_000 });
    limits.restore([record], 15_000);
    // 1500 of 6000 input tokens are there; 3000 need 1500 more at 100 per second: 15 s.
    expect(limits.waitTime('m', 'anthropic', call)).toBe(15_000);
    expect(limits.binding('m', 'anthropic', call)).toContain('input tokens per minute (6000, learned)');
    // A reservation comes from the buckets: no probe.
    expect(limits.reserve('m', 'anthropic', call)).toMatchObject({ amounts: { inputTokens: 3000 } });
  });

  it('full after a whole window idle, and what a response stated since wins', () => {
    const limits = new LearnedLimits({ windowMs: 60_000 });
    limits.learn('m', 'anthropic', {
      vendor: 'anthropic',
      keyHash: 'k',
      limits: { inputTokens: { limit: 9000, remaining: 9000 } },
    });
    limits.restore([record, { ...record, model: 'n' }], 10 * 60_000);
    expect(limits.waitTime('n', 'anthropic', call)).toBe(0);
    expect(limits.records().find((r) => r.model === 'm')?.limits).toEqual({ inputTokens: 9000 });
  });
});
