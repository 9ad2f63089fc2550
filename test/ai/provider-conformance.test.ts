// One conformance suite for every provider (Anthropic, OpenAI Chat, OpenAI Responses, scripted):
// the same cases, each against a strict local fake server speaking that provider's API through
// its real SDK (test/ai/provider-subjects.ts). Streaming, tool calls, usage, stop reasons and
// abort hold for all; the HTTP providers also share one retry loop (provider-retry.ts), so every
// error body shape, retry-after, a 500 then success, `maxRetries: 0` and the learning of a
// context window from an overflow are checked on each of them alike.
import { afterEach, describe, expect, it } from 'vitest';
import { forgetLearnedWindows, learnContextWindow, learnedContextWindow } from '../../src/ai/learned-windows.js';
import { isContextOverflow } from '../../src/ai/overflow.js';
import type {
  AssistantMessage,
  AssistantMessageEvent,
  Context,
  RetryInfo,
  StreamOptions,
  ToolCall,
} from '../../src/ai/types.js';
import { SUBJECTS, type Served, type Step, TEST_KEY } from './provider-subjects.js';

let served: Served | undefined;
afterEach(async () => {
  await served?.close();
  served = undefined;
  forgetLearnedWindows();
});

const context: Context = {
  systemPrompt: 'You edit files.',
  messages: [{ role: 'user', content: 'Read a.ts', timestamp: 1 }],
  tools: [
    {
      name: 'read',
      description: 'Read a file',
      parameters: { type: 'object', properties: { path: { type: 'string' } }, required: ['path'] },
    },
  ],
};

const fast: StreamOptions = { apiKey: TEST_KEY, retryBaseDelayMs: 1, streamIdleTimeoutMs: 10_000 };

interface Outcome {
  events: AssistantMessageEvent[];
  result: AssistantMessage;
  retries: RetryInfo[];
  requests: number;
}

async function play(
  subject: (typeof SUBJECTS)[number],
  steps: Step[],
  options: StreamOptions = {},
  onEvent?: (e: AssistantMessageEvent, controller: AbortController) => void,
): Promise<Outcome> {
  served = await subject.start(steps);
  const retries: RetryInfo[] = [];
  const controller = new AbortController();
  const s = served.stream(served.model, context, {
    ...fast,
    signal: controller.signal,
    onRetry: (i) => retries.push(i),
    ...options,
  });
  const events: AssistantMessageEvent[] = [];
  for await (const e of s) {
    events.push(e);
    onEvent?.(e, controller);
  }
  return { events, result: await s.result(), retries, requests: served.requests() };
}

const text = (m: AssistantMessage): string => m.content.map((b) => (b.type === 'text' ? b.text : '')).join('');
const calls = (m: AssistantMessage) =>
  m.content.filter((b): b is ToolCall => b.type === 'toolCall').map((c) => ({ name: c.name, arguments: c.arguments }));

const OVERFLOW = "This model's maximum context length is 2048 tokens. However, you requested 3100 tokens.";

/** The shapes servers put an error in: the same overflow text in each. */
const ERROR_BODIES: [string, string, string?][] = [
  [
    '{"error": {...}} (OpenAI, Anthropic)',
    JSON.stringify({ error: { message: OVERFLOW, type: 'invalid_request_error' } }),
  ],
  [
    'flat {"object": "error"} (vLLM, llama.cpp, LiteLLM)',
    JSON.stringify({ object: 'error', message: OVERFLOW, type: 'BadRequestError', param: null, code: 400 }),
  ],
  ['{"detail": "..."} (FastAPI)', JSON.stringify({ detail: OVERFLOW })],
  [
    '{"detail": [{loc, msg}]} (FastAPI validation)',
    JSON.stringify({ detail: [{ loc: ['body', 'messages'], msg: OVERFLOW, type: 'value_error' }] }),
  ],
  ['a plain-text body', OVERFLOW, 'text/plain'],
];

