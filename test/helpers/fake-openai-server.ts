// A strict fake OpenAI-compatible server on 127.0.0.1 (free port) for tests: real HTTP, real SSE
// framing ("data: {...}\n\n", "data: [DONE]"), Chat Completions and the Responses API. It checks
// requests as api.openai.com does (roles, tool messages answering the preceding assistant's
// tool_calls exactly, tool_choice forms and names, stream_options only with stream, no tool call
// offered under tool_choice "none") and answers a 400 with OpenAI's error body when one is wrong.
// Replies are replayed in the shapes real servers send: parallel calls by index, every call at
// index 0 (some vLLM/Ollama builds), a duplicated finish_reason, no usage chunk, calls written as
// JSON text. With `contextWindow` it counts prompt tokens (chars/4) and refuses an oversize
// request in the wording of the server it plays (OpenAI/vLLM, llama.cpp, LM Studio).
import { createServer, type IncomingHttpHeaders, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface FakeToolCall {
  id?: string;
  name: string;
  arguments: Record<string, unknown>;
}

export interface ChatReplySpec {
  kind: 'chat';
  text?: string;
  reasoning?: string;
  toolCalls?: FakeToolCall[];
  /** 'indexed' (0, 1, 2... the OpenAI way), 'index-zero' (every call at index 0). Default indexed. */
  callIndexing?: 'indexed' | 'index-zero';
  /** Send the finish_reason chunk twice. */
  doubleFinish?: boolean;
  finishReason?: string;
  /** Usage chunk: default counted (prompt chars/4, reply chars/4); null sends none. */
  usage?: { prompt_tokens: number; completion_tokens: number; cached_tokens?: number } | null;
  /** Characters per content/arguments delta (default 7). */
  chunkSize?: number;
  /** Destroy the socket after this many SSE events (a connection cut mid-reply). */
  cutAfterEvents?: number;
  /** Extra response headers (x-ratelimit-*). */
  headers?: Record<string, string>;
}

export interface ResponsesReplySpec {
  kind: 'responses';
  text?: string;
  toolCalls?: FakeToolCall[];
  usage?: { input_tokens: number; output_tokens: number; cached_tokens?: number } | null;
  chunkSize?: number;
  /** Destroy the socket after this many SSE events (a connection cut mid-reply). */
  cutAfterEvents?: number;
  /** Extra response headers (x-ratelimit-*). */
  headers?: Record<string, string>;
}

export interface HttpErrorSpec {
  kind: 'http-error';
  status: number;
  message: string;
  type?: string;
  code?: string;
  headers?: Record<string, string>;
  /** Extra fields of the error object (llama.cpp: n_ctx, n_prompt_tokens). */
  extra?: Record<string, unknown>;
  /** The whole body as sent, instead of OpenAI's {"error": {...}} (vLLM's flat error, FastAPI's detail, plain text). */
  body?: string;
  /** Content type of `body` (default application/json). */
  contentType?: string;
}

export type OpenAIResponseSpec = ChatReplySpec | ResponsesReplySpec | HttpErrorSpec;

export interface OpenAIRecordedRequest {
  index: number;
  path: string;
  headers: IncomingHttpHeaders;
  // biome-ignore lint/suspicious/noExplicitAny: tests index into arbitrary JSON
  body: any;
  /** Prompt tokens as this fake counts them (chars/4 of the messages/input, instructions and tools). */
  promptTokens: number;
}

export interface FakeOpenAIOptions {
  /** Decides each reply (index counts model requests only, not /models). */
  respond?: (req: {
    index: number;
    // biome-ignore lint/suspicious/noExplicitAny: callbacks index into arbitrary JSON
    body: any;
    promptTokens: number;
    headers: IncomingHttpHeaders;
  }) => OpenAIResponseSpec;
  responses?: OpenAIResponseSpec[];
  /** The server refuses tool_choice objects (llama.cpp/vLLM builds that take strings only). */
  stringToolChoiceOnly?: boolean;
  /** Refuse prompts over this many tokens, in this server's wording. */
  contextWindow?: number;
  /** vllm: the flat {"object": "error", "message"} body (no "error" field; the OpenAI SDK keeps none of it). */
  overflowWording?: 'openai' | 'llamacpp' | 'lmstudio' | 'vllm';
  /** Model ids GET /models lists (default ['fake-model']). */
  models?: string[];
  /** A key the server requires as Bearer token (default: none required). */
  apiKey?: string;
}

export interface FakeOpenAI {
  /** Base URL for the SDK (ends in /v1). */
  url: string;
  requests: OpenAIRecordedRequest[];
  /** Requests the fake refused as invalid (each with the reason), for assertions. */
  rejected: { index: number; reason: string }[];
  close(): Promise<void>;
}

class Invalid extends Error {}

function check(cond: unknown, message: string): asserts cond {
  if (!cond) throw new Invalid(message);
}

const CHAT_ROLES = new Set(['system', 'developer', 'user', 'assistant', 'tool']);

/** Tool names offered, after checking the tools array as the API does. */
// biome-ignore lint/suspicious/noExplicitAny: arbitrary JSON
function checkTools(tools: any, responses: boolean): Set<string> {
  const names = new Set<string>();
  if (tools === undefined) return names;
  check(Array.isArray(tools), "Invalid type for 'tools': expected an array.");
  tools.forEach((t, i) => {
    check(t?.type === 'function', `Invalid value for 'tools[${i}].type': expected 'function'.`);
    const fn = responses ? t : t.function;
    check(
      fn && typeof fn.name === 'string' && /^[a-zA-Z0-9_-]{1,64}$/.test(fn.name),
      `Invalid 'tools[${i}].function.name'.`,
    );
    check(
      fn.parameters === undefined || (typeof fn.parameters === 'object' && fn.parameters.type === 'object'),
      `Invalid schema for function '${fn.name}': schema must be a JSON Schema of 'type: "object"'.`,
    );
    names.add(fn.name);
  });
  return names;
}

// biome-ignore lint/suspicious/noExplicitAny: arbitrary JSON
function checkToolChoice(choice: any, tools: Set<string>, responses: boolean, stringOnly: boolean): void {
  if (choice === undefined) return;
  check(tools.size > 0, "Invalid value for 'tool_choice': 'tool_choice' is only allowed when 'tools' are specified.");
  if (typeof choice === 'string') {
    check(
      ['none', 'auto', 'required'].includes(choice),
      `Invalid value for 'tool_choice': '${choice}'. Supported values are: 'none', 'auto', and 'required'.`,
    );
    return;
  }
  check(
    !stringOnly,
    "Invalid tool_choice: only string values ('none', 'auto', 'required') are supported by this server.",
  );
  check(choice && choice.type === 'function', "Invalid value for 'tool_choice.type': expected 'function'.");
  const name = responses ? choice.name : choice.function?.name;
  check(
    typeof name === 'string' && tools.has(name),
    `Invalid value for 'tool_choice': no function named '${String(name)}' was specified in the 'tools' parameter.`,
  );
}

// biome-ignore lint/suspicious/noExplicitAny: arbitrary JSON
function checkChat(body: any, stringOnly: boolean): Set<string> {
  check(typeof body.model === 'string' && body.model !== '', "Missing required parameter: 'model'.");
  check(
    Array.isArray(body.messages) && body.messages.length > 0,
    "Invalid 'messages': empty array. Expected an array with minimum length 1.",
  );
  check(body.stream === true, 'This fake only streams: stream must be true.');
  check(
    body.stream_options === undefined || body.stream === true,
    "The 'stream_options' parameter is only allowed when 'stream' is enabled.",
  );
  check(
    !(body.max_tokens !== undefined && body.max_completion_tokens !== undefined),
    "'max_tokens' and 'max_completion_tokens' cannot both be set.",
  );
  const tools = checkTools(body.tools, false);
  checkToolChoice(body.tool_choice, tools, false, stringOnly);
  let open: Set<string> | undefined; // calls of the last assistant message not answered yet
  body.messages.forEach(
    (
      m: {
        role?: string;
        content?: unknown;
        tool_calls?: { id?: string; type?: string; function?: { name?: string; arguments?: unknown } }[];
        tool_call_id?: string;
      },
      i: number,
    ) => {
      check(
        typeof m.role === 'string' && CHAT_ROLES.has(m.role),
        `Invalid value for 'messages[${i}].role': '${String(m.role)}'.`,
      );
      if (m.role !== 'tool' && open && open.size > 0) {
        throw new Invalid(
          `An assistant message with 'tool_calls' must be followed by tool messages responding to each 'tool_call_id'. The following tool_call_ids did not have response messages: ${[...open].join(', ')}`,
        );
      }
      if (m.role === 'tool') {
        check(
          open !== undefined,
          `Invalid parameter: messages with role 'tool' must be a response to a preceeding message with 'tool_calls'. (messages[${i}])`,
        );
        check(
          typeof m.tool_call_id === 'string' && open.has(m.tool_call_id),
          `Invalid parameter: 'tool_call_id' of '${String(m.tool_call_id)}' not found in 'tool_calls' of previous message. (messages[${i}])`,
        );
        open.delete(m.tool_call_id);
        check(typeof m.content === 'string' || Array.isArray(m.content), `Invalid 'messages[${i}].content'.`);
        return;
      }
      open = undefined;
      if (m.role === 'assistant') {
        const calls = m.tool_calls ?? [];
        check(
          calls.length > 0 || (m.content !== null && m.content !== undefined),
          `Invalid 'messages[${i}]': an assistant message needs 'content' or 'tool_calls'.`,
        );
        const ids = new Set<string>();
        for (const c of calls) {
          check(
            typeof c.id === 'string' && c.id.length > 0 && c.id.length <= 40,
            `Invalid 'messages[${i}].tool_calls[].id'.`,
          );
          check(!ids.has(c.id), `Duplicate tool call id '${c.id}' in messages[${i}].`);
          ids.add(c.id);
          check(
            c.type === 'function' && typeof c.function?.name === 'string' && typeof c.function.arguments === 'string',
            `Invalid 'messages[${i}].tool_calls[]'.`,
          );
          JSON.parse(c.function.arguments as string);
        }
        if (calls.length > 0) open = ids;
      } else {
        check(typeof m.content === 'string' || Array.isArray(m.content), `Invalid 'messages[${i}].content'.`);
      }
    },
  );
  check(
    !open || open.size === 0,
    `An assistant message with 'tool_calls' must be followed by tool messages responding to each 'tool_call_id'.`,
  );
  return tools;
}

// biome-ignore lint/suspicious/noExplicitAny: arbitrary JSON
function checkResponses(body: any, stringOnly: boolean): Set<string> {
  check(typeof body.model === 'string', "Missing required parameter: 'model'.");
  check(Array.isArray(body.input), 'input must be an array of items here.');
  check(body.stream === true, 'This fake only streams: stream must be true.');
  const tools = checkTools(body.tools, true);
  checkToolChoice(body.tool_choice, tools, true, stringOnly);
  const calls = new Set<string>();
  const answered = new Set<string>();
  body.input.forEach(
    (
      it: { type?: string; role?: string; call_id?: string; name?: string; arguments?: unknown; output?: unknown },
      i: number,
    ) => {
      if (it.type === 'function_call') {
        check(
          typeof it.call_id === 'string' && typeof it.name === 'string' && typeof it.arguments === 'string',
          `Invalid 'input[${i}]' function_call.`,
        );
        calls.add(it.call_id);
      } else if (it.type === 'function_call_output') {
        check(
          typeof it.call_id === 'string' && calls.has(it.call_id),
          `No tool call found for function call output with call_id ${String(it.call_id)}.`,
        );
        check(!answered.has(it.call_id), `Duplicate function_call_output for call_id ${it.call_id}.`);
        answered.add(it.call_id);
      } else {
        check(
          it.role === 'user' || it.role === 'assistant' || it.role === 'system' || it.role === 'developer',
          `Invalid 'input[${i}].role'.`,
        );
      }
    },
  );
  for (const id of calls) check(answered.has(id), `No tool output found for function call ${id}.`);
  return tools;
}

/** Prompt tokens as counted here: chars/4 of everything the model reads. */
// biome-ignore lint/suspicious/noExplicitAny: arbitrary JSON
export function countPromptTokens(body: any): number {
  const parts = JSON.stringify([body.messages ?? body.input ?? [], body.instructions ?? '', body.tools ?? []]);
  return Math.ceil(parts.length / 4);
}

function overflowError(wording: FakeOpenAIOptions['overflowWording'], window: number, prompt: number): HttpErrorSpec {
  if (wording === 'llamacpp') {
    return {
      kind: 'http-error',
      status: 400,
      type: 'exceed_context_size_error',
      message: 'the request exceeds the available context size, try increasing it',
      extra: { n_prompt_tokens: prompt, n_ctx: window },
    };
  }
  if (wording === 'vllm') {
    return {
      kind: 'http-error',
      status: 400,
      message: '',
      body: JSON.stringify({
        object: 'error',
        message: `This model's maximum context length is ${window} tokens. However, you requested ${prompt} tokens in the messages, Please reduce the length of the messages.`,
        type: 'BadRequestError',
        param: null,
        code: 400,
      }),
    };
  }
  if (wording === 'lmstudio') {
    return {
      kind: 'http-error',
      status: 400,
      message: `Trying to keep the first ${prompt} tokens when context the overflows. However, the model is loaded with context length of only ${window} tokens, which is not enough.`,
    };
  }
  return {
    kind: 'http-error',
    status: 400,
    type: 'invalid_request_error',
    code: 'context_length_exceeded',
    message: `This model's maximum context length is ${window} tokens. However, your messages resulted in ${prompt} tokens. Please reduce the length of the messages.`,
  };
}

function pieces(text: string, size: number): string[] {
  const out: string[] = [];
  for (let i = 0; i < text.length; i += size) out.push(text.slice(i, i + size));
  return out;
}

// biome-ignore lint/suspicious/noExplicitAny: arbitrary JSON
function chatChunks(spec: ChatReplySpec, body: any, promptTokens: number, n: number): unknown[] {
  const size = Math.max(1, spec.chunkSize ?? 7);
  const base = { id: `chatcmpl-fake${n}`, object: 'chat.completion.chunk', created: 1_700_000_000, model: body.model };
  const chunk = (delta: Record<string, unknown>, finish: string | null = null): unknown => ({
    ...base,
    choices: [{ index: 0, delta, logprobs: null, finish_reason: finish }],
  });
  const out: unknown[] = [chunk({ role: 'assistant', content: '' })];
  let chars = 0;
  if (spec.reasoning) for (const p of pieces(spec.reasoning, size)) out.push(chunk({ reasoning_content: p }));
  if (spec.text) {
    for (const p of pieces(spec.text, size)) out.push(chunk({ content: p }));
    chars += spec.text.length;
  }
  const calls = spec.toolCalls ?? [];
  if (calls.length > 0 && body.tool_choice === 'none')
    throw new Error(
      'fake-openai: the test scripted a tool call under tool_choice "none"; the real API never sends one',
    );
  calls.forEach((c, i) => {
    const index = spec.callIndexing === 'index-zero' ? 0 : i;
    const id = c.id ?? `call_fake${n}_${i}`;
    const json = JSON.stringify(c.arguments);
    chars += json.length + c.name.length;
    out.push(chunk({ tool_calls: [{ index, id, type: 'function', function: { name: c.name, arguments: '' } }] }));
    for (const p of pieces(json, size)) out.push(chunk({ tool_calls: [{ index, function: { arguments: p } }] }));
  });
  const finish = spec.finishReason ?? (calls.length > 0 ? 'tool_calls' : 'stop');
  out.push(chunk({}, finish));
  if (spec.doubleFinish) out.push(chunk({}, finish));
  const usage =
    spec.usage === undefined
      ? { prompt_tokens: promptTokens, completion_tokens: Math.max(1, Math.ceil(chars / 4)) }
      : spec.usage;
  if (usage && body.stream_options?.include_usage) {
    out.push({
      ...base,
      choices: [],
      usage: {
        prompt_tokens: usage.prompt_tokens,
        completion_tokens: usage.completion_tokens,
        total_tokens: usage.prompt_tokens + usage.completion_tokens,
        prompt_tokens_details: { cached_tokens: 'cached_tokens' in usage ? (usage.cached_tokens ?? 0) : 0 },
      },
    });
  }
  return out;
}

// biome-ignore lint/suspicious/noExplicitAny: arbitrary JSON
function responsesEvents(spec: ResponsesReplySpec, body: any, promptTokens: number, n: number): unknown[] {
  const size = Math.max(1, spec.chunkSize ?? 7);
  let seq = 0;
  const ev = (e: Record<string, unknown>): unknown => ({ ...e, sequence_number: seq++ });
  const response = (status: string, output: unknown[], usage: unknown): Record<string, unknown> => ({
    id: `resp_fake${n}`,
    object: 'response',
    created_at: 1_700_000_000,
    model: body.model,
    status,
    output,
    usage,
  });
  const out: unknown[] = [ev({ type: 'response.created', response: response('in_progress', [], null) })];
  const items: unknown[] = [];
  let index = 0;
  let chars = 0;
  if (spec.text) {
    const id = `msg_fake${n}`;
    out.push(
      ev({
        type: 'response.output_item.added',
        output_index: index,
        item: { id, type: 'message', role: 'assistant', status: 'in_progress', content: [] },
      }),
    );
    for (const p of pieces(spec.text, size))
      out.push(
        ev({
          type: 'response.output_text.delta',
          item_id: id,
          output_index: index,
          content_index: 0,
          delta: p,
          logprobs: [],
        }),
      );
    const item = {
      id,
      type: 'message',
      role: 'assistant',
      status: 'completed',
      content: [{ type: 'output_text', text: spec.text, annotations: [] }],
    };
    out.push(ev({ type: 'response.output_item.done', output_index: index, item }));
    items.push(item);
    chars += spec.text.length;
    index++;
  }
  const calls = spec.toolCalls ?? [];
  if (calls.length > 0 && body.tool_choice === 'none')
    throw new Error('fake-openai: the test scripted a tool call under tool_choice "none"');
  for (const c of calls) {
    const id = `fc_fake${n}_${index}`;
    const callId = c.id ?? `call_fake${n}_${index}`;
    const json = JSON.stringify(c.arguments);
    chars += json.length;
    out.push(
      ev({
        type: 'response.output_item.added',
        output_index: index,
        item: { id, type: 'function_call', call_id: callId, name: c.name, arguments: '', status: 'in_progress' },
      }),
    );
    for (const p of pieces(json, size))
      out.push(ev({ type: 'response.function_call_arguments.delta', item_id: id, output_index: index, delta: p }));
    out.push(ev({ type: 'response.function_call_arguments.done', item_id: id, output_index: index, arguments: json }));
    const item = { id, type: 'function_call', call_id: callId, name: c.name, arguments: json, status: 'completed' };
    out.push(ev({ type: 'response.output_item.done', output_index: index, item }));
    items.push(item);
    index++;
  }
  const u =
    spec.usage === undefined
      ? { input_tokens: promptTokens, output_tokens: Math.max(1, Math.ceil(chars / 4)) }
      : spec.usage;
  const usage = u
    ? {
        input_tokens: u.input_tokens,
        output_tokens: u.output_tokens,
        total_tokens: u.input_tokens + u.output_tokens,
        input_tokens_details: { cached_tokens: u.cached_tokens ?? 0 },
        output_tokens_details: { reasoning_tokens: 0 },
      }
    : null;
  out.push(ev({ type: 'response.completed', response: response('completed', items, usage) }));
  return out;
}

function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const parts: Buffer[] = [];
    req.on('data', (c: Buffer) => parts.push(c));
    req.on('end', () => resolve(Buffer.concat(parts).toString('utf8')));
    req.on('error', reject);
  });
}

