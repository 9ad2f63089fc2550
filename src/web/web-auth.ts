// Who may use the web view: every request, page, script and API alike, carries the server's token
// (401 otherwise). The URL printed at start holds it as `?token=`; the page that URL opens sets it
// as an HttpOnly, SameSite=Strict cookie (so scripts and the event stream, which cannot send
// headers, carry it too) and drops it from the address bar. Scripts may send it as
// `Authorization: Bearer` instead. The Host header must name this server (a page elsewhere cannot
// reach it through DNS rebinding), and a request that changes something must come from the page
// itself (its Origin, when the browser sends one, is this server).
import { timingSafeEqual } from 'node:crypto';
import type { IncomingMessage } from 'node:http';

export interface WebAuth {
  token: string;
  /** host:port names the server answers to; undefined: any (it listens on every interface). */
  hosts?: readonly string[];
  /** The cookie's name (carries the port: two servers on one machine do not overwrite each other's). */
  cookie: string;
}

export function cookieName(port: number): string {
  return `orchestrate_web_${port}`;
}

/** The host:port names a server listening on `host` answers to; undefined for a wildcard address. */
export function allowedHosts(host: string, port: number): string[] | undefined {
  if (host === '0.0.0.0' || host === '::' || host === '') return undefined;
  const names = new Set([`${host.includes(':') ? `[${host}]` : host}:${port}`]);
  if (host === '127.0.0.1' || host === 'localhost' || host === '::1')
    for (const h of ['127.0.0.1', 'localhost', '[::1]']) names.add(`${h}:${port}`);
  return [...names];
}

function same(given: string, wanted: string): boolean {
  const a = Buffer.from(given);
  const b = Buffer.from(wanted);
  return a.length === b.length && timingSafeEqual(a, b);
}

function cookieValue(req: IncomingMessage, name: string): string | undefined {
  for (const part of (req.headers.cookie ?? '').split(';')) {
    const eq = part.indexOf('=');
    if (eq > 0 && part.slice(0, eq).trim() === name) return decoded(part.slice(eq + 1).trim());
  }
  return undefined;
}

/** `text` with its %-escapes decoded, or undefined when they are malformed (no token matches it). */
export function decoded(text: string): string | undefined {
  try {
    return decodeURIComponent(text);
  } catch {
    return undefined;
  }
}

export type AuthCheck = { ok: true; fromQuery: boolean } | { ok: false; status: 401 | 403; message: string };

/** Whether the request may go on; `fromQuery`: it carried the token in the URL (set the cookie). */
export function checkRequest(req: IncomingMessage, url: URL, auth: WebAuth): AuthCheck {
  if (auth.hosts && !auth.hosts.includes(req.headers.host ?? ''))
    return { ok: false, status: 403, message: `this server answers only to ${auth.hosts.join(', ')}` };
  const origin = req.headers.origin;
  if (req.method !== 'GET' && req.method !== 'HEAD') {
    const host = req.headers.host ?? '';
    if (origin !== undefined && origin !== `http://${host}`)
      return { ok: false, status: 403, message: `a request from ${origin} may not act on this server` };
  }
  const bearer = req.headers.authorization;
  if (bearer !== undefined && same(bearer, `Bearer ${auth.token}`)) return { ok: true, fromQuery: false };
  const cookie = cookieValue(req, auth.cookie);
  if (cookie !== undefined && same(cookie, auth.token)) return { ok: true, fromQuery: false };
  const query = url.searchParams.get('token');
  if (req.method === 'GET' && query !== null && same(query, auth.token)) return { ok: true, fromQuery: true };
  return {
    ok: false,
    status: 401,
    message:
      'unauthorized: open the URL `orchestrate serve` printed (it carries ?token=), or send "Authorization: Bearer <token>"',
  };
}

/** The Set-Cookie header that keeps the token for the page's own requests. */
export function tokenCookie(auth: WebAuth): string {
  return `${auth.cookie}=${encodeURIComponent(auth.token)}; HttpOnly; SameSite=Strict; Path=/`;
}
