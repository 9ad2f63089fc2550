// `orchestrate serve`'s body: the web view of a runs folder on 127.0.0.1 (or --host), until the
// process is told to stop. The token is made the way `mcp serve --http` makes its own
// (service/server-token.ts: ORCHESTRATE_WEB_TOKEN, else one kept in ~/.orchestrate/web-token,
// mode 0600) and printed once, inside the page's URL, on stdout; nothing else prints it.
import { resolve } from 'node:path';
import { serverToken, type TokenPlace } from '../service/server-token.js';
import { startWebServer } from './web-server.js';

export const WEB_TOKEN: TokenPlace = { envVar: 'ORCHESTRATE_WEB_TOKEN', fileName: 'web-token', what: 'web view' };

export interface WebServeOptions {
  /** The runs folder shown (already resolved by the command, or relative to cwd). */
  runsDir: string;
  host: string;
  /** 0: a free port. */
  port: number;
}

export interface WebServeIo {
  stdout: (text: string) => void;
  stderr: (text: string) => void;
  cwd: string;
  env: Record<string, string | undefined>;
}

/** How serving ended: not at all when it could not start (the reason is already on stderr). */
export type WebServeOutcome = { ok: true } | { ok: false; code: 'bad_token' | 'cannot_listen' };

/** Serves until SIGINT / SIGTERM (or `stop`, for callers that embed it). */
export async function serveWeb(opts: WebServeOptions, io: WebServeIo, stop?: AbortSignal): Promise<WebServeOutcome> {
  const log = (line: string) => io.stderr(`orchestrate serve: ${line}\n`);
  const made = serverToken(io.env, WEB_TOKEN);
  if (!made.ok) {
    log(made.message);
    return { ok: false, code: 'bad_token' };
  }
  const env = { ...io.env };
  delete env[WEB_TOKEN.envVar];
  const runsDir = resolve(io.cwd, opts.runsDir);
  const started = await startWebServer({
    runsDir,
    cwd: io.cwd,
    host: opts.host,
    port: opts.port,
    token: made.token.token,
    env,
    log,
  });
  if (!started.ok) {
    log(started.message);
    return { ok: false, code: 'cannot_listen' };
  }
  const server = started.server;
  if (opts.host !== '127.0.0.1' && opts.host !== 'localhost' && opts.host !== '::1')
    log(
      `listening on ${opts.host}: other machines can reach it over plain HTTP; anyone who sees the URL (token included) can act on your runs`,
    );
  const kept = made.token.file
    ? ` (kept in ${made.token.file}; delete it for a new one)`
    : ` (from ${WEB_TOKEN.envVar})`;
  log(`the web view of ${runsDir}; open this URL, it carries the token${kept}; Ctrl-C stops`);
  io.stdout(`${server.url}\n`);
  await new Promise<void>((done) => {
    const end = (): void => {
      process.off('SIGINT', end);
      process.off('SIGTERM', end);
      stop?.removeEventListener('abort', end);
      done();
    };
    process.on('SIGINT', end);
    process.on('SIGTERM', end);
    if (stop?.aborted) end();
    else stop?.addEventListener('abort', end, { once: true });
  });
  await server.close();
  return { ok: true };
}
