// The web view's HTTP server (node:http: a handful of routes, an event stream and a JSON body per
// action need no framework): the page and its files, the runs of one folder, one run's live feed,
// and the actions. Every request is checked first (web-auth.ts: 401 without the token). A run is
// named by its id and must be a folder of the runs folder holding a run.jsonl: the page cannot
// reach a path elsewhere.
import { existsSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { join } from 'node:path';
import { RUN_LOG } from '../run/run-store.js';
import { listRunsIn } from '../service/list-runs.js';
import { RunFeed } from '../service/run-feed.js';
import { RunLauncher } from '../service/run-launcher.js';
import { ACTIONS, type ActionResult, actOnRun, type WebAction } from './web-actions.js';
import { allowedHosts, checkRequest, cookieName, decoded, tokenCookie, type WebAuth } from './web-auth.js';
import { PAGE_CSP, pageAsset } from './page-assets.js';
import { runSnapshot } from './run-snapshot.js';
import { STREAM_TIMINGS, streamRun, streamRunList } from './run-stream.js';

export interface WebServerOptions {
  runsDir: string;
  /** The working folder a resume starts in (the server's). */
  cwd: string;
  host: string;
  /** 0: a free port. */
  port: number;
  token: string;
  env: Record<string, string | undefined>;
  /** A line for the server's log (failed requests). */
  log: (line: string) => void;
}

export interface WebServer {
  port: number;
  /** The page's address with the token, as printed at start. */
  url: string;
  close(): Promise<void>;
}

export type StartResult = { ok: true; server: WebServer } | { ok: false; code: 'cannot_listen'; message: string };

/** Largest action body read (a steering message is the longest). */
const MAX_BODY = 64 * 1024;

function sendJson(res: ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, { 'content-type': 'application/json; charset=utf-8', 'cache-control': 'no-store' });
  res.end(JSON.stringify(body));
}

async function readBody(req: IncomingMessage): Promise<{ ok: true; value: unknown } | { ok: false; message: string }> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    size += (chunk as Buffer).length;
    if (size > MAX_BODY) return { ok: false, message: `the request body is over ${MAX_BODY} bytes` };
    chunks.push(chunk as Buffer);
  }
  const text = Buffer.concat(chunks).toString('utf8');
  if (text.trim() === '') return { ok: true, value: {} };
  try {
    return { ok: true, value: JSON.parse(text) };
  } catch {
    return { ok: false, message: 'the request body is not JSON' };
  }
}

/** The folder of run `id` in the runs folder, when it is one. */
function runDirOf(runsDir: string, id: string): string | undefined {
  if (!/^[A-Za-z0-9][A-Za-z0-9._-]*$/.test(id)) return undefined;
  const dir = join(runsDir, id);
  return existsSync(join(dir, RUN_LOG)) ? dir : undefined;
}

const STATUS_OF: Record<Exclude<ActionResult, { ok: true }>['code'], number> = {
  bad_request: 400,
  refused: 409,
  not_live: 409,
  launch_failed: 409,
};

