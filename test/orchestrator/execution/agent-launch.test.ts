// Ports and permits end to end, through the real Anthropic SDK against the fake Messages API on
// 127.0.0.1: agents talking over ports, and a rate limit enforced where the requests arrive.
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import type { FakeAnthropic, RespondInput, ResponseSpec } from '../../helpers/fake-anthropic-server.js';
import {
  CHECK_ITEM,
  checkItemsRecipe,
  type RunOutcome,
  runOnFakeAnthropic,
  withFakeAnthropic,
} from '../../helpers/fake-anthropic-run.js';
import {
  cleanupTempDirs,
  conversationKey,
  conversationResponder,
  events,
  isSummaryRequest,
  ofType,
  requestText,
  tempProject,
} from '../helpers/run-fixtures.js';

afterAll(() => cleanupTempDirs());

/** Whether a run.jsonl under <project>/runs holds `text` yet. */
function runLogHas(project: string, text: string): boolean {
  const runs = join(project, 'runs');
  if (!project || !existsSync(runs)) return false;
  return readdirSync(runs).some((r) => {
    const log = join(runs, r, 'run.jsonl');
    return existsSync(log) && readFileSync(log, 'utf8').includes(text);
  });
}

/** Resolves once `ready()` holds, checking every 10 ms (a wait on a condition, never on a duration). */
async function waitFor(ready: () => boolean): Promise<void> {
  while (!ready()) await new Promise((r) => setTimeout(r, 10));
}

/** Agent `checker` (defined by `agent`) checks items a and b against the fake API: ls, then an answer. */
async function runCheckers(
  name: string,
  agent: string,
  check: (server: FakeAnthropic, outcome: RunOutcome) => void,
): Promise<void> {
  await withFakeAnthropic({ respond: conversationResponder([CHECK_ITEM]) }, async (server) => {
    const { outcome } = await runOnFakeAnthropic(server, checkItemsRecipe({ name, items: ['a', 'b'], agent }));
    expect(outcome.status).toBe('succeeded');
    check(server, outcome);
  });
}

