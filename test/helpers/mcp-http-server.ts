// `orchestrate mcp serve --http 0` as its own process for the tests of the MCP server over HTTP:
// started on a free port (the URL is read from what it prints), driven by the SDK's
// StreamableHTTPClientTransport or by raw requests with headers of the test's choosing, stopped
// with SIGTERM. One setup (issue #43) for the CLI test and the token attack.
import { type ChildProcess, spawn } from 'node:child_process';
import { request } from 'node:http';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { CLI_NODE_ARGS } from './cli-entry.js';

export interface McpHttpServer {
  child: ChildProcess;
  url: URL;
  stderr: () => string;
  /** SIGTERM, then the exit code. */
  stop: () => Promise<number | null>;
}

/**
 * Starts the server in `cwd` with exactly `env`; resolves once it says where it listens (a server
 * that exits first rejects, with what it printed). `started` gets the child at once, so a test can
 * kill it whatever happens next.
 */
export function startMcpHttpServer(
  cwd: string,
  env: NodeJS.ProcessEnv,
  started: (child: ChildProcess) => void,
): Promise<McpHttpServer> {
  const child = spawn(process.execPath, [...CLI_NODE_ARGS, 'mcp', 'serve', '--http', '0'], {
    cwd,
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  started(child);
  let stderr = '';
  let stdout = '';
  const exited = new Promise<number | null>((res) => child.on('exit', (code) => res(code)));
  return new Promise((res, rej) => {
    child.stdout!.setEncoding('utf8').on('data', (d: string) => (stdout += d));
    child.stderr!.setEncoding('utf8').on('data', (d: string) => {
      stderr += d;
      const m = /serving Streamable HTTP on (http:\/\/127\.0\.0\.1:\d+\/mcp)/.exec(stderr);
      if (m)
        res({
          child,
          url: new URL(m[1]!),
          stderr: () => stderr,
          stop: () => {
            child.kill('SIGTERM');
            return exited;
          },
        });
    });
    child.on('exit', (code) =>
      rej(new Error(`the server exited (${String(code)}) before listening:\n${stderr}\nstdout: ${stdout}`)),
    );
  });
}

/**
 * An initialize request as any local process could send it, with the Host header `host` (a
 * DNS-rebinding page sends its own) and the Authorization header `authorization`; the HTTP status.
 */
export function rawInitialize(url: URL, host: string, authorization?: string): Promise<number> {
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

/** An SDK client connected over Streamable HTTP, sending `Bearer <token>` when given one. */
export async function connectMcpHttp(url: URL, clientName: string, token?: string): Promise<Client> {
  const client = new Client({ name: clientName, version: '1.0.0' });
  await client.connect(
    new StreamableHTTPClientTransport(url, {
      requestInit: token ? { headers: { Authorization: `Bearer ${token}` } } : {},
    }),
  );
  return client;
}
