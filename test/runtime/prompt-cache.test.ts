// Prompt caching through the real SDK against the fake Messages API with its cache simulation:
// sessions of one agent definition send a byte-identical prefix (tools + shared system part), and
// summaries are asked for inside the conversation, so they read what its last request wrote.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { getModel } from '../../src/ai/models.js';
import type { Model } from '../../src/ai/types.js';
import { createAgentSession, type CreateAgentSessionOptions } from '../../src/index.js';
import { parseSummary } from '../../src/session/parse-summary.js';
import { SUMMARIZER_SYSTEM_PROMPT } from '../../src/session/summarize.js';
import {
  startFakeAnthropic,
  type FakeAnthropic,
  type RecordedRequest,
  type RespondInput,
  type ResponseSpec,
} from '../helpers/fake-anthropic-server.js';

const servers: FakeAnthropic[] = [];
const dirs: string[] = [];
afterAll(async () => {
  for (const s of servers) await s.close();
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

const SUMMARY = [
  '## Goal',
  'Rename log() to logger.info()',
  '',
  '## Constraints & Preferences',
  '- (none)',
  '',
  '## Progress',
  '### Done',
  '- [x] Renamed in src/a.ts',
  '### In Progress',
  '- (none)',
  '### Blocked',
  '- (none)',
  '',
  '## Key Decisions',
  '- **Keep the import**: other files use it',
  '',
  '## Next Steps',
  '1. Run the tests',
  '',
  '## Critical Context',
  '- (none)',
].join('\n');

function tempRepo(name: string, agentsMd?: string): string {
  const root = mkdtempSync(join(tmpdir(), 'orch-cache-'));
  dirs.push(root);
  const cwd = join(root, name);
  mkdirSync(cwd);
  writeFileSync(join(cwd, 'a.ts'), 'log("x")\n'.repeat(200));
  if (agentsMd) writeFileSync(join(cwd, 'AGENTS.md'), agentsMd);
  return cwd;
}

/** A worker that reads a file twice, answers, then writes the summary when asked for one. */
function worker(
  opts: { toolCallOnSummary?: boolean; summaryTooLong?: boolean } = {},
): (req: RespondInput) => ResponseSpec {
  let summaryCalls = 0;
  return ({ body }) => {
    const messages = body.messages as { role: string; content: unknown }[];
    const last = JSON.stringify(messages[messages.length - 1]);
    if (
      last.includes('Summarize the conversation above') ||
      JSON.stringify(body.system ?? '').includes('handoff summaries')
    ) {
      summaryCalls++;
      if (opts.summaryTooLong && summaryCalls === 1)
        return {
          kind: 'http-error',
          status: 400,
          errorType: 'invalid_request_error',
          message: 'prompt is too long: 210000 tokens > 200000 maximum',
        };
      if (opts.toolCallOnSummary && summaryCalls === 1)
        return { kind: 'message', content: [{ type: 'tool_use', name: 'read', input: { path: 'a.ts' } }] };
      return { kind: 'message', content: [{ type: 'text', text: SUMMARY }] };
    }
    const turn = messages.filter((m) => m.role === 'assistant').length;
    if (turn < 2)
      return {
        kind: 'message',
        content: [{ type: 'tool_use', id: `toolu_${turn}`, name: 'read', input: { path: 'a.ts' } }],
      };
    return { kind: 'message', content: [{ type: 'text', text: 'Renamed every call.' }] };
  };
}

async function serve(respond: (req: RespondInput) => ResponseSpec): Promise<{ server: FakeAnthropic; model: Model }> {
  const server = await startFakeAnthropic({ respond, promptCache: true, strictTurns: true });
  servers.push(server);
  return { server, model: { ...getModel('claude-sonnet-4-5')!, baseUrl: server.url } };
}

function sessionOptions(
  model: Model,
  cwd: string,
  extra: Partial<CreateAgentSessionOptions> = {},
): CreateAgentSessionOptions {
  return {
    cwd,
    inMemory: true,
    model,
    apiKey: 'sk-test',
    tools: ['read', 'grep'],
    appendSystemPrompt: 'You rename loggers.',
    defaultSkills: false,
    thinkingLevel: 'off',
    streamOptions: { maxRetries: 0 },
    retry: { baseDelayMs: 1 },
    notify: () => {},
    ...extra,
  };
}

/** The request body without its cache breakpoints (they move from request to request). */
function unmarked(value: unknown): unknown {
  return JSON.parse(JSON.stringify(value, (k, v: unknown) => (k === 'cache_control' ? undefined : v)));
}

function share(r: RecordedRequest): number {
  const c = r.cache!;
  return c.read / (c.read + c.write + c.input);
}

describe('prompt caching (fake API with its cache simulation)', () => {
  it('sends a byte-identical prefix from every session of one agent: the second one reads tools + shared system text', async () => {
    const { server, model } = await serve(worker());
    const a = await createAgentSession(sessionOptions(model, tempRepo('repo-a', 'Use tabs in repo a.')));
    await a.prompt('Rename log() in this repo');
    const b = await createAgentSession(sessionOptions(model, tempRepo('repo-b')));
    await b.prompt('Rename log() in this repo');
    const firstA = server.requests[0]!;
    const firstB = server.requests.find((r) => r.index > 0 && r.body.messages.length === 1)!;
    expect(JSON.stringify(firstB.body.tools)).toBe(JSON.stringify(firstA.body.tools));
    expect(JSON.stringify(firstB.body.system[0])).toBe(JSON.stringify(firstA.body.system[0]));
    expect(firstA.body.system[0].cache_control).toEqual({ type: 'ephemeral' });
    // What differs per session comes after the breakpoint.
    expect(firstA.body.system[1].text).toContain('repo-a');
    expect(firstA.body.system[1].text).toContain('Use tabs in repo a.');
    expect(firstB.body.system[1].text).toContain('repo-b');
    expect(JSON.stringify(firstA.body.system[0])).not.toMatch(/repo-a|Current date/);
    // The first session wrote the shared prefix; the second reads all of it and writes only its own part.
    expect(firstA.cache!.read).toBe(0);
    expect(firstB.cache!.read).toBeGreaterThan(0);
    expect(firstB.cache!.write).toBeLessThan(firstA.cache!.write);
    // Every later turn of a session reads all that its previous request read or wrote.
    for (const repo of ['repo-a', 'repo-b']) {
      const own = server.requests.filter((r) => r.body.system[1].text.includes(repo));
      expect(own).toHaveLength(3);
      for (let i = 1; i < own.length; i++)
        expect(own[i]!.cache!.read).toBe(own[i - 1]!.cache!.read + own[i - 1]!.cache!.write);
    }
    await a.dispose();
    await b.dispose();
  });

  it('asks for the handoff summary inside the conversation: same system, tools and messages as its last request, no tool_choice, read from the cache', async () => {
    const { server, model } = await serve(worker());
    const session = await createAgentSession(sessionOptions(model, tempRepo('repo-s')));
    await session.prompt('Rename log() in this repo');
    const turns = server.requests.length;
    const result = await session.compact('This summary is a handoff.', { keepRecentTokens: 0 });
    expect(server.requests).toHaveLength(turns + 1);
    const last = server.requests[turns - 1]!.body;
    const summary = server.requests[turns]!;
    expect(unmarked(summary.body.system)).toEqual(unmarked(last.system));
    expect(JSON.stringify(summary.body.tools)).toBe(JSON.stringify(last.tools));
    expect(summary.body.tool_choice).toBeUndefined();
    // The conversation as sent, then the final answer, then the instruction.
    const sent = unmarked(last.messages) as unknown[];
    expect((unmarked(summary.body.messages) as unknown[]).slice(0, sent.length)).toEqual(sent);
    const instruction = JSON.stringify(summary.body.messages[summary.body.messages.length - 1]);
    expect(instruction).toContain('do not call any tool');
    expect(instruction).toContain('Additional focus: This summary is a handoff.');
    expect(share(summary)).toBeGreaterThanOrEqual(0.8);
    expect(parseSummary(result.summary).done).toEqual(['Renamed in src/a.ts']);
    await session.dispose();
  });

  it('asks once more with tool_choice none when the model calls a tool instead of summarizing (that request reads only tools + system)', async () => {
    const { server, model } = await serve(worker({ toolCallOnSummary: true }));
    const session = await createAgentSession(sessionOptions(model, tempRepo('repo-t')));
    await session.prompt('Rename log() in this repo');
    const turns = server.requests.length;
    const result = await session.compact(undefined, { keepRecentTokens: 0 });
    const [first, second] = server.requests.slice(turns);
    expect(first!.body.tool_choice).toBeUndefined();
    expect(second!.body.tool_choice).toEqual({ type: 'none' });
    expect(unmarked(second!.body.messages)).toEqual(unmarked(first!.body.messages));
    // A different tool_choice invalidates the cached messages (the API documents it): tools and
    // the shared system part are still read, the conversation is written again.
    expect(second!.cache!.read).toBeLessThan(first!.cache!.read);
    expect(second!.cache!.read).toBeGreaterThan(0);
    expect(parseSummary(result.summary).goal).toBe('Rename log() to logger.info()');
    await session.dispose();
  });

  it('falls back to the transcript when the conversation is refused as too long, and uses the transcript without caching', async () => {
    const { server, model } = await serve(worker({ summaryTooLong: true }));
    const session = await createAgentSession(sessionOptions(model, tempRepo('repo-o')));
    await session.prompt('Rename log() in this repo');
    const turns = server.requests.length;
    await session.compact(undefined, { keepRecentTokens: 0 });
    const fallback = server.requests[turns + 1]!.body;
    expect(fallback.system[0].text).toBe(SUMMARIZER_SYSTEM_PROMPT);
    expect(fallback.messages).toHaveLength(1);
    expect(JSON.stringify(fallback.messages)).toContain('<conversation>');
    await session.dispose();

    const plain = await serve(worker());
    const uncached = await createAgentSession(
      sessionOptions(plain.model, tempRepo('repo-n'), { streamOptions: { maxRetries: 0, cacheRetention: 'none' } }),
    );
    await uncached.prompt('Rename log() in this repo');
    const n = plain.server.requests.length;
    await uncached.compact(undefined, { keepRecentTokens: 0 });
    expect(plain.server.requests[n]!.body.system[0].text).toBe(SUMMARIZER_SYSTEM_PROMPT);
    expect(plain.server.requests[n]!.rawBody).not.toContain('cache_control');
    await uncached.dispose();
  });
});