for (const subject of SUBJECTS) {
  describe(`provider conformance: ${subject.name}`, () => {
    it('streams text as start, text_start, text_delta*, text_end and done', async () => {
      const o = await play(subject, [{ reply: { text: 'Hello there, this reply comes in several deltas.' } }]);
      const types = o.events.map((e) => e.type);
      expect(types[0]).toBe('start');
      expect(types).toContain('text_start');
      expect(types.filter((t) => t === 'text_delta').length).toBeGreaterThan(1);
      expect(types.slice(-2)).toEqual(['text_end', 'done']);
      expect(o.result.stopReason).toBe('stop');
      expect(text(o.result)).toBe('Hello there, this reply comes in several deltas.');
      expect(o.requests).toBe(1);
    });

    it('streams a tool call with its parsed arguments and stops for tool use', async () => {
      const o = await play(subject, [{ reply: { tool: { name: 'read', args: { path: 'src/a.ts' } } } }]);
      expect(o.result.stopReason).toBe('toolUse');
      expect(calls(o.result)).toEqual([{ name: 'read', arguments: { path: 'src/a.ts' } }]);
      const end = o.events.find((e) => e.type === 'toolcall_end');
      expect(end && end.type === 'toolcall_end' ? end.toolCall.arguments : undefined).toEqual({ path: 'src/a.ts' });
    });

    it('reports the usage the server counted', async () => {
      const o = await play(subject, [{ reply: { text: 'ok', usage: { input: 1234, output: 56 } } }]);
      expect({ input: o.result.usage.input, output: o.result.usage.output }).toEqual({ input: 1234, output: 56 });
      expect(o.result.usage.estimated).toBeUndefined();
      expect(o.result.usage.cost.total).toBeGreaterThanOrEqual(0);
    });

    if (subject.lengthStop) {
      it('maps a reply cut at the output limit to stopReason "length"', async () => {
        const o = await play(subject, [{ reply: { text: 'a long answer that ran out of', stop: 'length' } }]);
        expect(o.result.stopReason).toBe('length');
      });
    }

    it('ends an abort mid-reply as "aborted", keeping what streamed', async () => {
      const o = await play(
        subject,
        [{ reply: { text: 'one two three four five six seven eight nine ten' } }],
        {},
        (e, c) => {
          if (e.type === 'text_delta') c.abort();
        },
      );
      expect(o.result.stopReason).toBe('aborted');
      expect(o.result.errorMessage).toMatch(/aborted/i);
      expect(o.events.at(-1)?.type).toBe('error');
    });

    it('classifies a transient failure (errorKind) and a final one (none)', async () => {
      const transient = await play(subject, [{ error: { status: 500 } }], { maxRetries: 0 });
      expect(transient.result).toMatchObject({ stopReason: 'error', errorStatus: 500, errorKind: 'server' });
      await served?.close();
      const final = await play(subject, [{ error: { status: 400 } }]);
      expect(final.result).toMatchObject({ stopReason: 'error', errorStatus: 400 });
      expect(final.result.errorKind).toBeUndefined();
      expect(final.result.errorRetryable).toBeUndefined();
      expect(final.requests).toBe(1);
    });

    it('marks a reply cut after it began streaming as retryable by the caller, without retrying it itself', async () => {
      const o = await play(subject, [{ cut: 'The answer begins here and then' }, { reply: { text: 'never' } }]);
      expect(o.result.stopReason).toBe('error');
      expect(o.result).toMatchObject({ errorKind: 'connection', errorRetryable: true });
      expect(text(o.result).length).toBeGreaterThan(0);
      expect(o.requests).toBe(1);
      expect(o.retries).toEqual([]);
    });

    if (!subject.http) return;

    for (const [shape, body, contentType] of ERROR_BODIES) {
      it(`reads the message of ${shape} and learns the context window it states`, async () => {
        const o = await play(subject, [{ error: { status: 400, body, contentType } }]);
        expect(o.result.stopReason).toBe('error');
        expect(o.result.errorMessage).toContain('maximum context length is 2048 tokens');
        expect(o.result.errorMessage).not.toMatch(/no body/);
        expect(o.requests).toBe(1);
        expect(isContextOverflow(o.result)).toBe(true);
        const model = served!.model;
        expect(learnContextWindow(model, o.result.errorMessage)).toBe(2048);
        expect(learnedContextWindow(model)).toBe(2048);
      });
    }

    it('retries a 429 after the delay its retry-after asks for (capped by maxRetryDelayMs)', async () => {
      const o = await play(
        subject,
        [{ error: { status: 429, headers: { 'retry-after': '2' } } }, { reply: { text: 'ok' } }],
        {
          maxRetryDelayMs: 30,
        },
      );
      expect(o.result.stopReason).toBe('stop');
      expect(o.requests).toBe(2);
      expect(o.retries).toEqual([
        expect.objectContaining({ attempt: 1, maxRetries: 3, delayMs: 30, status: 429, kind: 'rate_limit' }),
      ]);
    });

    it('retries a 500 and then succeeds', async () => {
      const o = await play(subject, [{ error: { status: 500 } }, { reply: { text: 'fine now' } }]);
      expect(o.result.stopReason).toBe('stop');
      expect(text(o.result)).toBe('fine now');
      expect(o.requests).toBe(2);
      expect(o.retries.map((r) => [r.attempt, r.kind, r.status])).toEqual([[1, 'server', 500]]);
    });

    it('maxRetries: 0 sends exactly one request and says retries are off', async () => {
      const o = await play(subject, [{ error: { status: 500 } }, { reply: { text: 'never' } }], { maxRetries: 0 });
      expect(o.requests).toBe(1);
      expect(o.retries).toEqual([]);
      expect(o.result.errorMessage).toMatch(/^500 .*boom.*\(attempt 1 of 1: retries are off\)$/);
      // The budget is spent: nothing above the provider may retry it again.
      expect(o.result.errorRetryable).toBeUndefined();
    });

    it('a permanent 500 uses the budget once and says which request failed last', async () => {
      const five = { error: { status: 500 } };
      const o = await play(subject, [five, five, five, five], { maxRetries: 2 });
      expect(o.requests).toBe(3);
      expect(o.retries.map((r) => `${r.attempt}/${r.maxRetries}`)).toEqual(['1/2', '2/2']);
      expect(o.result.errorMessage).toMatch(/\(attempt 3 of 3 failed; no retries left\)$/);
      expect(o.result).toMatchObject({ errorKind: 'server', errorStatus: 500 });
      expect(o.result.errorRetryable).toBeUndefined();
    });

    it('stops waiting for a retry when the signal aborts, sending nothing more', async () => {
      const stop = new AbortController();
      const o = await play(
        subject,
        [{ error: { status: 429, headers: { 'retry-after': '30' } } }, { reply: { text: 'never' } }],
        {
          signal: stop.signal,
          onRetry: () => stop.abort(),
        },
      );
      expect(o.result.stopReason).toBe('aborted');
      expect(o.requests).toBe(1);
    });

    it('an unreachable server is a connection failure, retried within the budget', async () => {
      served = await subject.start([]);
      await served.close();
      const retries: RetryInfo[] = [];
      const s = served.stream(served.model, context, { ...fast, maxRetries: 1, onRetry: (i) => retries.push(i) });
      const result = await s.result();
      expect(result).toMatchObject({ stopReason: 'error', errorKind: 'connection' });
      expect(retries.map((r) => r.kind)).toEqual(['connection']);
      expect(result.errorMessage).toMatch(/\(attempt 2 of 2 failed; no retries left\)$/);
    });

    it('keeps the API key out of an error body that echoes the request headers', async () => {
      const o = await play(subject, [{ error: { status: 400, echoCredentials: true } }]);
      expect(o.result.errorMessage).toContain('Request headers were');
      expect(o.result.errorMessage).not.toContain(TEST_KEY);
      expect(o.result.errorMessage).not.toMatch(/Bearer\s+sk-/);
    });
  });
}
