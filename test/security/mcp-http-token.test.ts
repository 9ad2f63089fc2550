// Attack (issue #37 item 7): `orchestrate mcp serve --http` without ORCHESTRATE_MCP_TOKEN (the
// default) let any local process call run_recipe on any recipe, `sandbox: none` included. Now the
// server makes a token when none is set, prints it once, keeps it mode 0600 in the orchestrate
// home, and answers 401 to a request without it; a restart reuses it. The real CLI as a child
// process, HOME and ORCHESTRATE_HOME in temp folders, the SDK's HTTP client on the wire.
import type { ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, describe, expect, it } from 'vitest';
import { conversationsScript } from '../helpers/held-agents.js';
import { connectMcpHttp, rawInitialize, startMcpHttpServer } from '../helpers/mcp-http-server.js';

const dir = mkdtempSync(join(tmpdir(), 'orch-mcp-token-'));
const home = join(dir, 'home');
const orchestrateHome = join(home, '.orchestrate');
const servers: ChildProcess[] = [];

afterAll(() => {
  for (const s of servers) s.kill('SIGKILL');
  rmSync(dir, { recursive: true, force: true });
});

/** `mcp serve --http 0` with no ORCHESTRATE_MCP_TOKEN; resolves once it says where it listens. */
function startServer() {
  return startMcpHttpServer(
    dir,
    { PATH: process.env.PATH, HOME: home, ORCHESTRATE_HOME: orchestrateHome, NO_COLOR: '1' },
    (child) => servers.push(child),
  );
}

/** An initialize request as any local process of this machine sends it; the HTTP status. */
const localInitialize = (url: URL, authorization?: string) =>
  rawInitialize(url, `127.0.0.1:${url.port}`, authorization);
const connect = (url: URL, token?: string) => connectMcpHttp(url, 'mcp-token-test', token);

describe('mcp serve --http without ORCHESTRATE_MCP_TOKEN', () => {
  it('makes a token, prints it once, keeps it 0600; no token: 401; with it: run_recipe works; a restart reuses it', async () => {
    // What the attacker would run: a recipe whose agent has no sandbox.
    writeFileSync(
      join(dir, 'open.yaml'),
      'name: open\nprovider: scripted\nscript: script.yaml\nsandbox: none\ntasks:\n  - id: quick\n    prompt: "QUICK task"\n',
    );
    writeFileSync(join(dir, 'script.yaml'), conversationsScript({ QUICK: [{ text: 'quick finished' }] }));
    const first = await startServer();
    const file = join(orchestrateHome, 'mcp-token');
    const token = readFileSync(file, 'utf8').trim();
    expect(token).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(statSync(file).mode & 0o777).toBe(0o600);
    expect(first.stderr()).toContain(`Authorization: Bearer ${token}`);
    expect(first.stderr()).toContain(file);

    // Any other process of this machine: refused, at the first request and through the SDK.
    expect(await localInitialize(first.url)).toBe(401);
    expect(await localInitialize(first.url, 'Bearer not-the-token')).toBe(401);
    await expect(connect(first.url)).rejects.toThrow(/401|unauthorized/i);

    // The token's holder: the tools work.
    const client = await connect(first.url, token);
    const r = (await client.callTool(
      { name: 'run_recipe', arguments: { recipe: 'open.yaml', wait: true } },
      undefined,
      {
        timeout: 120_000,
      },
    )) as CallToolResult & { structuredContent?: { status: string } };
    expect(r.isError, JSON.stringify(r.content)).toBeFalsy();
    expect(r.structuredContent?.status).toBe('succeeded');
    await client.close();
    expect(await first.stop()).toBe(0);

    // A restart keeps the token (clients keep working) and does not print it again.
    const second = await startServer();
    expect(readFileSync(file, 'utf8').trim()).toBe(token);
    expect(second.stderr()).toContain(file);
    expect(second.stderr()).not.toContain(token);
    expect(await localInitialize(second.url)).toBe(401);
    expect(await localInitialize(second.url, `Bearer ${token}`)).toBe(200);
    expect(await second.stop()).toBe(0);
  }, 240_000);
});
