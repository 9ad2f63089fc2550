// The providers the conformance suite runs, each behind one small adapter: a provider-neutral
// script of steps (a reply, an HTTP error with any body, a reply cut mid-stream) is translated
// into what that provider's strict fake server (or the scripted provider) plays, and the real
// provider streams it through its real SDK on the wire.
import { getModel, scriptedModel } from '../../src/ai/models.js';
import { modelForProvider } from '../../src/ai/provider-config.js';
import { streamOpenAIChat, streamOpenAIResponses } from '../../src/ai/openai-compatible.js';
import { streamAnthropic } from '../../src/ai/anthropic.js';
import { createScriptedProvider, type ScriptedTurn } from '../../src/ai/scripted.js';
import type { Model, StreamFunction } from '../../src/ai/types.js';
import { type ResponseSpec, startFakeAnthropic } from '../helpers/fake-anthropic-server.js';
import { type OpenAIResponseSpec, startFakeOpenAI } from '../helpers/fake-openai-server.js';

export interface ReplyStep {
  text?: string;
  tool?: { name: string; args: Record<string, unknown> };
  /** The reply stopped at the output limit. */
  stop?: 'length';
  usage?: { input: number; output: number };
}

export type Step =
  | { reply: ReplyStep }
  | {
      error: {
        status: number;
        /** Raw body; default: the provider's own error shape with message "boom". */
        body?: string;
        contentType?: string;
        headers?: Record<string, string>;
        /** The body quotes the request's Authorization and x-api-key headers back (a careless proxy). */
        echoCredentials?: boolean;
      };
    }
  /** The reply's text starts streaming, then the connection is cut. */
  | { cut: string };

export interface Served {
  model: Model;
  stream: StreamFunction;
  /** Requests the server (or the scripted provider) received. */
  requests(): number;
  close(): Promise<void>;
}

export interface Subject {
  name: string;
  /** Speaks HTTP to a server (error bodies, statuses, retries apply). */
  http: boolean;
  /** Reports a stop at the output limit. */
  lengthStop: boolean;
  start(steps: Step[]): Promise<Served>;
}

/** The key every subject sends; the suite checks it never comes back in a message. */
export const TEST_KEY = 'sk-conformance-0123456789abcdef';

const echo = (authorization: unknown, apiKey: unknown): string =>
  `Invalid request. Request headers were: Authorization: ${String(authorization)}, x-api-key: ${String(apiKey ?? TEST_KEY)}`;

const missing = (index: number): Step => ({
  error: { status: 500, body: JSON.stringify({ error: { message: `no step ${index}` } }) },
});

function anthropicSpec(step: Step, headers: Record<string, unknown>): ResponseSpec {
  if ('cut' in step) return { kind: 'cut', afterEvents: 4, content: [{ type: 'text', text: step.cut }], chunkSize: 4 };
  if ('error' in step) {
    const e = step.error;
    if (e.echoCredentials) {
      const body = {
        type: 'error',
        error: { type: 'invalid_request_error', message: echo(headers.authorization, headers['x-api-key']) },
      };
      return { kind: 'http-error', status: e.status, body: JSON.stringify(body) };
    }
    return e.body !== undefined
      ? { kind: 'http-error', status: e.status, body: e.body, contentType: e.contentType, headers: e.headers }
      : { kind: 'http-error', status: e.status, message: 'boom', headers: e.headers };
  }
  const r = step.reply;
  const content: NonNullable<Extract<ResponseSpec, { kind: 'message' }>['content']> = [];
  if (r.text !== undefined) content.push({ type: 'text', text: r.text });
  if (r.tool) content.push({ type: 'tool_use', name: r.tool.name, input: r.tool.args });
  return {
    kind: 'message',
    content,
    ...(r.stop === 'length' ? { stopReason: 'max_tokens' } : {}),
    ...(r.usage
      ? { usage: { input_tokens: r.usage.input, output_tokens: 1 }, deltaUsage: { output_tokens: r.usage.output } }
      : {}),
  };
}

