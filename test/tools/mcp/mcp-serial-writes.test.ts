// Calls of one model turn to one MCP server: only tools the server marks readOnlyHint overlap; the
// others run one at a time in the model's order (the reference memory server reads, changes and
// rewrites its file per call, so eight writes at once kept 1-4 of 8 entities). A server entry's
// `parallel: true|false` overrides that. Driven by a scripted agent (the real runtime) against the
// MCP authors' own @modelcontextprotocol/server-memory and a strict server that fails when two of
// its writes are in flight at once.
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import type { ScriptedTurn } from '../../../src/ai/scripted.js';
import { results, stdioServer, textOf, useMcpAgents } from './helpers.js';

const mcp = useMcpAgents();
const STRICT = fileURLToPath(new URL('../../fixtures/mcp/strict-server.mjs', import.meta.url));
const MEMORY = createRequire(import.meta.url).resolve('@modelcontextprotocol/server-memory/dist/index.js');

function strictServer(extra: Parameters<typeof stdioServer>[1] = {}) {
  return stdioServer('strict', { args: [STRICT], ...extra });
}

/** The JSON the strict server's `stats` tool answered (the last result). */
function stats(session: Parameters<typeof results>[0]): {
  order: string[];
  maxWritesInFlight: number;
  maxInFlight: number;
} {
  return JSON.parse(textOf(results(session).at(-1)!));
}

describe('MCP calls of one turn: reads overlap, writes to one server run one at a time', () => {
  it('eight create_entities in one turn on the reference memory server keep 8 of 8 entities', async () => {
    const dir = mcp.tempDir();
    const file = join(dir, 'memory.jsonl');
    const names = Array.from({ length: 8 }, (_, i) => `entity-${i + 1}`);
    const session = await mcp.agent(
      [
        stdioServer('memory', {
          args: [MEMORY],
          env: { MEMORY_FILE_PATH: file },
          // Its file is in a folder of this test, outside the agent's (a sandboxed server may write only there).
          sandbox: 'none',
        }),
      ],
      [
        {
          tools: names.map((name) => ({
            name: 'mcp__memory__create_entities',
            args: { entities: [{ name, entityType: 'test', observations: [`made ${name}`] }] },
          })),
        },
        { tools: [{ name: 'mcp__memory__read_graph', args: {} }] },
        { text: 'done' },
      ],
    );
    await session.prompt('remember eight things');
    const all = results(session);
    expect(all.slice(0, 8).every((r) => !r.isError)).toBe(true);
    const graph = JSON.parse(textOf(all[8]!)) as { entities: { name: string }[] };
    expect(graph.entities.map((e) => e.name).sort()).toEqual([...names].sort());
    const lines = readFileSync(file, 'utf8').trim().split('\n');
    expect(lines.filter((l) => (JSON.parse(l) as { type: string }).type === 'entity')).toHaveLength(8);
  }, 60_000);

  it('writes to a strict server run one at a time in the order given, while its read-only tools overlap', async () => {
    const turns: ScriptedTurn[] = [
      {
        tools: [
          { name: 'mcp__strict__write', args: { key: 'a' } },
          { name: 'mcp__strict__peek', args: { together: 2 } },
          { name: 'mcp__strict__write', args: { key: 'b' } },
          { name: 'mcp__strict__peek', args: { together: 2 } },
          { name: 'mcp__strict__write', args: { key: 'c' } },
        ],
      },
      { tools: [{ name: 'mcp__strict__stats', args: {} }] },
      { text: 'done' },
    ];
    const session = await mcp.agent([strictServer()], turns);
    await session.prompt('go');
    const batch = results(session).slice(0, 5);
    expect(batch.map((r) => [r.isError, textOf(r)])).toEqual([
      [false, 'wrote a'],
      [false, 'peeked with 1 others'],
      [false, 'wrote b'],
      [false, 'peeked with 1 others'],
      [false, 'wrote c'],
    ]);
    expect(stats(session)).toMatchObject({ order: ['a', 'b', 'c'], maxWritesInFlight: 1 });
  }, 60_000);

  it('parallel: false runs even the read-only tools one at a time; parallel: true lets writes overlap (and the strict server refuses them)', async () => {
    const serial = await mcp.agent(
      [strictServer({ parallel: false })],
      [
        {
          tools: [
            { name: 'mcp__strict__peek', args: { together: 1 } },
            { name: 'mcp__strict__peek', args: { together: 1 } },
            { name: 'mcp__strict__write', args: { key: 'a' } },
          ],
        },
        { tools: [{ name: 'mcp__strict__stats', args: {} }] },
        { text: 'done' },
      ],
    );
    await serial.prompt('go');
    expect(
      results(serial)
        .slice(0, 3)
        .every((r) => !r.isError),
    ).toBe(true);
    expect(stats(serial)).toMatchObject({ maxInFlight: 1 });

    const parallel = await mcp.agent(
      [strictServer({ parallel: true })],
      [
        {
          tools: [
            // Each waits until both run at once: with the writes serialized neither would come back.
            { name: 'mcp__strict__write', args: { key: 'a', meet: 2 } },
            { name: 'mcp__strict__write', args: { key: 'b', meet: 2 } },
          ],
        },
        { tools: [{ name: 'mcp__strict__stats', args: {} }] },
        { text: 'done' },
      ],
    );
    await parallel.prompt('go');
    const [a, b] = results(parallel);
    expect(textOf(a!)).toBe('write a: two writes in flight at once');
    expect(textOf(b!)).toBe('write b: two writes in flight at once');
    expect(stats(parallel)).toMatchObject({ maxWritesInFlight: 2 });
  }, 60_000);
});

describe('one server shared by several agents (scope: run)', () => {
  it('writes made at once through one connection reach the server one at a time, in the order made; read-only calls still overlap', async () => {
    const { McpConnection } = await import('../../../src/tools/mcp/connection.js');
    const connection = new McpConnection(strictServer({ scope: 'run' }), {
      cwd: mcp.tempDir(),
      notify: () => {},
    });
    try {
      const signal = new AbortController().signal;
      // As two agents of the run (or the run's host on their behalf) would call it: in the same tick.
      const calls = [
        connection.callTool('write', { key: 'first' }, signal),
        connection.callTool('peek', { together: 2 }, signal),
        connection.callTool('write', { key: 'second' }, signal),
        connection.callTool('peek', { together: 2 }, signal),
      ];
      const done = await Promise.all(calls);
      expect(done.map((r) => [r.isError ?? false, (r.content[0] as { text: string }).text])).toEqual([
        [false, 'wrote first'],
        [false, 'peeked with 1 others'],
        [false, 'wrote second'],
        [false, 'peeked with 1 others'],
      ]);
      const seen = await connection.callTool('stats', {}, signal);
      expect(JSON.parse((seen.content[0] as { text: string }).text)).toMatchObject({
        order: ['first', 'second'],
        maxWritesInFlight: 1,
      });
    } finally {
      await connection.close();
    }
  }, 60_000);
});
