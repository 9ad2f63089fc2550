// What a provider's error response says, read once for every provider. Servers word errors in
// several body shapes (OpenAI's and Anthropic's {"error": {...}}, vLLM / llama.cpp / LiteLLM's flat
// {"object": "error", "message": ...}, FastAPI's {"detail": ...}, or plain text); the SDKs keep only
// some of them, so the raw body is read here and its message extracted whatever the shape. The
// failure is classified once here (errorKind), and a body that echoes the request's credentials
// (a proxy quoting the Authorization header back) is scrubbed before its text leaves ai/.
import type { ProviderErrorKind } from './types.js';
import { isRecord } from '../util/unknown-value.js';

/** The parts of an error body that matter: the human message, and the error type or code if named. */
export interface ErrorBodyText {
  message?: string;
  type?: string;
}

const str = (v: unknown): string | undefined => (typeof v === 'string' && v.trim() !== '' ? v : undefined);

/** A proxy's HTML error page (nginx's "502 Bad Gateway") as its title, else its text without tags. */
function htmlText(text: string): string | undefined {
  if (!/^<(!doctype|html|head|body)\b/i.test(text)) return undefined;
  const title = /<title>([^<]*)<\/title>/i.exec(text)?.[1]?.trim();
  if (title) return title;
  return text
    .replace(/<[^>]*>/g, ' ')
    .replace(/\s+/g, ' ')
    .trim();
}

/** One FastAPI validation item ({loc, msg, type}) as "loc.path: msg". */
function detailItem(item: unknown): string | undefined {
  if (typeof item === 'string') return item;
  if (!isRecord(item)) return undefined;
  const msg = str(item.msg) ?? str(item.message);
  if (!msg) return JSON.stringify(item);
  const loc = Array.isArray(item.loc) ? item.loc.map(String).join('.') : undefined;
  return loc ? `${loc}: ${msg}` : msg;
}

/** Numbers llama.cpp puts next to its message; the overflow check reads the window from them. */
function contextNumbers(o: Record<string, unknown>): string {
  if (typeof o.n_ctx !== 'number') return '';
  return typeof o.n_prompt_tokens === 'number'
    ? ` (${o.n_prompt_tokens} tokens > ${o.n_ctx} maximum)`
    : ` (n_ctx ${o.n_ctx})`;
}

/**
 * The message and type of an error body, parsed or raw. Understands {"error": {message, type,
 * code}}, {"error": "text"}, the flat {"object": "error", "message", "type", "code"},
 * {"detail": "text" | [{loc, msg}]} and a plain-text body; undefined fields where it says nothing.
 */
export function readErrorBody(body: unknown): ErrorBodyText {
  if (typeof body === 'string') {
    const text = body.trim();
    if (text === '') return {};
    try {
      return readErrorBody(JSON.parse(text));
    } catch {
      const plain = htmlText(text) ?? text;
      return { message: plain.length > 2000 ? `${plain.slice(0, 2000)}…` : plain };
    }
  }
  if (!isRecord(body)) return {};
  const inner = body.error;
  if (isRecord(inner)) {
    const message = str(inner.message) ?? (isRecord(inner.message) ? JSON.stringify(inner.message) : undefined);
    return {
      message: message !== undefined ? message + contextNumbers(inner) : undefined,
      type: str(inner.type) ?? str(inner.code),
    };
  }
  if (typeof inner === 'string') return { message: inner, type: str(body.type) ?? str(body.code) };
  if (body.detail !== undefined) {
    if (typeof body.detail === 'string') return { message: body.detail };
    if (Array.isArray(body.detail)) {
      const items = body.detail.map(detailItem).filter((s): s is string => s !== undefined);
      return items.length ? { message: items.join('; ') } : {};
    }
    return readErrorBody(body.detail);
  }
  const message = str(body.message) ?? str(body.msg);
  if (message !== undefined) {
    const type = str(body.type) ?? (typeof body.code === 'string' ? body.code : undefined);
    return { message: message + contextNumbers(body), type: type === 'error' ? undefined : type };
  }
  return {};
}

/** Error bodies of this process's requests, by the Headers object of their response (the SDKs pass it on). */
const rawBodies = new WeakMap<object, string>();

/**
 * A fetch for an SDK client that keeps the raw body of every error response, because the OpenAI
 * SDK drops a body without an "error" field ("400 status code (no body)"). Success bodies (the
 * streams) are passed through untouched.
 */
