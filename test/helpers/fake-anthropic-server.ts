// A fake Anthropic Messages API on 127.0.0.1 for tests of every layer: real HTTP, real SSE framing
// (event: lines, pings, request-id), driven by a list of response specs or a respond callback.
// Every request is recorded (parsed JSON body and headers) for assertions.
import { createHash } from 'node:crypto';
import { createServer, type IncomingHttpHeaders, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { seededRandom } from './seeded-random.js';

export type FakeBlock =
  | { type: 'text'; text: string }
  | { type: 'thinking'; thinking: string; signature?: string }
  | { type: 'redacted_thinking'; data: string }
  | { type: 'tool_use'; id?: string; name: string; input: Record<string, unknown> };

export interface FakeUsage {
  input_tokens?: number;
  output_tokens?: number;
  cache_read_input_tokens?: number;
  cache_creation_input_tokens?: number;
}

export interface MessageSpec {
  content?: FakeBlock[];
  /** Default: "tool_use" when a tool_use block is present, else "end_turn". */
  stopReason?: string;
  /** Usage in message_start (default input 25, output 1, cache 0). */
  usage?: FakeUsage;
  /** Usage in message_delta; a null field is sent as null. Default: output_tokens = chars / 4. */
  deltaUsage?: { [K in keyof FakeUsage]?: number | null };
  /** Characters per delta (default 8). */
  chunkSize?: number;
  /** Delay between events in ms (default 0). */
  delayMs?: number;
  /** Send a ping after message_start (default true). */
  ping?: boolean;
  /** Extra response headers. */
  headers?: Record<string, string>;
}

export type ResponseSpec =
  | ({ kind: 'message' } & MessageSpec)
  /** A non-stream HTTP error, e.g. 429 with retry-after, 529 overloaded, 400 prompt too long. */
  | {
      kind: 'http-error';
      status: number;
      errorType?: string;
      message?: string;
      headers?: Record<string, string>;
      /** The whole body as sent instead of Anthropic's error object (a proxy's flat error, plain text). */
      body?: string;
      /** Content type of `body` (default application/json). */
      contentType?: string;
    }
  /** Stream the message but destroy the socket after N events (pings not counted). */
  | ({ kind: 'cut'; afterEvents: number } & MessageSpec)
  /** Stream N events of the message, then `event: error`. */
  | ({ kind: 'sse-error'; afterEvents?: number; errorType?: string; message?: string } & MessageSpec)
  /** Stream N events of the message, then end the response cleanly (no message_stop). */
  | ({ kind: 'truncate'; afterEvents: number } & MessageSpec)
  /** Send 200 headers and then nothing, forever (until close()). */
  | { kind: 'hang' };

export interface RecordedRequest {
  index: number;
  method: string;
  path: string;
  headers: IncomingHttpHeaders;
  /** Parsed JSON body (undefined when not JSON). */
  // biome-ignore lint/suspicious/noExplicitAny: tests index into arbitrary JSON
  body: any;
  rawBody: string;
  /** With `promptCache`: the tokens this request read from the cache, wrote to it, and sent uncached. */
  cache?: CacheUsage;
}

export interface CacheUsage {
  read: number;
  write: number;
  input: number;
}

export interface RespondInput {
  index: number;
  /** Parsed JSON body. */
  // biome-ignore lint/suspicious/noExplicitAny: callbacks index into arbitrary JSON
  body: any;
  headers: IncomingHttpHeaders;
}

export interface FakeAnthropicOptions {
  /** Decides each response; wins over `responses`. */
  respond?: (req: RespondInput) => ResponseSpec | Promise<ResponseSpec>;
  /** Responses in request order; when exhausted, a 500 error that says so. */
  responses?: ResponseSpec[];
  /** Replaces a share of the responses with faults (reliability tests). */
  faults?: FaultOptions;
  /**
   * Answer like a strict endpoint: a request whose turns do not alternate (two user or two
   * assistant messages in a row), or whose tool_use has no tool_result in the next turn, gets a
   * 400 invalid_request_error (see turnOrderProblem). Off by default.
   */
  strictTurns?: boolean;
  /** Simulate prompt caching (off by default): see PromptCacheOptions and simulateCache. */
  promptCache?: boolean | PromptCacheOptions;
}

/**
 * A simple model of Anthropic prompt caching. A request is a sequence of blocks in prefix order
 * (tools, system blocks, then message content blocks); a block with cache_control is a
 * breakpoint. Each prefix ending at a breakpoint is remembered once its response starts. A request
 * reads the longest remembered prefix found at one of its breakpoints or up to 20 blocks before
 * it, writes the rest up to its last breakpoint, and pays the tail after that at the input price.
 * The key of a prefix covers the model and the block bytes; from the messages on it also covers
 * tool_choice and thinking (changing those invalidates cached messages only, as documented).
 * Tokens are estimated as JSON characters / 4.
 */
export interface PromptCacheOptions {
  /** A breakpoint whose prefix is shorter than this is not cached (the API's minimum; default 0). */
  minTokens?: number;
  /**
   * Time to first byte of every reply in ms (default 0): a cache entry is only readable once its
   * response has started, so concurrent requests within this window all write.
   */
  firstByteDelayMs?: number;
}

interface CacheBlock {
  /** Hash of the whole prefix up to and including this block. */
  key: string;
  tokens: number;
  breakpoint: boolean;
}

/** The request's blocks in cache-prefix order (see PromptCacheOptions). */
// biome-ignore lint/suspicious/noExplicitAny: a request body is arbitrary JSON, read field by field
export function cacheBlocks(body: any): CacheBlock[] {
  const hash = createHash('sha256');
  hash.update(String(body?.model ?? ''));
  const out: CacheBlock[] = [];
  const add = (part: Record<string, unknown>): void => {
    const { cache_control, ...rest } = part;
    const text = JSON.stringify(rest);
    hash.update(text);
    out.push({ key: hash.copy().digest('hex'), tokens: Math.ceil(text.length / 4), breakpoint: cache_control != null });
  };
  for (const tool of body?.tools ?? []) add(tool);
  if (typeof body?.system === 'string') add({ type: 'text', text: body.system });
  else for (const block of body?.system ?? []) add(block);
  hash.update(JSON.stringify({ tool_choice: body?.tool_choice ?? null, thinking: body?.thinking ?? null }));
  for (const m of body?.messages ?? []) {
    if (typeof m.content === 'string') add({ role: m.role, type: 'text', text: m.content });
    else for (const block of m.content ?? []) add({ role: m.role, ...block });
  }
  return out;
}

/** What one request reads, writes and pays uncached against the remembered prefixes; `publish` remembers its own. */
export function simulateCache(
  blocks: CacheBlock[],
  remembered: ReadonlySet<string>,
  minTokens = 0,
): CacheUsage & { publish: string[] } {
  const prefixTokens: number[] = [];
  let total = 0;
  for (const b of blocks) {
    total += b.tokens;
    prefixTokens.push(total);
  }
  const breakpoints = blocks.flatMap((b, i) => (b.breakpoint && prefixTokens[i]! >= minTokens ? [i] : []));
  let hit = -1;
  for (const bp of breakpoints) {
    for (let j = bp; j >= Math.max(0, bp - 19); j--) {
      if (remembered.has(blocks[j]!.key)) {
        hit = Math.max(hit, j);
        break;
      }
    }
  }
  const last = breakpoints.length ? breakpoints[breakpoints.length - 1]! : -1;
  const read = hit >= 0 ? prefixTokens[hit]! : 0;
  const write = last > hit ? prefixTokens[last]! - read : 0;
  return {
    read,
    write,
    input: total - read - write,
    publish: breakpoints.filter((i) => i > hit).map((i) => blocks[i]!.key),
  };
}

/**
 * Why a strict endpoint would reject these messages, or undefined: roles must alternate starting
 * with user, and every tool_use of an assistant turn needs its tool_result at the start of the
 * next (user) turn.
 */
export function turnOrderProblem(messages: unknown): string | undefined {
  if (!Array.isArray(messages) || messages.length === 0) return 'messages: at least one message is required';
  const blocks = (m: { content?: unknown }): { type?: string; id?: string; tool_use_id?: string }[] =>
    Array.isArray(m.content) ? (m.content as { type?: string }[]) : [{ type: 'text' }];
  for (let i = 0; i < messages.length; i++) {
    const m = messages[i] as { role?: string; content?: unknown };
    const want = i % 2 === 0 ? 'user' : 'assistant';
    if (m.role !== want)
      return `messages.${i}: roles must alternate between "user" and "assistant" (got "${m.role}" after "${(messages[i - 1] as { role?: string } | undefined)?.role ?? 'nothing'}")`;
    if (m.role !== 'assistant') continue;
    const uses = blocks(m)
      .filter((b) => b.type === 'tool_use')
      .map((b) => b.id);
    if (uses.length === 0) continue;
    const next = messages[i + 1] as { content?: unknown } | undefined;
    const nextBlocks = next ? blocks(next) : [];
    const firstOther = nextBlocks.findIndex((b) => b.type !== 'tool_result');
    const leading = firstOther === -1 ? nextBlocks : nextBlocks.slice(0, firstOther);
    for (const id of uses) {
      if (!leading.some((b) => b.tool_use_id === id))
        return `messages.${i + 1}: tool_use ids were found without tool_result blocks immediately after: ${id}`;
    }
  }
  return undefined;
}

/**
 * What a fault does to one request: an HTTP error instead of the reply (429 with retry-after,
 * 529, 500, 400 prompt too long), the reply cut mid-stream (socket destroyed) or ended early
 * without message_stop (a clean close mid-message), or the reply streamed slowly.
 */
export type FaultKind = 'rate_limit' | 'overloaded' | 'server_error' | 'cut' | 'truncated' | 'slow' | 'prompt_too_long';

export const FAULT_KINDS: readonly FaultKind[] = [
  'rate_limit',
  'overloaded',
  'server_error',
  'cut',
  'truncated',
  'slow',
  'prompt_too_long',
];

export interface FaultOptions {
  /** Share of eligible requests that get a fault, 0..1: one in every round(1 / rate), at a seeded position. */
  rate: number;
  /** Seed of the fault dice (the same seed gives the same sequence of decisions). */
  seed: number;
  /** Kinds to use, in seeded shuffled rounds (default: all of FAULT_KINDS). */
  kinds?: readonly FaultKind[];
  /** Delay a 429/529 asks for, sent as retry-after in (decimal) seconds (default 50 ms). */
  retryAfterMs?: number;
  /** Delay between SSE events of a slow reply (default 40 ms). */
  slowDelayMs?: number;
  /** Only these requests may be faulted (default: every request). */
  eligible?: (req: RespondInput) => boolean;
}

/** One injected fault, by request index. */
export interface FaultRecord {
  index: number;
  kind: FaultKind;
}

export interface FakeAnthropic {
  /** Base URL for the SDK (`baseURL` / model.baseUrl / ANTHROPIC_BASE_URL). */
  url: string;
  requests: RecordedRequest[];
  /** Faults injected so far (empty without `faults`). */
  faults: FaultRecord[];
  /** With `promptCache`: forgets every remembered prefix (a cache that expired). */
  clearCache(): void;
  close(): Promise<void>;
}

/** The response a fault turns `spec` into; undefined when the kind does not apply (e.g. cut of an error). */
export function applyFault(
  kind: FaultKind,
  spec: ResponseSpec,
  options: Pick<FaultOptions, 'retryAfterMs' | 'slowDelayMs'> = {},
): ResponseSpec | undefined {
  const afterMs = options.retryAfterMs ?? 50;
  // Only retry-after, as the real API sends it (no retry-after-ms: provider-rate-limits.ts), in
  // seconds; a fraction of one here, so the faulted tests do not wait whole seconds.
  const retryHeaders = { 'retry-after': String(afterMs / 1000) };
  switch (kind) {
    case 'rate_limit':
      return { kind: 'http-error', status: 429, message: 'fake-anthropic: injected rate limit', headers: retryHeaders };
    case 'overloaded':
      return { kind: 'http-error', status: 529, message: 'fake-anthropic: injected overload', headers: retryHeaders };
    case 'server_error':
      return { kind: 'http-error', status: 500, message: 'fake-anthropic: injected internal server error' };
    case 'prompt_too_long':
      return {
        kind: 'http-error',
        status: 400,
        errorType: 'invalid_request_error',
        message: 'prompt is too long: 215000 tokens > 200000 maximum',
      };
    case 'cut':
    case 'truncated':
    case 'slow': {
      if (spec.kind !== 'message') return undefined;
      if (kind === 'slow') return { ...spec, delayMs: Math.max(spec.delayMs ?? 0, options.slowDelayMs ?? 40) };
      // Cut after the first content delta: the reply has started, so only a whole-turn retry helps.
      const events = messageEvents(spec).length;
      const afterEvents = Math.max(2, Math.min(events - 2, 4));
      return kind === 'cut' ? { ...spec, kind: 'cut', afterEvents } : { ...spec, kind: 'truncate', afterEvents };
    }
  }
}

type SseEvent = { event: string; data: unknown };

function chunks(text: string, size: number): string[] {
  if (text === '') return [];
  const out: string[] = [];
  for (let i = 0; i < text.length; i += size) out.push(text.slice(i, i + size));
  return out;
}

/** The full SSE event list of a message (without pings). */
export function messageEvents(spec: MessageSpec, index = 0): SseEvent[] {
  const content = spec.content ?? [];
  const size = Math.max(1, spec.chunkSize ?? 8);
  const hasTool = content.some((b) => b.type === 'tool_use');
  let chars = 0;
  const events: SseEvent[] = [
    {
      event: 'message_start',
      data: {
        type: 'message_start',
        message: {
          id: `msg_fake_${index}`,
          type: 'message',
          role: 'assistant',
          model: 'fake-model',
          content: [],
          stop_reason: null,
          stop_sequence: null,
          usage: {
            input_tokens: 25,
            output_tokens: 1,
            cache_creation_input_tokens: 0,
            cache_read_input_tokens: 0,
            ...spec.usage,
          },
        },
      },
    },
  ];
  const delta = (i: number, d: Record<string, unknown>): SseEvent => ({
    event: 'content_block_delta',
    data: { type: 'content_block_delta', index: i, delta: d },
  });
  content.forEach((b, i) => {
    const start = (block: Record<string, unknown>): void => {
      events.push({
        event: 'content_block_start',
        data: { type: 'content_block_start', index: i, content_block: block },
      });
    };
    if (b.type === 'text') {
      start({ type: 'text', text: '' });
      for (const c of chunks(b.text, size)) events.push(delta(i, { type: 'text_delta', text: c }));
      chars += b.text.length;
    } else if (b.type === 'thinking') {
      start({ type: 'thinking', thinking: '', signature: '' });
      for (const c of chunks(b.thinking, size)) events.push(delta(i, { type: 'thinking_delta', thinking: c }));
      if (b.signature) events.push(delta(i, { type: 'signature_delta', signature: b.signature }));
      chars += b.thinking.length;
    } else if (b.type === 'redacted_thinking') {
      start({ type: 'redacted_thinking', data: b.data });
    } else {
      start({ type: 'tool_use', id: b.id ?? `toolu_fake_${index}_${i}`, name: b.name, input: {} });
      const json = JSON.stringify(b.input);
      events.push(delta(i, { type: 'input_json_delta', partial_json: '' }));
      for (const c of chunks(json, size)) events.push(delta(i, { type: 'input_json_delta', partial_json: c }));
      chars += json.length + b.name.length;
    }
    events.push({ event: 'content_block_stop', data: { type: 'content_block_stop', index: i } });
  });
  events.push({
    event: 'message_delta',
    data: {
      type: 'message_delta',
      delta: { stop_reason: spec.stopReason ?? (hasTool ? 'tool_use' : 'end_turn'), stop_sequence: null },
      usage: spec.deltaUsage ?? { output_tokens: Math.max(1, Math.ceil(chars / 4)) },
    },
  });
  events.push({ event: 'message_stop', data: { type: 'message_stop' } });
  return events;
}

function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const parts: Buffer[] = [];
    req.on('data', (c: Buffer) => parts.push(c));
    req.on('end', () => resolve(Buffer.concat(parts).toString('utf8')));
    req.on('error', reject);
  });
}

