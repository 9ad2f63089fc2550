// `orchestrate agent --otel`: one agent's trace (invoke_agent > chat / execute_tool) reaches a real
// OTLP/HTTP receiver, with the scripted model and a real read tool. The reply quotes a provider
// key from the environment; with message capture on it arrives redacted, never as written.
import { afterAll, describe, expect, it } from 'vitest';
import { runCli } from '../cli/run-cli.js';
import { cleanupTempDirs, tempProject } from '../orchestrator/helpers/run-fixtures.js';
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