export function errorBodyKeepingFetch(base: typeof fetch = fetch): typeof fetch {
  return async (input, init) => {
    const response = await base(input, init);
    // Only errors (a 1xx/3xx may carry no body at all, and a Response with one would throw).
    if (response.status < 400) return response;
    const text = await response.text().catch(() => '');
    const copy = new Response(text, {
      status: response.status,
      statusText: response.statusText,
      headers: response.headers,
    });
    rawBodies.set(copy.headers, text);
    return copy;
  };
}

/** The raw error body kept for a response's headers (see errorBodyKeepingFetch). */
export function rawErrorBody(headers: unknown): string | undefined {
  return typeof headers === 'object' && headers !== null ? rawBodies.get(headers) : undefined;
}

/** Kinds of failure a new request can fix, by HTTP status: 429, 529, 503 and other 5xx, 408. */
export function kindForStatus(status: number): ProviderErrorKind | undefined {
  if (status === 429) return 'rate_limit';
  if (status === 529 || status === 503) return 'overloaded';
  if (status === 408) return 'connection';
  if (status >= 500 && status <= 599) return 'server';
  return undefined;
}

/** Kinds named by an error type or code in a body (an SSE error event has no status). */
function kindForType(type: string | undefined): ProviderErrorKind | undefined {
  if (!type) return undefined;
  if (/rate_limit/i.test(type)) return 'rate_limit';
  if (/overloaded/i.test(type)) return 'overloaded';
  if (/^(api_error|server_error|internal_server_error|internal_error)$/i.test(type)) return 'server';
  return undefined;
}

const OVERLOADED_TEXT = /overloaded|server is busy|capacity/i;
const CONNECTION_TEXT =
  /\bterminated\b|ECONNRESET|ECONNREFUSED|ETIMEDOUT|EPIPE|\bsocket\b|\bnetwork\b|other side closed|fetch failed|connection.?(error|refused|reset|lost|closed)/i;

/**
 * The one classification of a provider failure: which transient kind it is, or undefined when a
 * new request cannot fix it (a 4xx, an overflow, a bad key). The status decides when there is
 * one (a 400 quoting "rate limit" from the prompt stays final); without a status (SSE errors,
 * scripted errors) the body's type decides, then the wording.
 */
export function classifyProviderError(f: {
  status?: number;
  type?: string;
  message: string;
}): ProviderErrorKind | undefined {
  if (f.status !== undefined) {
    const kind = kindForStatus(f.status);
    return kind === 'server' && OVERLOADED_TEXT.test(f.message) ? 'overloaded' : kind;
  }
  const byType = kindForType(f.type);
  if (byType) return byType;
  const text = f.message;
  const leading = /^\s*(\d{3})\b/.exec(text);
  if (leading) return classifyProviderError({ status: Number(leading[1]), message: text });
  if (/rate.?limit|too many requests/i.test(text)) return 'rate_limit';
  if (OVERLOADED_TEXT.test(text) || /service.?unavailable/i.test(text)) return 'overloaded';
  if (/server.?error|internal.?error|api_error/i.test(text)) return 'server';
  if (CONNECTION_TEXT.test(text)) return 'connection';
  return undefined;
}

// Header echoes: `Authorization: Bearer x`, "x-api-key": "x", api-key=x (any quoting and case).
const HEADER_ECHO =
  /(["']?)(authorization|proxy-authorization|x-api-key|api-key|x-goog-api-key)\1(\s*[:=]\s*)(["']?)[^"',;}\r\n]*/gi;
const BEARER = /\b(Bearer|Basic)\s+[A-Za-z0-9._~+/=-]{6,}/g;

/**
 * `text` without the credentials of the request: header echoes keep their name and lose their
 * value, a `Bearer ...` token anywhere is hidden, and every key value given is replaced, so a
 * server that quotes the request back cannot put the key into results, logs or reports.
 */
export function scrubCredentials(text: string, secrets: readonly (string | undefined)[] = []): string {
  let out = text;
  for (const s of secrets) if (s && s.length >= 6) out = out.split(s).join('[redacted]');
  out = out.replace(
    HEADER_ECHO,
    (_m, q: string, name: string, sep: string, vq: string) => `${q}${name}${q}${sep}${vq}[redacted]`,
  );
  return out.replace(BEARER, '$1 [redacted]');
}
