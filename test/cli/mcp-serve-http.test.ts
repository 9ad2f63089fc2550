// `orchestrate mcp serve --http 0`: the same tools over Streamable HTTP on 127.0.0.1, driven by
// the SDK's StreamableHTTPClientTransport: a run that waits sends its progress on the request's
// SSE stream; a request naming another host is refused (DNS rebinding), and so is one without the
// bearer token ORCHESTRATE_MCP_TOKEN names; SIGTERM stops the server.
import type { ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, describe, expect, it } from 'vitest';
import { conversationsScript } from '../helpers/held-agents.js';
import { connectMcpHttp, rawInitialize, startMcpHttpServer } from '../helpers/mcp-http-server.js';

const dir = mkdtempSync(join(tmpdir(), 'orch-mcp-http-'));
const TOKEN = 'test-token-for-mcp-http';
let server: ChildProcess | undefined;

afterAll(() => {
  server?.kill('SIGKILL');
  rmSync(dir, { recursive: true, force: true });
});

/** Starts the server with the token set; resolves once it says where it listens. */
function startServer() {
  return startMcpHttpServer(
    dir,
    { PATH: process.env.PATH, HOME: process.env.HOME, NO_COLOR: '1', ORCHESTRATE_MCP_TOKEN: TOKEN },
    (child) => (server = child),
  );
}

describe('orchestrate mcp serve --http', () => {
  it('serves the tools on 127.0.0.1; a waiting run_recipe streams progress; other hosts are refused; SIGTERM stops it', async () => {
    writeFileSync(
      join(dir, 'quick.yaml'),
      'name: quick\nprovider: scripted\nscript: script.yaml\ntasks:\n  - id: quick\n    prompt: "QUICK task"\n',
    );
    writeFileSync(join(dir, 'script.yaml'), conversationsScript({ QUICK: [{ text: 'quick finished' }] }));
    const { url, stderr, stop } = await startServer();

    const client = await connectMcpHttp(url, 'mcp-http-test', TOKEN);
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

    expect(await rawInitialize(url, 'attacker.example', `Bearer ${TOKEN}`)).toBe(403);
    expect(await rawInitialize(url, `localhost:${url.port}`)).toBe(401);
    expect(await rawInitialize(url, `localhost:${url.port}`, 'Bearer wrong-token-of-same-size!!')).toBe(401);
    expect(await rawInitialize(url, `localhost:${url.port}`, `Bearer ${TOKEN}`)).toBe(200);

    expect(await stop()).toBe(0);
    expect(stderr()).not.toMatch(/internal error|\n\s+at /);
  }, 240_000);
});
