// A model served with a 55k window where the table (or the recipe's models:) says 200k: a chatty
// model (40k-character answers) changes six files. The first overflow states the real window;
// from then on compaction follows it, so the task finishes with no stop, in at most 40 requests,
// through the real SDKs against both fake servers (Anthropic Messages, OpenAI Chat Completions).
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeEach, describe, expect, it } from 'vitest';
import { forgetLearnedWindows, learnedContextWindow } from '../../src/ai/learned-windows.js';
import { getModel } from '../../src/ai/models.js';
import { modelForProvider } from '../../src/ai/provider-config.js';
import type { Model } from '../../src/ai/types.js';
import { createAgentSession } from '../../src/index.js';
import type { AgentSessionEvent } from '../../src/runtime/session-events.js';
import { SUMMARIZER_SYSTEM_PROMPT } from '../../src/session/summarize.js';
import { startFakeAnthropic, type FakeAnthropic } from '../helpers/fake-anthropic-server.js';
import { isSummaryRequest } from '../helpers/summary-request.js';
import { startFakeOpenAI, type FakeOpenAI } from '../helpers/fake-openai-server.js';

const WINDOW = 55_000;
const FILES = ['f1.ts', 'f2.ts', 'f3.ts', 'f4.ts', 'f5.ts', 'f6.ts'];
const CHATTY =
  `Let me think this through step by step before I touch the file. ${'I am considering every caller, every edge case and the tests. '.repeat(640)}`.slice(
    0,
    40_000,
  );
const SUMMARY =
  '## Goal\nUpdate six files (f1.ts to f6.ts): replace TODO with DONE.\n\n## Progress\nSee the modified files list.';

const closers: (() => Promise<void>)[] = [];
const dirs: string[] = [];
afterAll(async () => {
  for (const c of closers) await c();
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});
beforeEach(() => forgetLearnedWindows());

function workspace(): string {
  const cwd = mkdtempSync(join(tmpdir(), 'orch-window-'));
  dirs.push(cwd);
  for (const f of FILES) writeFileSync(join(cwd, f), `// ${f}\nexport const state = 'TODO';\n`);
  return cwd;
}

type Action = { text: string; tool?: { name: string; args: Record<string, unknown> } };

/**
 * The "model": it looks at the workspace (what is left to do) and at the last tool result in
 * its context (whether it has just read the file it is about to change), as a model re-reads a
 * file whose content a summary dropped.
 */
function nextAction(cwd: string, lastToolResultText: string): Action {
  const todo = FILES.find((f) => readFileSync(join(cwd, f), 'utf8').includes('TODO'));
  if (!todo) return { text: 'All six files are updated.' };
  if (lastToolResultText.includes(`// ${todo}`)) {
    return {
      text: `Now I change ${todo}. ${CHATTY}`,
      tool: { name: 'edit', args: { path: todo, oldText: "'TODO'", newText: "'DONE'" } },
    };
  }
  return { text: `First I read ${todo}. ${CHATTY}`, tool: { name: 'read', args: { path: todo } } };
}

interface Outcome {
  events: AgentSessionEvent[];
  model: Model;
  error?: unknown;
}

async function runTask(model: Model, cwd: string, apiKey: string): Promise<Outcome> {
  const session = await createAgentSession({
    cwd,
    inMemory: true,
    model,
    apiKey,
    tools: ['read', 'edit'],
    thinkingLevel: 'off',
    defaultSkills: false,
    contextFiles: false,
    notify: () => {},
  });
  const events: AgentSessionEvent[] = [];
  session.subscribe((e) => events.push(e));
  let error: unknown;
  try {
    await session.prompt('Change TODO to DONE in f1.ts to f6.ts, one file at a time.');
  } catch (err) {
    error = err;
  }
  return { events, model: session.model, error };
}

