// Git's smart HTTP protocol served the way a forge serves it: git's own git-http-backend (a CGI
// program shipped with git) behind a Node server, with HTTP Basic authentication as GitHub asks
// for it (user x-access-token, password the token) and a 401 with WWW-Authenticate otherwise.
import { spawn } from 'node:child_process';
import type { IncomingMessage, ServerResponse } from 'node:http';

/** The paths a git client asks for over smart HTTP: /<owner>/<name>.git/<service>. */
export const GIT_HTTP_PATH = /^\/([^/]+\/[^/]+\.git)\/(info\/refs|git-upload-pack|git-receive-pack)$/;

/**
 * Answers one smart HTTP request from the bare repositories under `root` (owner/name.git), once
 * `authorization` is `Basic base64(x-access-token:token)`. Pushes are accepted only then, as
 * git-http-backend enables receive-pack only for an authenticated REMOTE_USER.
 */
export async function serveGit(req: IncomingMessage, res: ServerResponse, root: string, token: string): Promise<void> {
  const u = new URL(req.url ?? '/', 'http://x');
  const expected = `Basic ${Buffer.from(`x-access-token:${token}`).toString('base64')}`;
  if (req.headers.authorization !== expected) {
    res.writeHead(401, { 'www-authenticate': 'Basic realm="GitHub"', 'content-type': 'text/plain' });
    res.end(req.headers.authorization ? 'Invalid username or token.\n' : 'Authentication required.\n');
    return;
  }
  const child = spawn('git', ['http-backend'], {
    env: {
      PATH: process.env.PATH,
      GIT_PROJECT_ROOT: root,
      GIT_HTTP_EXPORT_ALL: '1',
      REMOTE_USER: 'x-access-token',
      REMOTE_ADDR: '127.0.0.1',
      REQUEST_METHOD: req.method ?? 'GET',
      PATH_INFO: u.pathname,
      QUERY_STRING: u.search.replace(/^\?/, ''),
      CONTENT_TYPE: req.headers['content-type'] ?? '',
      ...(req.headers['content-length'] ? { CONTENT_LENGTH: req.headers['content-length'] } : {}),
      ...(req.headers['content-encoding'] ? { HTTP_CONTENT_ENCODING: req.headers['content-encoding'] } : {}),
      ...(req.headers['git-protocol'] ? { GIT_PROTOCOL: String(req.headers['git-protocol']) } : {}),
      GIT_CONFIG_NOSYSTEM: '1',
      HOME: root,
    },
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  req.pipe(child.stdin);
  const out: Buffer[] = [];
  child.stdout.on('data', (c: Buffer) => out.push(c));
  const code = await new Promise<number | null>((r) => child.on('close', r));
  const all = Buffer.concat(out);
  const end = all.indexOf('\r\n\r\n');
  if (code !== 0 || end < 0) {
    res.writeHead(500, { 'content-type': 'text/plain' });
    res.end(`git http-backend failed (${code})\n`);
    return;
  }
  // CGI: header lines (Status: gives the code), a blank line, then the body.
  const headers: Record<string, string> = {};
  let status = 200;
  for (const line of all.subarray(0, end).toString('latin1').split('\r\n')) {
    const colon = line.indexOf(':');
    const name = line.slice(0, colon).trim().toLowerCase();
    const value = line.slice(colon + 1).trim();
    if (name === 'status') status = Number.parseInt(value, 10);
    else headers[name] = value;
  }
  res.writeHead(status, headers);
  res.end(all.subarray(end + 4));
}
