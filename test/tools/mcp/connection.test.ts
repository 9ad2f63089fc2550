// McpConnection and its stdio transport against servers that break the protocol, each a real
// process speaking raw newline-delimited JSON-RPC (written here, so it can misbehave in ways the
// SDK's server never would): an answer that is not a tool result, an answer cut off, a server
// that logs to stdout, a line over the SDK's 10 MB limit. And a server that stops for good in the
// middle of a call while its agent is stopped for it: the call says why, not "Operation aborted".
import { writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { createAgentSession } from '../../../src/runtime/create-agent-session.js';
import { McpConnection } from '../../../src/tools/mcp/connection.js';
import { httpServer, results, stdioServer, textOf, useMcpAgents } from './helpers.js';
// @ts-expect-error a plain ES module fixture without types
import { startHttpFixture } from '../../fixtures/mcp/http-server.mjs';

const { tempDir } = useMcpAgents();

/**
 * A raw MCP server: answers initialize and tools/list, and misbehaves as `mode` says.
 * `shape`: tools/call answers `content` as a string. `schemaless`: a listed tool has no inputSchema. `cut`: it writes the first half of its
 * answer as a line, then a progress notification (so the client's timeout starts after the cut
 * line has arrived), then nothing. `banner`: it logs a line to stdout instead of answering
 * initialize. `flood`: 11 MB without a newline, then it exits.
 */
const RAW_SERVER = `
import { createInterface } from 'node:readline';
const mode = process.argv[2];
const out = (m) => process.stdout.write(JSON.stringify(m) + '\\n');
if (mode === 'flood') process.stdout.write('x'.repeat(11 * 1024 * 1024), () => process.exit(4));
createInterface({ input: process.stdin }).on('line', (line) => {
  const m = JSON.parse(line);
  if (m.method === 'initialize') {
    if (mode === 'banner') return process.stdout.write('Weather server listening on stdio\\n');
    return out({ jsonrpc: '2.0', id: m.id, result: { protocolVersion: m.params.protocolVersion, capabilities: { tools: {} }, serverInfo: { name: 'raw', version: '1' } } });
  }
  if (m.method === 'tools/list' && mode === 'schemaless') return out({ jsonrpc: '2.0', id: m.id, result: { tools: [{ name: 'get', inputSchema: { type: 'object' } }, { name: 'bare' }] } });
  if (m.method === 'tools/list') return out({ jsonrpc: '2.0', id: m.id, result: { tools: [{ name: 'get', inputSchema: { type: 'object' } }] } });
  if (m.method === 'tools/call' && mode === 'shape') return out({ jsonrpc: '2.0', id: m.id, result: { content: 'sunny' } });
  if (m.method === 'tools/call' && mode === 'cut') {
    process.stdout.write(JSON.stringify({ jsonrpc: '2.0', id: m.id, result: { content: [] } }).slice(0, 30) + '\\n');
    out({ jsonrpc: '2.0', method: 'notifications/progress', params: { progressToken: m.params._meta.progressToken, progress: 1 } });
  }
});
`;

function rawConnection(mode: string, extra: { toolTimeoutMs?: number; initializeTimeoutMs?: number } = {}) {
  const dir = tempDir();
  const file = join(dir, 'raw-server.mjs');
  writeFileSync(file, RAW_SERVER);
  const notices: string[] = [];
  const connection = new McpConnection(
    stdioServer('raw', { command: process.execPath, args: [file, mode], sandbox: 'none', ...extra }),
    { cwd: dir, notify: (m) => notices.push(m) },
  );
  return { connection, notices };
}

async function failureOf(p: Promise<unknown>): Promise<string> {
  try {
    await p;
  } catch (err) {
    return err instanceof Error ? err.message : String(err);
  }
  throw new Error('expected a failure');
}

describe('an MCP server that breaks the protocol', () => {
  it('an answer that is not a tool result is one line naming the field, not a JSON dump of zod issues', async () => {
    const { connection } = rawConnection('shape');
    try {
      const message = await failureOf(connection.callTool('get', {}, new AbortController().signal));
      expect(message).toBe(
        'MCP tool "get" of server "raw" answered with what is not an MCP tool result (content: Invalid input: expected array, received string); the server is at fault, not the arguments.',
      );
    } finally {
      await connection.close();
    }
  });

  it('a tool list that is not valid MCP is one line naming the field (it was a JSON dump over a dozen lines)', async () => {
    const { connection } = rawConnection('schemaless');
    const message = await failureOf(connection.start());
    expect(message).toBe(
      'MCP server "raw" could not be started: its answer to tools/list is not valid MCP (tools.1.inputSchema: Invalid input: expected object, received undefined); the server is at fault: check its version, or report it to its authors',
    );
    await connection.close();
  });

  it('an answer cut off on its line: the timeout names what the server wrote instead', async () => {
    const { connection } = rawConnection('cut', { toolTimeoutMs: 1000 });
    try {
      const message = await failureOf(connection.callTool('get', {}, new AbortController().signal, () => undefined));
      expect(message).toBe(
        'MCP tool "get" of server "raw" timed out: no result and no progress for 1s (tool_timeout). Meanwhile the server wrote on stdout a line that is not a JSON-RPC message: "{\\"jsonrpc\\":\\"2.0\\",\\"id\\":2,\\"resul", which was dropped: that may have been its answer.',
      );
    } finally {
      await connection.close();
    }
  });

  it('a server that logs to stdout instead of answering initialize: the start failure quotes the line', async () => {
    const { connection } = rawConnection('banner', { initializeTimeoutMs: 3000 });
    const message = await failureOf(connection.start());
    expect(message).toBe(
      'MCP server "raw" could not be started: no answer to initialize in 3 s (initialize_timeout); it wrote on stdout a line that is not a JSON-RPC message: "Weather server listening on stdio"; a server\'s stdout may carry only MCP messages (logs go to stderr)',
    );
    await connection.close();
  });

  it('a line over 10 MB does not crash the process (it was an uncaught exception): the start failure says what came', async () => {
    const { connection } = rawConnection('flood');
    const message = await failureOf(connection.start());
    expect(message).toBe(
      'MCP server "raw" could not be started: its command `' +
        process.execPath +
        '` exited with code 4 before it answered initialize, and wrote nothing to stderr; on stdout it wrote a line over 10 MB (the most one message may be)',
    );
    await connection.close();
  });
});

describe('a server that stops for good during a call', () => {
  it('the call it cut off says the server exited and why, though its agent was stopped for it', async () => {
    const dir = tempDir();
    let stop: () => void = () => undefined;
    const unavailable: string[] = [];
    const session = await createAgentSession({
      cwd: dir,
      inMemory: true,
      provider: 'scripted',
      script: [
        { tools: [{ name: 'mcp__alpha__crash' }] },
        { tools: [{ name: 'mcp__alpha__crash' }] },
        { text: 'not reached' },
      ],
      tools: ['read'],
      mcp: {
        servers: [stdioServer('alpha', { sandbox: 'none' })],
        // As a run and `orchestrate agent` do: a required server gone for good stops the agent.
        onUnavailable: (_server, reason) => {
          unavailable.push(reason);
          stop();
        },
      },
      contextFiles: false,
      defaultSkills: false,
    });
    stop = () => void session.abort();
    try {
      await session.prompt('go').catch(() => undefined);
      expect(unavailable).toHaveLength(1);
      const second = results(session)[1];
      expect(second?.isError).toBe(true);
      expect(textOf(second!)).toMatch(
        /^MCP server "alpha" exited during the call to "crash": MCP server "alpha" stopped \(exit code 3\) after it had already been restarted once/,
      );
    } finally {
      await session.dispose();
    }
  });
});

/** An HTTP server on a free port of 127.0.0.1 that answers every request with `status` and an HTML page. */
async function htmlServer(status: number): Promise<{ url: string; server: Server }> {
  const server = createServer((req, res) => {
    req.resume();
    req.on('end', () =>
      res.writeHead(status, { 'content-type': 'text/html' }).end('<html><body><h1>Login required</h1></body></html>'),
    );
  });
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/mcp`, server };
}

describe('an HTTP server that answers with something other than MCP', () => {
  it('a 401 says the credentials were refused and where to look (it was the page, without the status)', async () => {
    const { url, server } = await htmlServer(401);
    const connection = new McpConnection(httpServer('remote', `${url}?token=secret`), {
      cwd: tempDir(),
      notify: () => undefined,
    });
    try {
      expect(await failureOf(connection.start())).toBe(
        `MCP server "remote" could not be started: HTTP 401 from ${url}: the server refused the credentials; check the Authorization (or other) header its entry sends under headers:, and that the \${VAR} in it holds a valid token (it answered: Login required)`,
      );
    } finally {
      await connection.close();
      server.close();
    }
  });

  it('a web page served with 200 is named as not an MCP endpoint', async () => {
    const { url, server } = await htmlServer(200);
    const connection = new McpConnection(httpServer('remote', url), { cwd: tempDir(), notify: () => undefined });
    try {
      expect(await failureOf(connection.start())).toBe(
        `MCP server "remote" could not be started: ${url} answered with text/html, not MCP (JSON or an event stream): is this the server's MCP endpoint (often /mcp, or /sse for the older transport)?`,
      );
    } finally {
      await connection.close();
      server.close();
    }
  });
});

describe('an HTTP server that stops between calls', () => {
  it('the next call names the connection and the URL (it was "fetch failed")', async () => {
    const fixture = (await startHttpFixture({ name: 'beta' })) as { url: string; close(): Promise<void> };
    const connection = new McpConnection(httpServer('beta', fixture.url), { cwd: tempDir(), notify: () => undefined });
    try {
      const first = await connection.callTool('echo', { text: 'a' }, new AbortController().signal);
      expect(first.content).toEqual([{ type: 'text', text: 'beta: a' }]);
      await fixture.close();
      const message = await failureOf(connection.callTool('echo', { text: 'b' }, new AbortController().signal));
      expect(message).toMatch(
        /^MCP tool "echo" of server "beta" failed: (connection closed by|connection refused at|connection reset by) http:\/\/127\.0\.0\.1:\d+\/mcp/,
      );
    } finally {
      await connection.close();
    }
  });
});
