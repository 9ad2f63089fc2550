// `orchestrate mcp serve`: the server on stdio (one client: the process that started it) or on
// Streamable HTTP bound to 127.0.0.1 (one McpServer per session, so several clients at once;
// always behind a bearer token, http-token.ts, since every local process can reach it). On
// stdio, stdout carries only the protocol: everything else goes to stderr. The server ends when
// its client closes stdin (stdio) or on SIGINT / SIGTERM (HTTP); the runs it started go on.
import { randomUUID, timingSafeEqual } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { resolve } from 'node:path';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { isInitializeRequest } from '@modelcontextprotocol/sdk/types.js';
import { packageVersion } from '../util/package-version.js';
import { serverToken, TOKEN_ENV, tokenFilePath, type HttpToken } from './http-token.js';
import { RunLauncher } from '../service/run-launcher.js';
import { createOrchestrateServer } from './server.js';
import type { ServerContext } from './tool-table.js';

/** What the server sees and where its log goes: the CLI hands over its own (stdout is the protocol's). */
export interface ServeIo {
  stderr: (text: string) => void;
  cwd: string;
  env: Record<string, string | undefined>;
}

/** How serving ended: not at all when it could not start (the reason is already in its log). */
export type ServeOutcome = { ok: true } | { ok: false; code: 'bad_token' | 'cannot_listen' };

export interface ServeOptions {
  /** Serve Streamable HTTP on 127.0.0.1:PORT (0: a free port) instead of stdio. */
  httpPort?: number;
  runsDir?: string;
  progressMs: number;
}

/** Serves until the client goes away (stdio) or the process is told to stop (HTTP). */
export async function serveMcp(opts: ServeOptions, cli: ServeIo): Promise<ServeOutcome> {
  // The token is the server's alone: runs and their agents never see it.
  const env = { ...cli.env };
  delete env[TOKEN_ENV];
  const ctx: Omit<ServerContext, 'clientName'> = {
    cwd: cli.cwd,
    env,
    ...(opts.runsDir !== undefined ? { runsDir: resolve(cli.cwd, opts.runsDir) } : {}),
    progressMs: opts.progressMs,
    launcher: new RunLauncher(),
    log: (line) => cli.stderr(`orchestrate mcp: ${line}\n`),
  };
  if (opts.httpPort === undefined) return serveStdio(ctx);
  // HTTP always authenticates: any local process can reach 127.0.0.1 (http-token.ts says how the token is chosen).
  let auth: HttpToken;
  try {
    auth = serverToken(cli.env);
  } catch (err) {
    ctx.log((err as Error).message);
    return { ok: false, code: 'bad_token' };
  }
  if (auth.origin === 'new')
    ctx.log(
      `no ${TOKEN_ENV} set: clients must send "Authorization: Bearer ${auth.token}" (made now and kept in ${auth.file}, mode 0600: clients keep working across restarts; delete the file for a new token)`,
    );
  else if (auth.origin === 'file')
    ctx.log(`no ${TOKEN_ENV} set: clients must send the token kept in ${auth.file} as "Authorization: Bearer <token>"`);
  return serveHttp(opts.httpPort, auth.token, ctx);
}

async function serveStdio(ctx: Omit<ServerContext, 'clientName'>): Promise<ServeOutcome> {
  const server = createOrchestrateServer(ctx, packageVersion());
  const closed = new Promise<void>((done) => {
    server.server.onclose = done;
  });
  const transport = new StdioServerTransport();
  await server.connect(transport);
  // The SDK's stdio transport does not notice its client closing our stdin; a client that
  // exits (or restarts us) must not leave this process behind.
  const stop = (): void => void server.close();
  process.stdin.once('end', stop);
  process.stdin.once('close', stop);
  ctx.log(`serving on stdio (working folder ${ctx.cwd})`);
  await closed;
  return { ok: true };
}

/** Only this machine's own names for the server: a web page cannot reach it through DNS rebinding. */
function hostAllowed(req: IncomingMessage, port: number): boolean {
  const allowed = [`127.0.0.1:${port}`, `localhost:${port}`];
  if (!allowed.includes(req.headers.host ?? '')) return false;
  const origin = req.headers.origin;
  return origin === undefined || allowed.some((h) => origin === `http://${h}`);
}

