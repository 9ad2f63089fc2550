// Why an MCP server did not start, as the user reads it: the line of stderr that says what went
// wrong (not the stack under it), the network reason under undici's "fetch failed", and the
// timeout that actually ran out (startup_timeout when it is the shorter one).
import { describe, expect, it } from 'vitest';
import { createAgentSession } from '../../../src/runtime/create-agent-session.js';
import { McpConnection, remoteFailure, stderrTail } from '../../../src/tools/mcp/connection.js';
import { closeSharedMcpServers } from '../../../src/tools/mcp/tool-source.js';
import { stdioServer, useMcpAgents } from './helpers.js';

const mcp = useMcpAgents();

describe('MCP start failures name their cause', () => {
  it("stderr: a Node server's missing module is the line kept, stack frames and punctuation dropped", () => {
    const node = [
      'node:internal/modules/cjs/loader:1210',
      '  throw err;',
      '  ^',
      '',
      "Error: Cannot find module '/srv/missing.mjs'",
      '    at Module._resolveFilename (node:internal/modules/cjs/loader:1207:15)',
      '    at node:internal/main/run_main_module:28:49 {',
      "  code: 'MODULE_NOT_FOUND',",
      '  requireStack: []',
      '}',
      '',
      'Node.js v20.20.2',
    ].join('\n');
    expect(stderrTail(node)).toBe(
      "Error: Cannot find module '/srv/missing.mjs' | code: 'MODULE_NOT_FOUND', | requireStack: [] | Node.js v20.20.2",
    );
    expect(stderrTail('starting\nsh: 1: foo: not found\n')).toBe('sh: 1: foo: not found');
    // Nothing that reads like an error: the last lines.
    expect(stderrTail('one\ntwo\nthree\nfour\nfive\n')).toBe('two | three | four | five');
  });

  it('network: refused, unknown host and reset connections say so, without the query (tokens travel there)', () => {
    const refused = Object.assign(new TypeError('fetch failed'), {
      cause: Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:4000'), { code: 'ECONNREFUSED' }),
    });
    expect(remoteFailure(refused, 'http://127.0.0.1:4000/mcp?token=secret')).toBe(
      'connection refused at http://127.0.0.1:4000/mcp (is the server running, on this port?)',
    );
    const unknown = Object.assign(new TypeError('fetch failed'), {
      cause: Object.assign(new Error('getaddrinfo ENOTFOUND mcp.invalid'), { code: 'ENOTFOUND' }),
    });
    expect(remoteFailure(unknown, 'https://mcp.invalid/mcp')).toBe(
      'host not found: mcp.invalid (https://mcp.invalid/mcp)',
    );
    // The SSE transport folds the cause into its message.
    expect(
      remoteFailure(
        new Error('SSE error: TypeError: fetch failed: connect ECONNREFUSED 127.0.0.1:1'),
        'http://127.0.0.1:1/sse',
      ),
    ).toMatch(/^connection refused at http:\/\/127\.0\.0\.1:1\/sse/);
  });

  it('a silent server: the shorter of startup_timeout and initialize_timeout is the one named', async () => {
    const silent = { command: process.execPath, args: ['-e', 'setInterval(() => {}, 1000)'], sandbox: 'none' as const };
    const short = new McpConnection(stdioServer('silent', { ...silent, startupTimeoutMs: 1000 }), {
      cwd: mcp.tempDir(),
      notify: () => {},
    });
    await expect(short.start()).rejects.toThrow(
      /^MCP server "silent" (could not be started: no answer to initialize in 1 s \(startup_timeout\)|did not start within 1s \(startup_timeout\))/,
    );
    await short.close();
    const init = new McpConnection(stdioServer('silent', { ...silent, initializeTimeoutMs: 500 }), {
      cwd: mcp.tempDir(),
      notify: () => {},
    });
    await expect(init.start()).rejects.toThrow(
      'MCP server "silent" could not be started: no answer to initialize in 500 ms (initialize_timeout); is it an MCP server speaking on stdin/stdout?',
    );
    await init.close();
  }, 30_000);

  it('a run server shared in a thread that failed before an agent came along is reported to that agent too', async () => {
    const broken = stdioServer('broken', {
      command: 'sh',
      args: ['-c', 'echo broken on purpose >&2; exit 2'],
      scope: 'run',
    });
    const heard: string[][] = [];
    const runId = `shared-failure-${process.pid}`;
    try {
      for (let i = 0; i < 2; i++) {
        const notices: string[] = [];
        heard.push(notices);
        const session = await createAgentSession({
          cwd: mcp.tempDir(),
          inMemory: true,
          provider: 'scripted',
          script: [{ text: 'done' }],
          tools: ['read'],
          mcp: { servers: [broken], runId },
          contextFiles: false,
          defaultSkills: false,
          notify: (m) => notices.push(m),
        });
        await session.prompt('go');
        await session.dispose();
      }
    } finally {
      await closeSharedMcpServers(runId);
    }
    for (const notices of heard)
      expect(notices.filter((n) => n.includes('"broken"'))).toEqual([
        expect.stringMatching(/^error: MCP server "broken" could not be started: broken on purpose/),
      ]);
  }, 30_000);
});
