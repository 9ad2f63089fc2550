// `orchestrate mcp serve --http 0`: the same tools over Streamable HTTP on 127.0.0.1, driven by
// the SDK's StreamableHTTPClientTransport: a run that waits sends its progress on the request's
// SSE stream; a request naming another host is refused (DNS rebinding), and so is one without the
// bearer token ORCHESTRATE_MCP_TOKEN names; SIGTERM stops the server.
import { type ChildProcess, spawn } from 'node:child_process';
import { request } from 'node:http';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, describe, expect, it } from 'vitest';
import { CLI_NODE_ARGS } from '../helpers/cli-entry.js';

const dir = mkdtempSync(join(tmpdir(), 'orch-mcp-http-'));
const TOKEN = 'test-token-for-mcp-http';
let server: ChildProcess | undefined;

afterAll(() => {
  server?.kill('SIGKILL');
  rmSync(dir, { recursive: true, force: true });
});

/** Starts the server on a free port; resolves with its URL once it says where it listens. */
function startServer(): Promise<{ url: URL; stderr: () => string; exited: Promise<number | null> }> {
  const child = spawn(process.execPath, [...CLI_NODE_ARGS, 'mcp', 'serve', '--http', '0'], {
    cwd: dir,
    env: { PATH: process.env.PATH, HOME: process.env.HOME, NO_COLOR: '1', ORCHESTRATE_MCP_TOKEN: TOKEN },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  server = child;
  let stderr = '';
  let stdout = '';
  const exited = new Promise<number | null>((res) => child.on('exit', (code) => res(code)));
  return new Promise((res, rej) => {
    child.stdout!.setEncoding('utf8').on('data', (d: string) => (stdout += d));
    child.stderr!.setEncoding('utf8').on('data', (d: string) => {
      stderr += d;
      const m = /serving Streamable HTTP on (http:\/\/127\.0\.0\.1:\d+\/mcp)/.exec(stderr);
      if (m) res({ url: new URL(m[1]!), stderr: () => stderr, exited });
    });
    child.on('exit', (code) =>
      rej(new Error(`the server exited (${String(code)}) before listening:\n${stderr}\nstdout: ${stdout}`)),
    );
  });
}

/** A raw request with a Host header of our choosing (what a DNS-rebinding page would send). */
function rawPost(url: URL, host: string, authorization?: string): Promise<number> {
  return new Promise((res, rej) => {
    const req = request(
      {
        host: '127.0.0.1',
        port: url.port,
        path: url.pathname,
        method: 'POST',
        headers: {
          host,
          'content-type': 'application/json',
          accept: 'application/json, text/event-stream',
          ...(authorization ? { authorization } : {}),
        },
      },
      (r) => {
        r.resume();
        res(r.statusCode ?? 0);
      },
    );
    req.on('error', rej);
    req.end(
      JSON.stringify({
        jsonrpc: '2.0',
        id: 1,
        method: 'initialize',
        params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'x', version: '1' } },
      }),
    );
  });
}

describe('orchestrate mcp serve --http', () => {
  it('serves the tools on 127.0.0.1; a waiting run_recipe streams progress; other hosts are refused; SIGTERM stops it', async () => {
    writeFileSync(
      join(dir, 'quick.yaml'),
      'name: quick\nprovider: scripted\nscript: script.yaml\ntasks:\n  - id: quick\n    prompt: "QUICK task"\n',
    );
    writeFileSync(
      join(dir, 'script.yaml'),
      'conversations:\n  - match: "QUICK"\n    turns:\n      - text: "quick finished"\n',
    );
    const { url, stderr, exited } = await startServer();

    const client = new Client({ name: 'mcp-http-test', version: '1.0.0' });
    await client.connect(
      new StreamableHTTPClientTransport(url, { requestInit: { headers: { Authorization: `Bearer ${TOKEN}` } } }),
    );
    const { tools } = await client.listTools();
    expect(tools.map((t) => t.name)).toEqual(
      expect.arrayContaining(['validate_recipe', 'run_recipe', 'run_events', 'cancel']),
    );

    const progress: string[] = [];
    const r = (await client.callTool(
      { name: 'run_recipe', arguments: { recipe: 'quick.yaml', wait: true } },
      undefined,
      {
        timeout: 120_000,
        onprogress: (p) => void progress.push(p.message ?? ''),
      },
    )) as CallToolResult & { structuredContent?: { runId: string; status: string } };
    expect(r.isError, JSON.stringify(r.content)).toBeFalsy();
    expect(r.structuredContent?.status).toBe('succeeded');
    expect(progress.length).toBeGreaterThan(0);
    const status = (await client.callTool({
      name: 'run_status',
      arguments: { run: r.structuredContent!.runId },
    })) as CallToolResult & { structuredContent?: { instances: { key: string; status: string }[] } };
    expect(status.structuredContent?.instances).toMatchObject([{ key: 'quick', status: 'done' }]);
    await client.close();

    expect(await rawPost(url, 'attacker.example', `Bearer ${TOKEN}`)).toBe(403);
    expect(await rawPost(url, `localhost:${url.port}`)).toBe(401);
    expect(await rawPost(url, `localhost:${url.port}`, 'Bearer wrong-token-of-same-size!!')).toBe(401);
    expect(await rawPost(url, `localhost:${url.port}`, `Bearer ${TOKEN}`)).toBe(200);

    server!.kill('SIGTERM');
    expect(await exited).toBe(0);
    expect(stderr()).not.toMatch(/internal error|\n\s+at /);
  }, 240_000);
});