function expectFinished(o: Outcome, cwd: string, requests: number): void {
  expect(o.error).toBeUndefined();
  for (const f of FILES) expect(readFileSync(join(cwd, f), 'utf8')).toContain("'DONE'");
  expect(requests).toBeLessThanOrEqual(40);
  expect(o.events.some((e) => e.type === 'run_stopped')).toBe(false);
  // The first overflow taught the window; compaction followed it from then on.
  expect(o.model.contextWindow).toBe(WINDOW);
  const compactions = o.events.filter((e) => e.type === 'auto_compaction_end');
  expect(compactions.length).toBeGreaterThanOrEqual(2);
  expect(compactions.every((e) => e.type === 'auto_compaction_end' && e.result !== undefined)).toBe(true);
}

describe('a window learned from the server (55k served, 200k in the table)', () => {
  it('Anthropic: finishes the six-file task in at most 40 requests', async () => {
    const cwd = workspace();
    let overflows = 0;
    const server: FakeAnthropic = await startFakeAnthropic({
      respond: ({ body }) => {
        const tokens = Math.ceil(JSON.stringify([body.system, body.messages, body.tools]).length / 4);
        if (tokens > WINDOW) {
          overflows++;
          return {
            kind: 'http-error',
            status: 400,
            errorType: 'invalid_request_error',
            message: `prompt is too long: ${tokens} tokens > ${WINDOW} maximum`,
          };
        }
        const usage = { input_tokens: tokens, output_tokens: 10 };
        if (isSummaryRequest(body)) return { kind: 'message', content: [{ type: 'text', text: SUMMARY }], usage };
        const messages = body.messages as { role: string; content: unknown }[];
        const last = messages[messages.length - 1]!;
        const resultText =
          last.role === 'user' && Array.isArray(last.content)
            ? JSON.stringify(last.content.filter((b: { type: string }) => b.type === 'tool_result'))
            : '';
        const a = nextAction(cwd, resultText);
        const content: (
          | { type: 'text'; text: string }
          | { type: 'tool_use'; name: string; input: Record<string, unknown> }
        )[] = [{ type: 'text', text: a.text }];
        if (a.tool) content.push({ type: 'tool_use', name: a.tool.name, input: a.tool.args });
        return { kind: 'message', content, usage, chunkSize: 4000 };
      },
    });
    closers.push(() => server.close());
    const model: Model = { ...getModel('claude-haiku-4-5')!, baseUrl: server.url };
    expect(model.contextWindow).toBe(200_000);
    const outcome = await runTask(model, cwd, 'sk-test');
    expectFinished(outcome, cwd, server.requests.length);
    expect(overflows).toBeGreaterThanOrEqual(1);
    expect(learnedContextWindow(model)).toBe(WINDOW);
  }, 60_000);

  // vllm: its flat error body, which the OpenAI SDK reported as "400 status code (no body)".
  it.each(['openai', 'vllm'] as const)(
    'OpenAI-compatible (%s wording): finishes the six-file task in at most 40 requests',
    async (wording) => {
      const cwd = workspace();
      const server: FakeOpenAI = await startFakeOpenAI({
        contextWindow: WINDOW,
        overflowWording: wording,
        respond: ({ body }) => {
          const messages = body.messages as { role: string; content: unknown }[];
          if (
            typeof messages[0]?.content === 'string' &&
            messages[0].content.startsWith(SUMMARIZER_SYSTEM_PROMPT.slice(0, 60))
          )
            return { kind: 'chat', text: SUMMARY, chunkSize: 4000 };
          const last = messages[messages.length - 1]!;
          const a = nextAction(cwd, last.role === 'tool' ? String(last.content) : '');
          return {
            kind: 'chat',
            text: a.text,
            toolCalls: a.tool ? [{ name: a.tool.name, arguments: a.tool.args }] : [],
            chunkSize: 4000,
          };
        },
      });
      closers.push(() => server.close());
      const model = modelForProvider({ name: 'local', type: 'openai-compatible', baseUrl: server.url }, 'fake-model', {
        contextWindow: 200_000,
        maxTokens: 32_000,
        cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 },
      });
      const outcome = await runTask(model, cwd, 'sk-test');
      expectFinished(outcome, cwd, server.requests.length);
      expect(server.rejected).toEqual([]);
      expect(learnedContextWindow(model)).toBe(WINDOW);
    },
    60_000,
  );
});
