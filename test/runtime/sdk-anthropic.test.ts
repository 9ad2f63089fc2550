// The SDK factory through the real Anthropic SDK against the fake Messages API: a custom zod tool,
// a retry of an overloaded API (reported by the session), and a model-written compaction summary.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import type { AgentTool } from '../../src/agent/types.js';
import { getModel } from '../../src/ai/models.js';
import type { Model } from '../../src/ai/types.js';
import { createAgentSession } from '../../src/index.js';
import type { AgentSessionEvent } from '../../src/runtime/session-events.js';
import {
  respondLikeScript,
  startFakeAnthropic,
  type FakeAnthropic,
  type FakeTurn,
} from '../helpers/fake-anthropic-server.js';

const servers: FakeAnthropic[] = [];
const dirs: string[] = [];
afterAll(async () => {
  for (const s of servers) await s.close();
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

async function setup(turns: FakeTurn[]): Promise<{ server: FakeAnthropic; model: Model; cwd: string }> {
  const server = await startFakeAnthropic({ respond: respondLikeScript(turns) });
  servers.push(server);
  const cwd = mkdtempSync(join(tmpdir(), 'orch-sdk-'));
  dirs.push(cwd);
  return { server, model: { ...getModel('claude-haiku-4-5')!, baseUrl: server.url }, cwd };
}

const weather: AgentTool<z.ZodObject<{ city: z.ZodString }>> = {
  name: 'get_weather',
  description: 'Current weather for a city',
  parameters: z.object({ city: z.string().describe('City name') }),
  execute: async (_id, { city }) => ({ content: [{ type: 'text', text: `${city}: 21°C, sunny` }] }),
};

describe('createAgentSession with the Anthropic provider', () => {
  it("runs a custom tool and retries an overloaded API within the session's retry budget", async () => {
    const { server, model, cwd } = await setup([
      { error: { status: 529, message: 'Overloaded' } },
      { tools: [{ name: 'get_weather', args: { city: 'Lyon' }, id: 'toolu_w' }] },
      { text: 'It is 21°C and sunny in Lyon.' },
    ]);
    const session = await createAgentSession({
      cwd,
      inMemory: true,
      model,
      apiKey: 'sk-test',
      tools: [],
      customTools: [weather],
      thinkingLevel: 'off',
      // The session's budget goes down to the provider, which retries; the session reports it.
      retry: { baseDelayMs: 1 },
      defaultSkills: false,
      contextFiles: false,
      notify: () => {},
    });
    const events: AgentSessionEvent[] = [];
    session.subscribe((e) => events.push(e));
    await session.prompt('Weather in Lyon?');
    expect(session.lastAssistantText()).toBe('It is 21°C and sunny in Lyon.');
    expect(server.requests).toHaveLength(3);
    const tools = (server.requests[1]!.body as { tools: { name: string; input_schema: { properties: object } }[] })
      .tools;
    expect(tools.map((t) => t.name)).toEqual(['get_weather']);
    expect(tools[0]!.input_schema.properties).toHaveProperty('city');
    expect(JSON.stringify(server.requests[2]!.body)).toContain('Lyon: 21°C, sunny');
    expect(events.filter((e) => e.type.startsWith('auto_retry')).map((e) => e.type)).toEqual([
      'auto_retry_start',
      'auto_retry_end',
    ]);
  });

  it('asks the model for the compaction summary (summaries: "model")', async () => {
    const summary = '## Goal\nAnswer questions\n\n## Critical Context\n- the user likes short answers';
    const { server, model, cwd } = await setup([{ text: 'a'.repeat(2000) }, { text: 'b' }, { text: summary }]);
    const session = await createAgentSession({
      cwd,
      inMemory: true,
      model,
      apiKey: 'sk-test',
      tools: [],
      thinkingLevel: 'off',
      compaction: { keepRecentTokens: 10 },
      defaultSkills: false,
      contextFiles: false,
      notify: () => {},
    });
    await session.prompt('one');
    await session.prompt('two');
    const result = await session.compact();
    expect(result.source).toBe('model');
    expect(result.summary).toContain('the user likes short answers');
    const request = server.requests[2]!.body as {
      system: { text: string }[];
      messages: { content: { text: string }[] }[];
    };
    expect(JSON.stringify(request.system)).toContain('summaries');
    expect(request.messages[0]!.content[0]!.text).toContain('<conversation>');
    expect(session.messages[0]).toMatchObject({ role: 'compactionSummary' });
  });
});