function openAISpec(api: 'chat' | 'responses', step: Step, headers: Record<string, unknown>): OpenAIResponseSpec {
  if ('cut' in step) return { kind: api, text: step.cut, chunkSize: 3, cutAfterEvents: 5 };
  if ('error' in step) {
    const e = step.error;
    if (e.echoCredentials)
      return { kind: 'http-error', status: e.status, message: echo(headers.authorization, headers['x-api-key']) };
    return {
      kind: 'http-error',
      status: e.status,
      message: 'boom',
      type: e.status >= 500 ? 'server_error' : 'invalid_request_error',
      ...(e.body !== undefined ? { body: e.body } : {}),
      ...(e.contentType !== undefined ? { contentType: e.contentType } : {}),
      ...(e.headers ? { headers: e.headers } : {}),
    };
  }
  const r = step.reply;
  const toolCalls = r.tool ? [{ name: r.tool.name, arguments: r.tool.args }] : undefined;
  if (api === 'chat') {
    return {
      kind: 'chat',
      ...(r.text !== undefined ? { text: r.text } : {}),
      ...(toolCalls ? { toolCalls } : {}),
      ...(r.stop === 'length' ? { finishReason: 'length' } : {}),
      ...(r.usage ? { usage: { prompt_tokens: r.usage.input, completion_tokens: r.usage.output } } : {}),
    };
  }
  return {
    kind: 'responses',
    ...(r.text !== undefined ? { text: r.text } : {}),
    ...(toolCalls ? { toolCalls } : {}),
    ...(r.usage ? { usage: { input_tokens: r.usage.input, output_tokens: r.usage.output } } : {}),
  };
}

function openAISubject(api: 'chat' | 'responses'): Subject {
  return {
    name: api === 'chat' ? 'OpenAI Chat Completions' : 'OpenAI Responses',
    http: true,
    lengthStop: api === 'chat',
    async start(steps) {
      const server = await startFakeOpenAI({
        respond: ({ index, headers }) => openAISpec(api, steps[index] ?? missing(index), headers),
      });
      const model = modelForProvider(
        { name: 'local', type: 'openai-compatible', baseUrl: server.url, api, apiKeyEnv: 'CONFORMANCE_KEY_UNSET' },
        'fake-model',
        { contextWindow: 32_000, maxTokens: 4_000, cost: { input: 1, output: 2, cacheRead: 0.5, cacheWrite: 0 } },
      );
      return {
        model,
        stream: api === 'chat' ? streamOpenAIChat : streamOpenAIResponses,
        requests: () => server.requests.length,
        close: () => server.close(),
      };
    },
  };
}

export const SUBJECTS: Subject[] = [
  {
    name: 'Anthropic Messages',
    http: true,
    lengthStop: true,
    async start(steps) {
      const server = await startFakeAnthropic({
        respond: ({ index, headers }) => anthropicSpec(steps[index] ?? missing(index), headers),
      });
      return {
        model: { ...getModel('claude-haiku-4-5')!, baseUrl: server.url },
        stream: streamAnthropic,
        requests: () => server.requests.length,
        close: () => server.close(),
      };
    },
  },
  openAISubject('chat'),
  openAISubject('responses'),
  {
    name: 'scripted',
    http: false,
    lengthStop: true,
    async start(steps) {
      const turns: ScriptedTurn[] = steps.map((step): ScriptedTurn => {
        if ('cut' in step) return { text: step.cut, error: 'The connection was lost: terminated', afterBlocks: 1 };
        if ('error' in step) return { error: `${step.error.status} boom` };
        const r = step.reply;
        return {
          ...(r.text !== undefined ? { text: r.text } : {}),
          ...(r.tool ? { tools: [{ name: r.tool.name, args: r.tool.args }] } : {}),
          ...(r.stop === 'length' ? { stopReason: 'length' as const } : {}),
          ...(r.usage ? { usage: r.usage } : {}),
        };
      });
      const provider = createScriptedProvider(turns, { turnSelection: 'calls', chunkSize: 4 });
      return { model: scriptedModel(), stream: provider, requests: () => provider.calls.length, close: async () => {} };
    },
  },
];