function tokenMatches(req: IncomingMessage, token: string): boolean {
  const given = Buffer.from(req.headers.authorization ?? '');
  const wanted = Buffer.from(`Bearer ${token}`);
  return given.length === wanted.length && timingSafeEqual(given, wanted);
}

function reject(res: ServerResponse, status: number, message: string): void {
  res
    .writeHead(status, { 'content-type': 'application/json' })
    .end(JSON.stringify({ jsonrpc: '2.0', error: { code: -32000, message }, id: null }));
}

async function readJson(req: IncomingMessage): Promise<unknown> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return JSON.parse(Buffer.concat(chunks).toString('utf8'));
}

async function serveHttp(
  requestedPort: number,
  token: string,
  ctx: Omit<ServerContext, 'clientName'>,
): Promise<ServeOutcome> {
  const version = packageVersion();
  const sessions = new Map<string, StreamableHTTPServerTransport>();
  let port = requestedPort;
  const http = createServer((req, res) => {
    void handle(req, res).catch((e: unknown) => {
      ctx.log(`HTTP request failed: ${e instanceof Error ? (e.stack ?? e.message) : String(e)}`);
      if (!res.headersSent) reject(res, 500, 'internal error (see the server log)');
    });
  });
  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    if (!hostAllowed(req, port))
      return reject(
        res,
        403,
        `forbidden: this server answers only to http://127.0.0.1:${port} and http://localhost:${port}`,
      );
    // Other users of this machine can reach 127.0.0.1 too: only the token's holders get in.
    if (!tokenMatches(req, token))
      return reject(
        res,
        401,
        `unauthorized: send the header "Authorization: Bearer <token>" with the server's ${TOKEN_ENV}, or the token in ${tokenFilePath(ctx.env)} when it has none`,
      );
    if (new URL(req.url ?? '/', 'http://127.0.0.1').pathname !== '/mcp')
      return reject(res, 404, `not found: the MCP endpoint is http://127.0.0.1:${port}/mcp`);
    const sessionId = req.headers['mcp-session-id'];
    if (typeof sessionId === 'string') {
      const transport = sessions.get(sessionId);
      if (!transport)
        return reject(
          res,
          404,
          `session ${sessionId} not found (the server restarted, or the session was closed): initialize a new one`,
        );
      return transport.handleRequest(req, res);
    }
    if (req.method !== 'POST')
      return reject(res, 400, 'no mcp-session-id: start a session with an initialize request (POST)');
    let body: unknown;
    try {
      body = await readJson(req);
    } catch {
      return reject(res, 400, 'the request body is not JSON');
    }
    if (!isInitializeRequest(body))
      return reject(res, 400, 'no mcp-session-id: the first request of a session must be initialize');
    const transport: StreamableHTTPServerTransport = new StreamableHTTPServerTransport({
      sessionIdGenerator: () => randomUUID(),
      onsessioninitialized: (id) => void sessions.set(id, transport),
    });
    transport.onclose = () => {
      if (transport.sessionId) sessions.delete(transport.sessionId);
    };
    await createOrchestrateServer(ctx, version).connect(transport);
    await transport.handleRequest(req, res, body);
  }
  const listening = await new Promise<{ ok: true } | { ok: false; message: string }>((done) => {
    http.once('error', (e: NodeJS.ErrnoException) =>
      done({
        ok: false,
        message:
          e.code === 'EADDRINUSE'
            ? `port ${requestedPort} on 127.0.0.1 is in use: choose another with --http PORT (0 picks a free one)`
            : `cannot listen on 127.0.0.1:${requestedPort}: ${e.message}`,
      }),
    );
    http.listen(requestedPort, '127.0.0.1', () => done({ ok: true }));
  });
  if (!listening.ok) {
    ctx.log(listening.message);
    return { ok: false, code: 'cannot_listen' };
  }
  const address = http.address();
  port = typeof address === 'object' && address ? address.port : requestedPort;
  ctx.log(
    `serving Streamable HTTP on http://127.0.0.1:${port}/mcp (working folder ${ctx.cwd}; clients must send the bearer token)`,
  );
  await new Promise<void>((done) => {
    const stop = (): void => {
      process.off('SIGINT', stop);
      process.off('SIGTERM', stop);
      done();
    };
    process.on('SIGINT', stop);
    process.on('SIGTERM', stop);
  });
  for (const t of sessions.values()) await t.close().catch(() => undefined);
  http.closeAllConnections();
  await new Promise<void>((done) => http.close(() => done()));
  return { ok: true };
}