function sendError(res: ServerResponse, spec: HttpErrorSpec): void {
  const type = spec.contentType ?? 'application/json';
  res.writeHead(spec.status, { 'content-type': type, 'x-request-id': 'req_fake', ...spec.headers });
  if (spec.body !== undefined) {
    res.end(spec.body);
    return;
  }
  res.end(
    JSON.stringify({
      error: {
        message: spec.message,
        type: spec.type ?? 'invalid_request_error',
        param: null,
        code: spec.code ?? null,
        ...spec.extra,
      },
    }),
  );
}

export async function startFakeOpenAI(options: FakeOpenAIOptions = {}): Promise<FakeOpenAI> {
  const requests: OpenAIRecordedRequest[] = [];
  const rejected: { index: number; reason: string }[] = [];
  let modelRequests = 0;
  const server = createServer((req, res) => {
    void handle(req, res).catch((err: unknown) => {
      if (!res.headersSent) res.writeHead(500, { 'content-type': 'application/json' });
      res.end(
        JSON.stringify({
          error: { message: `fake-openai: ${err instanceof Error ? err.message : String(err)}`, type: 'server_error' },
        }),
      );
    });
  });

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const path = (req.url ?? '').replace(/\?.*$/, '');
    if (options.apiKey !== undefined && req.headers.authorization !== `Bearer ${options.apiKey}`) {
      return sendError(res, {
        kind: 'http-error',
        status: 401,
        type: 'invalid_request_error',
        code: 'invalid_api_key',
        message: 'Incorrect API key provided.',
      });
    }
    if (req.method === 'GET' && path === '/v1/models') {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(
        JSON.stringify({
          object: 'list',
          data: (options.models ?? ['fake-model']).map((id) => ({ id, object: 'model', created: 0, owned_by: 'fake' })),
        }),
      );
      return;
    }
    const isChat = req.method === 'POST' && path === '/v1/chat/completions';
    const isResponses = req.method === 'POST' && path === '/v1/responses';
    if (!isChat && !isResponses)
      return sendError(res, { kind: 'http-error', status: 404, message: `Unknown route ${req.method} ${path}` });
    const raw = await readBody(req);
    const index = modelRequests++;
    // biome-ignore lint/suspicious/noExplicitAny: arbitrary JSON
    let body: any;
    try {
      body = JSON.parse(raw);
    } catch {
      rejected.push({ index, reason: 'body is not JSON' });
      return sendError(res, {
        kind: 'http-error',
        status: 400,
        message: 'We could not parse the JSON body of your request.',
      });
    }
    const promptTokens = countPromptTokens(body);
    requests.push({ index, path, headers: req.headers, body, promptTokens });
    try {
      if (isChat) checkChat(body, options.stringToolChoiceOnly === true);
      else checkResponses(body, options.stringToolChoiceOnly === true);
    } catch (err) {
      if (!(err instanceof Invalid)) throw err;
      rejected.push({ index, reason: err.message });
      return sendError(res, { kind: 'http-error', status: 400, message: err.message, code: 'invalid_request' });
    }
    if (options.contextWindow !== undefined && promptTokens > options.contextWindow) {
      return sendError(res, overflowError(options.overflowWording, options.contextWindow, promptTokens));
    }
    const spec = options.respond?.({ index, body, promptTokens, headers: req.headers }) ?? options.responses?.[index];
    if (!spec)
      return sendError(res, {
        kind: 'http-error',
        status: 500,
        type: 'server_error',
        message: `fake-openai: no response scripted for request ${index}`,
      });
    if (spec.kind === 'http-error') return sendError(res, spec);
    check(spec.kind === (isChat ? 'chat' : 'responses'), `fake-openai: a ${spec.kind} reply was scripted for ${path}`);
    const events =
      spec.kind === 'chat'
        ? chatChunks(spec, body, promptTokens, index)
        : responsesEvents(spec, body, promptTokens, index);
    res.writeHead(200, {
      'content-type': 'text/event-stream',
      'cache-control': 'no-cache',
      'x-request-id': `req_fake${index}`,
      ...spec.headers,
    });
    for (const [n, e] of events.entries()) {
      if (spec.cutAfterEvents !== undefined && n >= spec.cutAfterEvents) {
        // Flush what was written first (an empty write's callback), then drop the connection.
        await new Promise<void>((resolve) => res.write('', () => resolve()));
        res.socket?.destroy();
        return;
      }
      const type = (e as { type?: string }).type;
      res.write(
        spec.kind === 'responses' && type
          ? `event: ${type}\ndata: ${JSON.stringify(e)}\n\n`
          : `data: ${JSON.stringify(e)}\n\n`,
      );
    }
    if (spec.kind === 'chat') res.write('data: [DONE]\n\n');
    res.end();
  }

  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/v1`,
    requests,
    rejected,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