function sendJsonError(
  res: ServerResponse,
  status: number,
  type: string,
  message: string,
  requestId: string,
  headers: Record<string, string> = {},
): void {
  const body = JSON.stringify({ type: 'error', error: { type, message }, request_id: requestId });
  res.writeHead(status, { 'content-type': 'application/json', 'request-id': requestId, ...headers });
  res.end(body);
}

const DEFAULT_ERROR_TYPE: Record<number, string> = {
  400: 'invalid_request_error',
  401: 'authentication_error',
  403: 'permission_error',
  404: 'not_found_error',
  413: 'request_too_large',
  429: 'rate_limit_error',
  500: 'api_error',
  529: 'overloaded_error',
};

/** Starts the fake API on 127.0.0.1 with an ephemeral port. */
export async function startFakeAnthropic(options: FakeAnthropicOptions = {}): Promise<FakeAnthropic> {
  const requests: RecordedRequest[] = [];
  const faults: FaultRecord[] = [];
  const dice = options.faults ? seededRandom(options.faults.seed) : undefined;
  const cacheOptions: PromptCacheOptions | undefined =
    options.promptCache === true ? {} : options.promptCache || undefined;
  const remembered = new Set<string>();
  let closed = false;
  // Delays between events end at close(), so a test with a very slow stream never waits for it.
  const sleeping = new Set<{ timer: NodeJS.Timeout; resolve: () => void }>();
  const pause = (ms: number): Promise<void> =>
    new Promise((resolve) => {
      const entry = {
        timer: setTimeout(() => {
          sleeping.delete(entry);
          resolve();
        }, ms),
        resolve,
      };
      sleeping.add(entry);
    });

  // The fault schedule: one fault in every block of round(1 / rate) eligible requests, at a
  // seeded random position, so the rate holds exactly even over a few dozen requests; the kinds
  // come in seeded shuffled rounds, so every kind shows up once per round.
  const blockSize = options.faults && options.faults.rate > 0 ? Math.max(1, Math.round(1 / options.faults.rate)) : 0;
  let eligibleSeen = 0;
  let faultAt = -1;
  let kindRound: FaultKind[] = [];

  function nextKind(): FaultKind {
    if (kindRound.length === 0) {
      const kinds = [...(options.faults?.kinds?.length ? options.faults.kinds : FAULT_KINDS)];
      for (let i = kinds.length - 1; i > 0; i--) {
        const j = Math.floor(dice!() * (i + 1));
        [kinds[i], kinds[j]] = [kinds[j]!, kinds[i]!];
      }
      kindRound = kinds;
    }
    return kindRound.shift()!;
  }

  /** Decides for one request; returns the spec to send (the fault, or the reply itself). */
  function maybeFault(input: RespondInput, spec: ResponseSpec): ResponseSpec {
    const f = options.faults;
    if (!f || !dice || blockSize === 0 || (f.eligible && !f.eligible(input))) return spec;
    const pos = eligibleSeen++ % blockSize;
    if (pos === 0) faultAt = Math.floor(dice() * blockSize);
    if (pos !== faultAt) return spec;
    const kind = nextKind();
    const faulted = applyFault(kind, spec, f);
    if (!faulted) {
      kindRound.unshift(kind); // not applicable here (e.g. a cut of an error reply): try it next time
      return spec;
    }
    faults.push({ index: input.index, kind });
    return faulted;
  }

  const server = createServer((req, res) => {
    void handle(req, res).catch(() => res.destroy());
  });

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const rawBody = await readBody(req);
    const index = requests.length;
    const requestId = `req_fake_${index}`;
    let body: unknown;
    try {
      body = JSON.parse(rawBody);
    } catch {
      body = undefined;
    }
    const path = req.url ?? '/';
    requests.push({ index, method: req.method ?? 'GET', path, headers: req.headers, body, rawBody });

    if (req.method !== 'POST' || !path.startsWith('/v1/messages')) {
      return sendJsonError(
        res,
        404,
        'not_found_error',
        `fake-anthropic: no route for ${req.method} ${path}`,
        requestId,
      );
    }
    // SDK 1.x sends the key as Bearer; older clients use x-api-key. Either is fine, none is not.
    if (!req.headers.authorization?.startsWith('Bearer ') && !req.headers['x-api-key']) {
      return sendJsonError(res, 401, 'authentication_error', 'fake-anthropic: missing credentials', requestId);
    }
    if (options.strictTurns) {
      const problem = turnOrderProblem((body as { messages?: unknown } | undefined)?.messages);
      if (problem) return sendJsonError(res, 400, 'invalid_request_error', problem, requestId);
    }
    const input: RespondInput = { index, body, headers: req.headers };
    const planned: ResponseSpec | undefined = options.respond
      ? await options.respond(input)
      : options.responses?.[index];
    const spec = planned ? maybeFault(input, planned) : undefined;
    if (!spec) {
      return sendJsonError(
        res,
        500,
        'api_error',
        `fake-anthropic: no response scripted for request ${index}`,
        requestId,
      );
    }
    if (spec.kind === 'http-error' && spec.body !== undefined) {
      res.writeHead(spec.status, {
        'content-type': spec.contentType ?? 'application/json',
        'request-id': requestId,
        ...spec.headers,
      });
      res.end(spec.body);
      return;
    }
    if (spec.kind === 'http-error') {
      return sendJsonError(
        res,
        spec.status,
        spec.errorType ?? DEFAULT_ERROR_TYPE[spec.status] ?? 'api_error',
        spec.message ?? `HTTP ${spec.status}`,
        requestId,
        spec.headers,
      );
    }
    let publish: string[] = [];
    let reply = spec;
    if (cacheOptions && spec.kind !== 'hang') {
      const sim = simulateCache(cacheBlocks(body), remembered, cacheOptions.minTokens);
      requests[index]!.cache = { read: sim.read, write: sim.write, input: sim.input };
      publish = sim.publish;
      reply = {
        ...spec,
        usage: {
          ...spec.usage,
          input_tokens: sim.input,
          cache_read_input_tokens: sim.read,
          cache_creation_input_tokens: sim.write,
        },
      };
    }
    res.writeHead(200, {
      'content-type': 'text/event-stream; charset=utf-8',
      'cache-control': 'no-cache',
      'request-id': requestId,
      ...(spec.kind !== 'hang' ? spec.headers : {}),
    });
    res.flushHeaders();
    if (spec.kind === 'hang') return; // the socket stays open until close()

    if (reply.kind === 'hang') return;
    const events = messageEvents(reply, index);
    const limit =
      spec.kind === 'cut' || spec.kind === 'truncate'
        ? spec.afterEvents
        : spec.kind === 'sse-error'
          ? (spec.afterEvents ?? events.length - 2)
          : events.length;
    if (cacheOptions?.firstByteDelayMs) await pause(cacheOptions.firstByteDelayMs);
    // Resolves once the bytes are handed to the socket, so a cut never swallows earlier events.
    const write = (e: SseEvent): Promise<void> =>
      new Promise((resolve) => res.write(`event: ${e.event}\ndata: ${JSON.stringify(e.data)}\n\n`, () => resolve()));
    for (let i = 0; i < Math.min(limit, events.length); i++) {
      if (closed || res.destroyed) return;
      if (i > 0 && spec.delayMs) await pause(spec.delayMs);
      // The response starts now: from here on other requests read what this one wrote.
      if (i === 0) for (const key of publish) remembered.add(key);
      await write(events[i]!);
      if (i === 0 && spec.ping !== false) await write({ event: 'ping', data: { type: 'ping' } });
    }
    if (spec.kind === 'cut') {
      await pause(5); // let the client read what was sent before the connection drops
      res.destroy();
      return;
    }
    if (spec.kind === 'sse-error') {
      await write({
        event: 'error',
        data: {
          type: 'error',
          error: { type: spec.errorType ?? 'overloaded_error', message: spec.message ?? 'Overloaded' },
        },
      });
    }
    res.end();
  }

  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    faults,
    clearCache: () => remembered.clear(),
    close: async () => {
      closed = true;
      for (const s of sleeping) {
        clearTimeout(s.timer);
        s.resolve();
      }
      sleeping.clear();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** A simple scripted turn, for respondLikeScript. */
export interface FakeTurn {
  text?: string;
  thinking?: string;
  signature?: string;
  tools?: { name: string; args?: Record<string, unknown>; id?: string }[];
  /** An HTTP error instead of a reply. */
  error?: { status: number; errorType?: string; message?: string; headers?: Record<string, string> };
  usage?: FakeUsage;
}

/** Turns simple turn specs into a respond callback: request N gets turn N. */
export function respondLikeScript(turns: FakeTurn[]): (req: RespondInput) => ResponseSpec {
  return ({ index }) => {
    const t = turns[index];
    if (!t)
      return {
        kind: 'http-error',
        status: 500,
        message: `fake-anthropic: script has ${turns.length} turns, request ${index} has none`,
      };
    if (t.error) return { kind: 'http-error', ...t.error };
    const content: FakeBlock[] = [];
    if (t.thinking !== undefined)
      content.push({ type: 'thinking', thinking: t.thinking, signature: t.signature ?? `sig_${index}` });
    if (t.text !== undefined) content.push({ type: 'text', text: t.text });
    for (const [i, tool] of (t.tools ?? []).entries()) {
      content.push({ type: 'tool_use', id: tool.id ?? `toolu_${index}_${i}`, name: tool.name, input: tool.args ?? {} });
    }
    return { kind: 'message', content, usage: t.usage };
  };
}
