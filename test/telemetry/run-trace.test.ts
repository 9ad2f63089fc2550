// `orchestrate run` with tracing on, as a user runs it: the CLI in process, agents on real worker
// threads calling a fake OpenAI-compatible server over the openai SDK, and a real OTLP/HTTP
// receiver on 127.0.0.1 decoding the protobuf the OpenTelemetry exporter sends. The trace must
// follow the GenAI semantic conventions (span names, kinds, gen_ai.* attributes, parents), carry
// failures as span status with error.type, and hold no secret: the provider's key (api_key_env)
// is in the environment and the model quotes it back, with message capture on.
import { afterAll, describe, expect, it } from 'vitest';
import { FAILURE_CLASSES } from '../../src/run/run-events.js';
import { runCli } from '../cli/run-cli.js';
import { startFakeOpenAI } from '../helpers/fake-openai-server.js';
import { cleanupTempDirs, tempProject } from '../orchestrator/helpers/run-fixtures.js';
import { type ReceivedSpan, startOtlpReceiver } from './otlp-receiver.js';

afterAll(() => cleanupTempDirs());

const KEY = `sk-otel-decoy-${Math.random().toString(36).slice(2)}`;

const RECIPE = (baseUrl: string) => `name: traced
providers:
  gateway:
    type: openai-compatible
    base_url: ${baseUrl}
    api_key_env: OTEL_DECOY_KEY
models:
  fake-model:
    price: { input: 1, output: 1 }
    context_window: 64k
    max_tokens: 8k
agents:
  reader: { tools: [read], provider: gateway, model: fake-model, summaries: extractive }
tasks:
  - id: look
    agent: reader
    prompt: "Read notes.txt and quote the key"
  - id: broken
    agent: reader
    prompt: "This one fails"
    on_failure: continue
    retries: 0
`;

const byName = (spans: ReceivedSpan[], name: string) => spans.filter((s) => s.name === name);
const one = (spans: ReceivedSpan[], name: string): ReceivedSpan => {
  const found = byName(spans, name);
  if (found.length !== 1)
    throw new Error(`expected one span "${name}", got ${found.length}: ${spans.map((s) => s.name).join(', ')}`);
  return found[0]!;
};