describe('agent launch (real SDK, fake Anthropic API)', () => {
  it('two agents exchange messages over ports and each sees the other one in its next model request', async () => {
    const respond = conversationResponder(
      ['alice', 'bob'].map((me) => {
        const other = me === 'alice' ? 'bob' : 'alice';
        return {
          match: new RegExp(`You are ${me}`),
          turns: [
            { tools: [{ name: 'send_message', args: { to: other, text: `hello ${other}, this is ${me}` } }] },
            { tools: [{ name: 'bash', args: { command: 'sleep 0.4' } }] },
            { text: `${me} is done` },
          ],
        };
      }),
    );
    await withFakeAnthropic({ respond }, async (server) => {
      const { outcome } = await runOnFakeAnthropic(
        server,
        `name: talk
model: claude-haiku-4-5
concurrency: 2
agents:
  talker: { tools: [send_message, bash] }
tasks:
  - id: alice
    agent: talker
    prompt: "You are alice. Say hello to bob."
  - id: bob
    agent: talker
    prompt: "You are bob. Say hello to alice."
`,
      );
      expect(outcome.status).toBe('succeeded');
      for (const me of ['alice', 'bob']) {
        const other = me === 'alice' ? 'bob' : 'alice';
        const mine = server.requests.filter(
          (q) => !isSummaryRequest(q.body) && conversationKey(q.body).includes(`You are ${me}`),
        );
        expect(mine).toHaveLength(3);
        const heard = mine.map((q) => requestText(q.body).includes(`hello ${me}, this is ${other}`));
        // Once the peer message arrived it stays in context: it is first seen in some request and in every later one.
        const first = heard.indexOf(true);
        expect(first).toBeGreaterThanOrEqual(0);
        expect(heard.slice(first).every(Boolean)).toBe(true);
        expect(requestText(mine[first]!.body)).toContain(`peer-message from=\\"${other}\\"`);
      }
      const messages = ofType(events(outcome.dir), 'message');
      expect(messages.map((m) => `${m.from}->${m.to}`).sort()).toEqual(['alice->bob', 'bob->alice']);
    });
  });

  it('a model declared under models: is called by its id within its output limit, and its usage is priced by the declaration', async () => {
    await withFakeAnthropic({ respond: conversationResponder([CHECK_ITEM]) }, async (server) => {
      const { outcome } = await runOnFakeAnthropic(
        server,
        `name: future-model
model: claude-future-7
models:
  claude-future-7: { price: { input: 2, output: 10 }, max_tokens: 20k }
agents:
  checker: { tools: [ls] }
tasks:
  - id: check
    agent: checker
    prompt: "Check item a"
`,
      );
      expect(outcome.status).toBe('succeeded');
      expect(server.requests.length).toBeGreaterThanOrEqual(3); // two turns and the handoff summary
      for (const q of server.requests) {
        expect(q.body.model).toBe('claude-future-7');
        expect(q.body.max_tokens).toBeLessThanOrEqual(20_000);
      }
      const u = outcome.usage;
      expect(u.cost).toBeGreaterThan(0);
      expect(u.cost).toBeCloseTo((u.input * 2 + u.output * 10 + u.cacheRead * 0.2 + u.cacheWrite * 2.5) / 1e6, 12);
    });
  });

  it('a permit-enforced rate limit never lets more than N requests per window reach the API', async () => {
    const arrivals: number[] = [];
    const responder = conversationResponder([CHECK_ITEM]);
    const respond: typeof responder = (req) => {
      arrivals.push(Date.now());
      return responder(req);
    };
    await withFakeAnthropic({ respond }, async (server) => {
      const windowMs = 1_000;
      const { outcome } = await runOnFakeAnthropic(
        server,
        checkItemsRecipe({ name: 'limited', items: ['a', 'b', 'c', 'd'], top: ['concurrency: 4', 'rate_limit: 3'] }),
        { run: { rateWindowMs: windowMs } },
      );
      expect(outcome.status).toBe('succeeded');
      // 2 turns per agent, and each agent's handoff summary: those take permits like every call.
      expect(arrivals).toHaveLength(12);
      // In any window of windowMs starting at an arrival, at most 3 requests arrived.
      for (const t of arrivals)
        expect(arrivals.filter((u) => u >= t && u < t + windowMs).length).toBeLessThanOrEqual(3);
      // And the limit did make requests wait (12 requests at 3 per window need four windows).
      expect(Math.max(...arrivals) - Math.min(...arrivals)).toBeGreaterThanOrEqual(3 * windowMs);
      expect(ofType(events(outcome.dir), 'permit_wait').length).toBeGreaterThan(0);
    });
  });

  it('a 429 from the API pauses every agent on that model (pause, not kill) for the delay the server asked', async () => {
    const arrivals: { t: number; status: number; agent: string; first: boolean }[] = [];
    const responder = conversationResponder([CHECK_ITEM]);
    const itemOf = (req: RespondInput) => /Check item (\w)/.exec(conversationKey(req.body))?.[1] ?? '?';
    let project = '';
    let limited = false;
    let probe: string | undefined;
    // Agents whose first reply waited until the coordinator had logged the pause.
    const held = new Set<string>();
    let paused: Promise<void> | undefined;
    const respond = async (req: RespondInput): Promise<ResponseSpec> => {
      const agent = itemOf(req);
      const first = (req.body.messages as unknown[]).length === 1;
      // The first request of item b is refused once, with retry-after-ms.
      if (!limited && agent === 'b') {
        limited = true;
        arrivals.push({ t: Date.now(), status: 429, agent, first });
        // The others get their first reply only once the coordinator has logged the pause (a call
        // granted before it heard of the 429 is rightly not held back), so their next calls are
        // asked for during the pause. An event, not a guess about how long the report takes.
        paused = waitFor(() => runLogHas(project, '"type":"rate_limited"'));
        return { kind: 'http-error', status: 429, headers: { 'retry-after-ms': '600' } };
      }
      arrivals.push({ t: Date.now(), status: 200, agent, first });
      // The run's first call goes alone (it learns the provider's limits from its headers): it is
      // answered at once.
      probe ??= agent;
      if (first && agent !== probe && agent !== 'b') {
        held.add(agent);
        await waitFor(() => paused !== undefined);
        await paused;
      }
      return responder(req);
    };
    await withFakeAnthropic({ respond }, async (server) => {
      const { outcome } = await runOnFakeAnthropic(
        server,
        checkItemsRecipe({ name: 'paused', items: ['a', 'b', 'c'], top: ['concurrency: 3'] }),
        { onProject: (dir) => (project = dir) },
      );
      expect(outcome.status).toBe('succeeded');
      const limitedAt = arrivals.find((a) => a.status === 429)!.t;
      const rl = ofType(events(outcome.dir), 'rate_limited');
      expect(rl).toHaveLength(1);
      expect(rl[0]).toMatchObject({ key: 'check.b', status: 429, delayMs: 600 });
      // b's retry, and every later call of an agent held until the pause was logged, reached the
      // API only after the 600 ms the server asked for: the pause started when b's worker got the
      // 429, at or after limitedAt. A slower machine only makes them later, never earlier.
      expect(held.size).toBeGreaterThan(0);
      const afterPause = arrivals.filter(
        (a) => a.t > limitedAt && (a.agent === 'b' || (held.has(a.agent) && !a.first)),
      );
      expect(afterPause.length).toBeGreaterThanOrEqual(1 + held.size);
      for (const a of afterPause)
        expect(a.t - limitedAt, `${a.agent} arrived in the pause`).toBeGreaterThanOrEqual(599);
      expect(arrivals.filter((a) => a.status === 200)).toHaveLength(6 + 3); // 2 turns and a handoff summary per agent
    });
  });

  it("with a real model each instance's handoff summary is written by the model, and its key decisions reach plan.md with their source", async () => {
    await runCheckers('summaries', '{ tools: [ls] }', (server, outcome) => {
      // One summary request per instance, holding that instance's whole conversation.
      const asked = server.requests.filter((q) => isSummaryRequest(q.body));
      expect(asked.map((q) => /Check item (\w)/.exec(JSON.stringify(q.body.messages))?.[1]).sort()).toEqual(['a', 'b']);
      const done = ofType(events(outcome.dir), 'instance_done');
      for (const d of done) expect(d.summary).toContain('Kept it small');
      const plan = readFileSync(join(outcome.dir, 'plan.md'), 'utf8');
      expect(plan).toContain('**Kept it small**: the task needed no more _(check.a)_');
      expect(plan).toContain('_(check.b)_');
    });
  });

  it('an agent with summaries: extractive makes no summary call: its handoff summary is built from the conversation', async () => {
    await runCheckers('cheap', '{ tools: [ls], summaries: extractive }', (server, outcome) => {
      expect(server.requests.filter((q) => isSummaryRequest(q.body))).toEqual([]);
      expect(server.requests).toHaveLength(4); // 2 turns per agent, nothing else
      for (const d of ofType(events(outcome.dir), 'instance_done')) expect(d.summary).toMatch(/## Goal\n.*Check item/);
    });
  });

  it('a recipe that needs the Anthropic API with no key stops with exit 2 and says how to go on', async () => {
    const { main } = await import('../../../src/cli/main.js');
    const dir = tempProject({ 'recipe.yaml': 'name: keyless\ntasks:\n  - id: t\n    prompt: hi\n' });
    let err = '';
    const code = await main([join(dir, 'recipe.yaml'), '--run-dir', join(dir, 'runs')], {
      stdout: () => undefined,
      stderr: (t) => (err += t),
      cwd: dir,
      env: { PATH: process.env.PATH },
    });
    expect(code).toBe(2);
    expect(err).toContain('ANTHROPIC_API_KEY');
    expect(err).toContain('--provider scripted');
  });
});
