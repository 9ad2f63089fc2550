// Learned context windows are shared across a run's threads: two agents on their own worker
// threads talk to one OpenAI-compatible server whose real window (55k) is smaller than the
// recipe's models: entry says (200k). The first agent's overflow states the window; the
// coordinator records it in run.jsonl and passes it to the other thread, whose running session
// switches to it, so the second agent (held to small steps until then, then as chatty as the
// first) never overflows. Without the sharing it overflows once on its own.
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { runRecipeFile } from '../../../src/orchestrator/run-recipe.js';
import type { RunEvent } from '../../../src/run/run-events.js';
import { readRunLog } from '../../../src/run/run-store.js';
import { foldEvents } from '../../../src/run/run-fold.js';
import { SUMMARIZER_SYSTEM_PROMPT } from '../../../src/session/summarize.js';
import { startFakeOpenAI, type FakeOpenAI } from '../../helpers/fake-openai-server.js';
import { cleanupTempDirs, tempProject } from '../helpers/run-fixtures.js';

afterAll(() => cleanupTempDirs());

const WINDOW = 55_000;
const CHATTY =
  `${'I am weighing every caller, every edge case and every test before the next step. '.repeat(500)}`.slice(0, 40_000);
const CHATTY_TURNS = 7;

type Body = { messages: { role: string; content: unknown }[] };
const firstUser = (body: Body) => JSON.stringify(body.messages.find((m) => m.role === 'user')?.content ?? '');
const isSummary = (body: Body) =>
  typeof body.messages[0]?.content === 'string' &&
  body.messages[0].content.startsWith(SUMMARIZER_SYSTEM_PROMPT.slice(0, 60));
const agentOf = (body: Body) =>
  firstUser(body).includes('Task A') ? 'A' : firstUser(body).includes('Task B') ? 'B' : '?';

describe('learned windows across threads', { timeout: 180_000 }, () => {
  it("the second agent never overflows once the first learned the server's window", async () => {
    const served = { A: 0, B: 0, small: 0 };
    let server: FakeOpenAI | undefined;
    const overflowed = () => server!.requests.some((q) => q.promptTokens > WINDOW);
    server = await startFakeOpenAI({
      contextWindow: WINDOW,
      respond: ({ body }) => {
        if (isSummary(body))
          return { kind: 'chat', text: '## Goal\nWork through the steps.\n\n## Progress\nSome steps done.' };
        const who = agentOf(body);
        if (who === 'B' && !overflowed()) {
          // Small steps (distinct paths: no loop) until the other agent has met the server's limit.
          served.small++;
          return {
            kind: 'chat',
            text: `Looking around (${served.small}).`,
            toolCalls: [{ name: 'ls', arguments: { path: `.${'/.'.repeat(served.small)}` } }],
          };
        }
        const n = who === 'A' ? ++served.A : ++served.B;
        if (n > CHATTY_TURNS) return { kind: 'chat', text: `${who} done` };
        return {
          kind: 'chat',
          text: `Step ${n} of ${who}. ${CHATTY}`,
          toolCalls: [{ name: 'ls', arguments: { path: `./${'x/..'.repeat(n)}` } }],
        };
      },
    });
    try {
      const dir = tempProject({
        'recipe.yaml': `name: shared-windows
providers:
  local:
    type: openai-compatible
    base_url: ${server.url}
models:
  fake-model:
    price: { input: 0, output: 0 }
    context_window: 200k
    max_tokens: 8k
agents:
  worker: { tools: [ls], provider: local, model: fake-model, summaries: extractive }
tasks:
  - id: a
    agent: worker
    prompt: "Task A: take your steps."
  - id: b
    agent: worker
    prompt: "Task B: take your steps."
`,
      });
      const r = await runRecipeFile(
        join(dir, 'recipe.yaml'),
        { cwd: dir },
        { runsDir: join(dir, 'runs'), agentsPerThread: 1, env: { ...process.env } },
      );
      if (!r.ok) throw new Error(JSON.stringify(r));
      expect(server.rejected).toEqual([]);
      expect(r.outcome.status).toBe('succeeded');
      const over = server.requests.filter((q) => q.promptTokens > WINDOW);
      // The first agent met the limit (once); the second, already chatty past 55k in all, never did.
      expect(over.length).toBeGreaterThanOrEqual(1);
      expect(over.map((q) => agentOf(q.body as Body))).toEqual(over.map(() => 'A'));
      expect(served.B).toBe(CHATTY_TURNS + 1);
      const bTokens = server.requests.filter((q) => agentOf(q.body as Body) === 'B' && !isSummary(q.body as Body));
      expect(Math.max(...bTokens.map((q) => q.promptTokens))).toBeLessThanOrEqual(WINDOW);
      // Recorded once in run.jsonl, by the agent that learned it, so a resume starts from it.
      const events: RunEvent[] = readRunLog(join(r.outcome.dir, 'run.jsonl')).events;
      const learned = events.filter((e) => e.type === 'window_learned');
      expect(learned).toHaveLength(1);
      expect(learned[0]).toMatchObject({
        by: 'a',
        provider: 'local',
        model: 'fake-model',
        window: WINDOW,
        baseUrl: server.url,
      });
      expect(foldEvents(events).learnedWindows).toEqual([
        { provider: 'local', baseUrl: server.url, model: 'fake-model', window: WINDOW },
      ]);
    } finally {
      await server.close();
    }
  });
});