describe('orchestrate run exports a GenAI trace over OTLP', { timeout: 120_000 }, () => {
  it('a local run: invoke_workflow > invoke_agent > chat / execute_tool, errors as status, no secret in the bytes', async () => {
    const server = await startFakeOpenAI({
      apiKey: KEY,
      respond: ({ body }) => {
        const asked = JSON.stringify(body.messages);
        if (asked.includes('This one fails')) return { kind: 'http-error', status: 400, message: 'bad request' };
        if (!asked.includes('"tool"'))
          return {
            kind: 'chat',
            toolCalls: [{ id: 'call_read_1', name: 'read', arguments: { path: 'notes.txt' } }],
            usage: { prompt_tokens: 120, completion_tokens: 15, cached_tokens: 100 },
          };
        return { kind: 'chat', text: `The key is ${KEY}.`, usage: { prompt_tokens: 200, completion_tokens: 9 } };
      },
    });
    const receiver = await startOtlpReceiver();
    const before = process.env.OTEL_DECOY_KEY;
    // The agents' threads read the key where they make the request.
    process.env.OTEL_DECOY_KEY = KEY;
    try {
      const dir = tempProject({ 'recipe.yaml': RECIPE(server.url), 'notes.txt': 'a note\n' });
      const env = {
        PATH: process.env.PATH,
        HOME: process.env.HOME,
        OTEL_DECOY_KEY: KEY,
        OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url,
        OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT: 'true',
      };
      const r = await runCli(['run', 'recipe.yaml'], { cwd: dir, env });
      expect(r.code, r.stdout + r.stderr).toBe(1); // one task failed (on_failure: continue)
      expect(r.stderr).not.toMatch(/could not send traces/);
      // The exporter flushed before the command returned.
      const spans = receiver.spans;

      const run = one(spans, 'invoke_workflow traced');
      expect(run.kind).toBe(1); // INTERNAL
      expect(run.parentSpanId).toBe('');
      expect(run.attributes['gen_ai.operation.name']).toBe('invoke_workflow');
      expect(run.resource['service.name']).toBe('orchestrate');
      expect(run.status.code).toBe(2);
      expect(run.attributes['error.type']).toBe('failed');

      const look = one(spans, 'invoke_agent look');
      expect(look).toMatchObject({ kind: 1, parentSpanId: run.spanId, traceId: run.traceId });
      expect(look.attributes).toMatchObject({
        'gen_ai.operation.name': 'invoke_agent',
        'gen_ai.agent.name': 'look',
        'orchestrate.attempt': 1,
      });
      expect(look.status.code).toBe(0);

      const chats = spans.filter((s) => s.parentSpanId === look.spanId && s.name === 'chat fake-model');
      expect(chats).toHaveLength(2);
      for (const c of chats) {
        expect(c.kind).toBe(3); // CLIENT
        expect(c.attributes).toMatchObject({
          'gen_ai.operation.name': 'chat',
          'gen_ai.provider.name': 'gateway',
          'gen_ai.request.model': 'fake-model',
          'gen_ai.response.model': 'fake-model',
        });
        expect(c.endNs).toBeGreaterThanOrEqual(c.startNs);
      }
      const [first, second] = chats.sort((a, b) => Number(a.startNs - b.startNs));
      expect(first!.attributes['gen_ai.response.finish_reasons']).toEqual(['tool_call']);
      // 120 prompt tokens of which 100 were cached: all count as input, the cached ones as cache reads.
      expect(first!.attributes['gen_ai.usage.input_tokens']).toBe(120);
      expect(first!.attributes['gen_ai.usage.cache_read.input_tokens']).toBe(100);
      expect(first!.attributes['gen_ai.usage.output_tokens']).toBe(15);
      expect(second!.attributes['gen_ai.response.finish_reasons']).toEqual(['stop']);
      expect(second!.attributes['gen_ai.usage.output_tokens']).toBe(9);
      // Captured content (opt-in), redacted.
      expect(String(second!.attributes['gen_ai.output.messages'])).toContain('[REDACTED:OTEL_DECOY_KEY]');

      const tool = one(spans, 'execute_tool read');
      expect(tool).toMatchObject({ kind: 1, parentSpanId: look.spanId });
      expect(tool.attributes).toMatchObject({
        'gen_ai.operation.name': 'execute_tool',
        'gen_ai.tool.name': 'read',
        'gen_ai.tool.call.id': 'call_read_1',
      });
      expect(tool.startNs).toBeGreaterThanOrEqual(first!.endNs);

      const broken = one(spans, 'invoke_agent broken');
      expect(broken.parentSpanId).toBe(run.spanId);
      expect(broken.status.code).toBe(2);
      expect(FAILURE_CLASSES).toContain(broken.attributes['error.type']);
      const failedChat = spans.find((s) => s.parentSpanId === broken.spanId && s.name.startsWith('chat'));
      expect(failedChat?.status.code).toBe(2);

      // Every span belongs to the one trace.
      expect(new Set(spans.map((s) => s.traceId))).toEqual(new Set([run.traceId]));
      // The model did quote the key (the attack was made), and no byte the collector got holds it.
      expect(server.requests.length).toBeGreaterThan(0);
      expect(receiver.raw.length).toBeGreaterThan(0);
      for (const body of receiver.raw) expect(body.includes(KEY)).toBe(false);
    } finally {
      if (before === undefined) delete process.env.OTEL_DECOY_KEY;
      else process.env.OTEL_DECOY_KEY = before;
      await receiver.close();
      await server.close();
    }
  });
});