export function startWebServer(opts: WebServerOptions): Promise<StartResult> {
  let auth: WebAuth = { token: opts.token, cookie: cookieName(opts.port) };
  const acting = { env: opts.env, cwd: opts.cwd, launcher: new RunLauncher() };

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', 'http://localhost');
    const checked = checkRequest(req, url, auth);
    if (!checked.ok)
      return sendJson(res, checked.status, { ok: false, code: 'unauthorized', message: checked.message });
    const path = url.pathname;

    const asset = req.method === 'GET' ? pageAsset(path) : undefined;
    if (asset) {
      const headers: Record<string, string> = {
        'content-type': asset.type,
        'cache-control': 'no-store',
        'x-content-type-options': 'nosniff',
        'content-security-policy': PAGE_CSP,
      };
      if (checked.fromQuery) headers['set-cookie'] = tokenCookie(auth);
      res.writeHead(200, headers);
      res.end(asset.body);
      return;
    }
    if (req.method === 'GET' && path === '/api/runs/stream') return streamRunList(req, res, opts.runsDir);
    if (req.method === 'GET' && path === '/api/runs') {
      const listed = listRunsIn(opts.runsDir);
      return listed.ok ? sendJson(res, 200, { runs: listed.runs }) : sendJson(res, 500, listed);
    }
    const m = /^\/api\/runs\/([^/]+)(?:\/([a-z]+))?$/.exec(path);
    if (!m) return sendJson(res, 404, { ok: false, code: 'not_found', message: `no page ${path}` });
    // A malformed %-escape names no run (it is no error of the server's).
    const id = decoded(m[1]!) ?? m[1]!;
    const runDir = runDirOf(opts.runsDir, id);
    if (!runDir)
      return sendJson(res, 404, { ok: false, code: 'no_such_run', message: `no run ${id} in ${opts.runsDir}` });
    const verb = m[2];
    if (req.method === 'GET' && verb === undefined) {
      const feed = new RunFeed(runDir);
      feed.poll();
      // A log without its run_start (empty, overwritten, not run events) has no run to show.
      if (!feed.state.start)
        return sendJson(res, 404, {
          ok: false,
          code: 'no_run_record',
          message: `${join(runDir, RUN_LOG)} holds no run_start record: there is no run to show (yet)`,
        });
      return sendJson(res, 200, runSnapshot(feed.state, runDir, feed.readOnly()));
    }
    if (req.method === 'GET' && verb === 'stream')
      return streamRun(req, res, runDir, url.searchParams.get('instance') ?? undefined, STREAM_TIMINGS);
    if (req.method === 'POST' && verb && (ACTIONS as readonly string[]).includes(verb)) {
      const body = await readBody(req);
      if (!body.ok) return sendJson(res, 400, { ok: false, code: 'bad_request', message: body.message });
      const result = await actOnRun(runDir, verb as WebAction, body.value, acting);
      return sendJson(res, result.ok ? 200 : STATUS_OF[result.code], result);
    }
    return sendJson(res, 405, {
      ok: false,
      code: 'not_found',
      message: `${req.method} ${path}: the run's actions are POST ${ACTIONS.join(', ')}`,
    });
  }

  const http: Server = createServer((req, res) => {
    void handle(req, res).catch((e: unknown) => {
      opts.log(`request ${req.method} ${req.url?.split('?')[0]} failed: ${e instanceof Error ? e.message : String(e)}`);
      if (!res.headersSent)
        sendJson(res, 500, { ok: false, code: 'internal', message: 'internal error (see the server log)' });
      else res.end();
    });
  });

  return new Promise<StartResult>((resolve) => {
    http.once('error', (e: NodeJS.ErrnoException) =>
      resolve({
        ok: false,
        code: 'cannot_listen',
        message:
          e.code === 'EADDRINUSE'
            ? `port ${opts.port} on ${opts.host} is in use: choose another with --port PORT (0 picks a free one)`
            : `cannot listen on ${opts.host}:${opts.port}: ${e.message}`,
      }),
    );
    http.listen(opts.port, opts.host, () => {
      const address = http.address();
      const port = typeof address === 'object' && address ? address.port : opts.port;
      const hosts = allowedHosts(opts.host, port);
      auth = { token: opts.token, cookie: cookieName(port), ...(hosts ? { hosts } : {}) };
      const shown = opts.host === '0.0.0.0' || opts.host === '::' ? '127.0.0.1' : opts.host;
      const hostPart = shown.includes(':') ? `[${shown}]` : shown;
      resolve({
        ok: true,
        server: {
          port,
          url: `http://${hostPart}:${port}/?token=${encodeURIComponent(opts.token)}`,
          close: async () => {
            http.closeAllConnections();
            await new Promise<void>((done) => http.close(() => done()));
          },
        },
      });
    });
  });
}
