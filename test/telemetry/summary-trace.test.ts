// The handoff summary is a model call of its own (agents' `summaries: model`, the default): a real
// run as a user starts it (the CLI in process, the agent on a worker thread calling a fake
// OpenAI-compatible server over the openai SDK) exports it to a real OTLP/HTTP receiver as a
// `chat` span of the attempt, with its model, tokens and `orchestrate.call.purpose: summary`, apart
// from the turn's own chat span. Before, the summary call had no span: its usage was counted in
// the run and the attempt but absent from the trace.
import { afterAll, describe, expect, it } from 'vitest';
import { runCli } from '../cli/run-cli.js';
import { startFakeOpenAI } from '../helpers/fake-openai-server.js';
import { cleanupTempDirs, tempProject } from '../orchestrator/helpers/run-fixtures.js';
import { startOtlpReceiver } from './otlp-receiver.js';

afterAll(() => cleanupTempDirs());

const KEY = `sk-summary-decoy-${Math.random().toString(36).slice(2)}`;

const RECIPE = (baseUrl: string) => `name: summarized
providers:
  gateway:
    type: openai-compatible
    base_url: ${baseUrl}
    api_key_env: SUMMARY_DECOY_KEY
models:
  fake-model:
    price: { input: 1, output: 1 }
    context_window: 64k
    max_tokens: 8k
agents:
  writer: { tools: [read], provider: gateway, model: fake-model, summaries: model }
tasks:
  - id: note
    agent: writer
    prompt: "Write a note"
`;

describe('the handoff summary in the trace', { timeout: 120_000 }, () => {
  it('is a chat span of the attempt with its own tokens and purpose summary', async () => {
    const server = await startFakeOpenAI({
      apiKey: KEY,
      respond: ({ body }) => {
        // The summary request carries the handoff focus; the task's turn does not.
        if (JSON.stringify(body.messages).includes('handoff to the coordinator'))
          return {
            kind: 'chat',
            text: 'Summary: wrote the note.',
            usage: { prompt_tokens: 321, completion_tokens: 17 },
          };
        return { kind: 'chat', text: 'Here is the note.', usage: { prompt_tokens: 120, completion_tokens: 9 } };
      },
    });
    const receiver = await startOtlpReceiver();
    const before = process.env.SUMMARY_DECOY_KEY;
    process.env.SUMMARY_DECOY_KEY = KEY;
    try {
      const dir = tempProject({ 'recipe.yaml': RECIPE(server.url) });
      const env = {
        PATH: process.env.PATH,
        HOME: process.env.HOME,
        SUMMARY_DECOY_KEY: KEY,
        OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url,
      };
      const r = await runCli(['run', 'recipe.yaml'], { cwd: dir, env });
      expect(r.code, r.stdout + r.stderr).toBe(0);
      const summaryAsked = server.requests.filter((q) => JSON.stringify(q.body).includes('handoff to the coordinator'));
      expect(summaryAsked).toHaveLength(1);

      const spans = receiver.spans;
      const agent = spans.filter((s) => s.name === 'invoke_agent note');
      expect(agent).toHaveLength(1);
      const chats = spans.filter((s) => s.name === 'chat fake-model' && s.parentSpanId === agent[0]!.spanId);
      const byPurpose = (p: string | undefined) => chats.filter((c) => c.attributes['orchestrate.call.purpose'] === p);
      // The turn: from its message, with its finish reason; no purpose.
      expect(byPurpose(undefined)).toHaveLength(1);
      expect(byPurpose(undefined)[0]!.attributes['gen_ai.usage.input_tokens']).toBe(120);
      // The summary: one span, its own usage.
      const summary = byPurpose('summary');
      expect(summary).toHaveLength(1);
      expect(summary[0]!.kind).toBe(3); // CLIENT
      expect(summary[0]!.attributes).toMatchObject({
        'gen_ai.operation.name': 'chat',
        'gen_ai.provider.name': 'gateway',
        'gen_ai.request.model': 'fake-model',
        'gen_ai.usage.input_tokens': 321,
        'gen_ai.usage.output_tokens': 17,
      });
      expect(summary[0]!.startNs).toBeGreaterThanOrEqual(byPurpose(undefined)[0]!.endNs);
      expect(chats).toHaveLength(2);
      for (const body of receiver.raw) expect(body.includes(KEY)).toBe(false);
    } finally {
      if (before === undefined) delete process.env.SUMMARY_DECOY_KEY;
      else process.env.SUMMARY_DECOY_KEY = before;
      await receiver.close();
      await server.close();
    }
  });
});
