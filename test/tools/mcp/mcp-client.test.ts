// The MCP client end to end: a scripted agent (createAgentSession, the real runtime) uses the
// tools of real MCP servers built on the SDK: the stdio fixture (in the bwrap sandbox) and the
// Streamable HTTP / SSE fixture on 127.0.0.1.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { httpServer, results, stdioServer, textOf, useMcpAgents } from './helpers.js';

const mcp = useMcpAgents();
const { agent } = mcp;

describe('MCP client', () => {
  it('a scripted agent lists and calls the tools of a stdio and an HTTP server', async () => {
    const offered: string[][] = [];
    const session = await agent(
      [stdioServer('alpha'), httpServer('beta', mcp.http().url, { headers: { Authorization: 'Bearer tok-123' } })],
      [
        (ctx) => {
          offered.push((ctx.tools ?? []).map((t) => t.name));
          return {
            tools: [
              { name: 'mcp__alpha__echo', args: { text: 'hi' } },
              { name: 'mcp__beta__add', args: { a: 2, b: 3 } },
            ],
          };
        },
        { text: 'done' },
      ],
    );
    await session.prompt('go');
    expect(offered[0]).toEqual(
      expect.arrayContaining(['read', 'mcp__alpha__echo', 'mcp__alpha__slow', 'mcp__beta__echo', 'mcp__beta__add']),
    );
    const [echo, add] = results(session);
    expect(echo!.isError).toBe(false);
    expect(textOf(echo!)).toBe('alpha: hi');
    expect(textOf(add!)).toBe('5');
    expect((add!.details as { structuredContent?: unknown }).structuredContent).toEqual({ sum: 5 });
    expect(mcp.http().seenHeaders.every((h) => h.authorization === 'Bearer tok-123')).toBe(true);
  });

  it('a 70-character tool name is cut to 64 provider-safe characters that map back', async () => {
    const long = `a.very.long.tool.name_${'x'.repeat(48)}`;
    expect(long.length).toBe(70);
    let offered: string[] = [];
    const session = await agent(
      [stdioServer('alpha', { env: { MCP_FIXTURE_LONG_TOOL: long } })],
      [
        (ctx) => {
          offered = (ctx.tools ?? []).map((t) => t.name);
          const name = offered.find((n) => n.startsWith('mcp__alpha__a_very'))!;
          return { tools: [{ name }] };
        },
        { text: 'done' },
      ],
    );
    await session.prompt('go');
    const name = offered.find((n) => n.startsWith('mcp__alpha__a_very'))!;
    expect(name.length).toBeLessThanOrEqual(64);
    expect(name).toMatch(/^[A-Za-z0-9_-]+$/);
    expect(new Set(offered).size).toBe(offered.length);
    expect(textOf(results(session)[0]!)).toBe('long tool ran');
  });

  it('the server sees the env its config gives and not the provider key', async () => {
    const before = process.env.ANTHROPIC_API_KEY;
    process.env.ANTHROPIC_API_KEY = 'sk-ant-test-not-for-servers';
    try {
      for (const sandbox of ['workspace', 'none'] as const) {
        const session = await agent(
          [stdioServer('alpha', { sandbox, env: { GREETING: 'hello' } })],
          [
            {
              tools: [
                { name: 'mcp__alpha__env', args: { name: 'GREETING' } },
                { name: 'mcp__alpha__env', args: { name: 'ANTHROPIC_API_KEY' } },
              ],
            },
            { text: 'done' },
          ],
        );
        await session.prompt('go');
        const [greeting, key] = results(session);
        expect(textOf(greeting!)).toBe('GREETING=hello');
        expect(textOf(key!)).toBe('(unset)');
      }
    } finally {
      if (before === undefined) delete process.env.ANTHROPIC_API_KEY;
      else process.env.ANTHROPIC_API_KEY = before;
    }
  });

  it('results: isError and exceptions are error results, images pass, resources are described, long output is cut with the full text kept', async () => {
    const session = await agent(
      [stdioServer('alpha')],
      [
        {
          tools: [
            { name: 'mcp__alpha__fail' },
            { name: 'mcp__alpha__throws' },
            { name: 'mcp__alpha__image' },
            { name: 'mcp__alpha__lines', args: { n: 3000 } },
            { name: 'mcp__alpha__add', args: { a: 'two', b: 3 } },
          ],
        },
        { text: 'done' },
      ],
    );
    await session.prompt('go');
    const [fail, thrown, image, lines, bad] = results(session);
    expect(fail!.isError).toBe(true);
    expect(textOf(fail!)).toContain('the widget is broken');
    expect(thrown!.isError).toBe(true);
    expect(textOf(thrown!)).toContain('handler exploded');
    expect(image!.content.some((c) => c.type === 'image' && c.mimeType === 'image/png')).toBe(true);
    expect(textOf(image!)).toContain('[resource file:///notes.txt (text/plain)]\nnote text');
    expect(textOf(image!)).toContain('[resource link: big.bin file:///big.bin');
    expect(textOf(lines!)).toMatch(/\[Output truncated: 2000 of 3000 lines.*Full output: (\S+)/);
    const full = /Full output: (\S+)/.exec(textOf(lines!))![1]!;
    expect(readFileSync(full, 'utf8').split('\n')).toHaveLength(3000);
    expect(bad!.isError).toBe(true);
    expect(textOf(bad!)).toMatch(/Invalid arguments for tool "mcp__alpha__add"/);
  });

  it('allow and deny lists pick tools; a pattern naming an unconfigured server is a configuration error', async () => {
    let offered: string[] = [];
    const session = await agent(
      [stdioServer('alpha'), httpServer('beta', mcp.http().url, { headers: { Authorization: 'Bearer tok-123' } })],
      [
        (ctx) => {
          offered = (ctx.tools ?? []).map((t) => t.name);
          return { text: 'done' };
        },
      ],
      { tools: ['read', 'mcp__alpha__*', 'mcp__beta__add'], deny: ['mcp__alpha__crash', 'mcp__alpha__s*'] },
    );
    await session.prompt('go');
    expect(offered).toContain('mcp__alpha__echo');
    expect(offered).toContain('mcp__beta__add');
    expect(offered).not.toContain('mcp__beta__echo');
    expect(offered).not.toContain('mcp__alpha__crash');
    expect(offered).not.toContain('mcp__alpha__slow');
    await expect(agent([stdioServer('alpha')], [], { tools: ['mcp__github__create_issue'] })).rejects.toThrow(
      /names the MCP server "github", which is not configured\. Configured: alpha/,
    );
  });

  it('the older HTTP+SSE transport works with headers', async () => {
    const session = await agent(
      [httpServer('gamma', mcp.http().sseUrl, { transport: 'sse', headers: { Authorization: 'Bearer tok-123' } })],
      [{ tools: [{ name: 'mcp__gamma__echo', args: { text: 'old' } }] }, { text: 'done' }],
    );
    await session.prompt('go');
    expect(textOf(results(session)[0]!)).toBe('beta: old');
  });
});
