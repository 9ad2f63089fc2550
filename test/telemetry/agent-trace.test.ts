// `orchestrate agent --otel`: one agent's trace (invoke_agent > chat / execute_tool) reaches a real
// OTLP/HTTP receiver, with the scripted model and a real read tool. The reply quotes a provider
// key from the environment; with message capture on it arrives redacted, never as written. A
// compaction's summary call (the Anthropic SDK against the fake Messages API) is a chat span of
// its own with `orchestrate.call.purpose: compaction`, as a run's are; before, it had none.
import { afterAll, describe, expect, it } from 'vitest';
import { runCli } from '../cli/run-cli.js';
import { respondLikeScript, startFakeAnthropic } from '../helpers/fake-anthropic-server.js';
import { SUMMARY_TEXT, cleanupTempDirs, isSummaryRequest, tempProject } from '../orchestrator/helpers/run-fixtures.js';
import { runAgentCli } from '../runtime/helpers/agent-cli.js';
import { startOtlpReceiver } from './otlp-receiver.js';

afterAll(() => cleanupTempDirs());

const KEY = `sk-ant-otel-agent-${Math.random().toString(36).slice(2)}`;

describe('orchestrate agent --otel', { timeout: 60_000 }, () => {
  it('exports invoke_agent with its chat and execute_tool spans, and no key', async () => {
    const receiver = await startOtlpReceiver();
    try {
      const dir = tempProject({
        'notes.txt': 'a note\n',
        'script.yaml': `turns:
  - tools: [{ name: read, args: { path: notes.txt }, id: call_r1 }]
  - text: "It says a note; your key is ${KEY}."
`,
      });
      const r = await runCli(
        [
          'agent',
          '--script',
          'script.yaml',
          '--tools',
          'read',
          '--no-session',
          '--otel',
          receiver.url,
          'Read notes.txt',
        ],
        {
          cwd: dir,
          env: {
            PATH: process.env.PATH,
            ORCHESTRATE_HOME: dir,
            ANTHROPIC_API_KEY: KEY,
            OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT: 'true',
          },
        },
      );
      expect(r.code, r.stderr).toBe(0);
      const spans = receiver.spans;
      const agent = spans.find((s) => s.name === 'invoke_agent agent');
      expect(agent).toMatchObject({ parentSpanId: '', kind: 1 });
      expect(agent?.attributes['gen_ai.operation.name']).toBe('invoke_agent');
      expect(agent?.status.code).toBe(0);
      const chats = spans.filter((s) => s.parentSpanId === agent?.spanId && s.name.startsWith('chat '));
      expect(chats).toHaveLength(2);
      for (const c of chats) expect(c.kind).toBe(3);
      expect(chats.map((c) => c.attributes['gen_ai.response.finish_reasons'])).toEqual(
        expect.arrayContaining([['tool_call'], ['stop']]),
      );
      const tool = spans.find((s) => s.name === 'execute_tool read');
      expect(tool).toMatchObject({ parentSpanId: agent?.spanId });
      expect(tool?.attributes['gen_ai.tool.call.id']).toBe('call_r1');
      expect(chats.map((c) => String(c.attributes['gen_ai.output.messages'])).join('\n')).toContain(
        '[REDACTED:ANTHROPIC_API_KEY]',
      );
      for (const body of receiver.raw) expect(body.includes(KEY)).toBe(false);
    } finally {
      await receiver.close();
    }
  });

  it("a compaction's summary call is a chat span of the agent with its tokens and purpose compaction", async () => {
    const receiver = await startOtlpReceiver();
    // The turn after the file was read reports a context past the threshold of a 40k window
    // (40k - 16k reserve): the session compacts before its next turn, asking the model for a summary.
    const turns = [
      { tools: [{ name: 'read', args: { path: 'notes.txt' }, id: 'toolu_r1' }], usage: { input_tokens: 30_000 } },
      { text: 'The notes are long.' },
    ];
    let turn = 0;
    const server = await startFakeAnthropic({
      respond: (req) =>
        isSummaryRequest(req.body)
          ? {
              kind: 'message',
              content: [{ type: 'text', text: SUMMARY_TEXT }],
              usage: { input_tokens: 777 },
              deltaUsage: { output_tokens: 55 },
            }
          : respondLikeScript(turns)({ ...req, index: turn++ }),
    });
    try {
      const dir = tempProject({ 'notes.txt': `${'a line of the notes\n'.repeat(3_000)}` });
      const r = await runAgentCli(
        [
          '--model',
          'claude-future-7',
          '--model-price',
          '1/1',
          '--context-window',
          '40k',
          '--tools',
          'read',
          '--no-session',
          '--cwd',
          dir,
          '--otel',
          receiver.url,
          'Read notes.txt',
        ],
        {
          env: {
            ORCHESTRATE_HOME: dir,
            ORCHESTRATE_MODEL: undefined,
            ANTHROPIC_API_KEY: KEY,
            ANTHROPIC_BASE_URL: server.url,
            OTEL_EXPORTER_OTLP_ENDPOINT: undefined,
            OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: undefined,
          },
        },
      );
      expect(r.code, r.stderr).toBe(0);
      expect(server.requests.filter((q) => isSummaryRequest(q.body))).toHaveLength(1);
      const spans = receiver.spans;
      const agent = spans.find((s) => s.name === 'invoke_agent agent');
      const chats = spans.filter((s) => s.parentSpanId === agent?.spanId && s.name.startsWith('chat '));
      // The two turns, and the summary call apart from them.
      expect(chats).toHaveLength(3);
      const summary = chats.filter((c) => c.attributes['orchestrate.call.purpose'] !== undefined);
      expect(summary).toHaveLength(1);
      expect(summary[0]!.name).toBe('chat claude-future-7');
      expect(summary[0]!.attributes).toMatchObject({
        'gen_ai.operation.name': 'chat',
        'gen_ai.provider.name': 'anthropic',
        'gen_ai.request.model': 'claude-future-7',
        'gen_ai.usage.input_tokens': 777,
        'gen_ai.usage.output_tokens': 55,
        'orchestrate.call.purpose': 'compaction',
      });
      expect(summary[0]!.kind).toBe(3);
    } finally {
      await server.close();
      await receiver.close();
    }
  });

  it('a bad --otel address is exit 2 naming the flag', async () => {
    const dir = tempProject({ 'script.yaml': 'turns:\n  - text: "hi"\n' });
    const r = await runCli(['agent', '--script', 'script.yaml', '--no-session', '--otel', 'nope', 'Hi'], {
      cwd: dir,
      env: { PATH: process.env.PATH, ORCHESTRATE_HOME: dir },
    });
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/orchestrate agent: --otel is not a URL: "nope"/);
  });
});
