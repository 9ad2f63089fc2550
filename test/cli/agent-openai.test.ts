// `orchestrate agent --provider NAME` through the real openai SDK against the strict fake
// OpenAI-compatible server on 127.0.0.1, and RPC set_model switching between providers.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { respondLikeScript, startFakeAnthropic, type FakeAnthropic } from '../helpers/fake-anthropic-server.js';
import { startFakeOpenAI, type FakeOpenAI } from '../helpers/fake-openai-server.js';
import { runAgentCli, startAgentRpc, type JsonLine } from '../runtime/helpers/agent-cli.js';

let home: string;
const closers: (() => Promise<void>)[] = [];
beforeAll(() => {
  home = mkdtempSync(join(tmpdir(), 'orch-cli-openai-'));
});
afterAll(async () => {
  for (const c of closers) await c();
  rmSync(home, { recursive: true, force: true });
});

async function openai(options: Parameters<typeof startFakeOpenAI>[0]): Promise<FakeOpenAI> {
  const server = await startFakeOpenAI(options);
  closers.push(() => server.close());
  return server;
}

const baseEnv = (): Record<string, string | undefined> => ({
  ORCHESTRATE_HOME: home,
  ORCHESTRATE_MODEL: undefined,
  OPENAI_API_KEY: undefined,
  ANTHROPIC_API_KEY: undefined,
});

describe('orchestrate agent --provider (OpenAI-compatible)', () => {
  it('print mode answers from a local server without a key; --model-price/--context-window declare the model', async () => {
    const server = await openai({ responses: [{ kind: 'chat', text: 'Paris.' }] });
    const r = await runAgentCli(
      [
        '--no-session',
        '--tools',
        'none',
        '--cwd',
        home,
        '--provider',
        'vllm',
        '--base-url',
        server.url,
        '--model',
        'qwen-coder',
        '--model-price',
        '0/0',
        '--context-window',
        '32k',
        'Capital of France?',
      ],
      { env: baseEnv() },
    );
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    expect(r.stdout).toBe('Paris.\n');
    expect(server.requests).toHaveLength(1);
    expect(server.requests[0]!.body.model).toBe('qwen-coder');
    expect(server.rejected).toEqual([]);
  });

  it('json mode marks usage the server did not report as estimated', async () => {
    const server = await openai({ responses: [{ kind: 'chat', text: 'ok', usage: null }] });
    const r = await runAgentCli(
      [
        '--mode',
        'json',
        '--no-session',
        '--tools',
        'none',
        '--cwd',
        home,
        '--provider',
        'local',
        '--base-url',
        server.url,
        '--model',
        'm',
        'Go',
      ],
      { env: baseEnv() },
    );
    expect(r.code).toBe(0);
    const end = r.stdout
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as JsonLine)
      .filter((l) => l.type === 'message_end')
      .at(-1)!;
    expect((end.message as { usage: { estimated?: boolean; input: number } }).usage).toMatchObject({ estimated: true });
  });

  it('a remote provider without its key is a usage error naming the variable', async () => {
    const r = await runAgentCli(
      ['--no-session', '--cwd', home, '--provider', 'openrouter', '--model', 'qwen/qwen3-coder', 'Go'],
      { env: { ...baseEnv(), OPENROUTER_API_KEY: undefined } },
    );
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('set OPENROUTER_API_KEY');
  });

  it('RPC set_model switches between the OpenAI-compatible provider and Anthropic in one session', async () => {
    const local = await openai({
      respond: ({ index }) => ({ kind: 'chat', text: index === 0 ? 'from local' : 'local again' }),
    });
    const anthropic: FakeAnthropic = await startFakeAnthropic({
      respond: respondLikeScript([{ text: 'from anthropic' }]),
    });
    closers.push(() => anthropic.close());
    const env = { ...baseEnv(), ANTHROPIC_API_KEY: 'sk-test', ANTHROPIC_BASE_URL: anthropic.url };
    const rpc = startAgentRpc(
      [
        '--no-session',
        '--tools',
        'none',
        '--cwd',
        home,
        '--provider',
        'local',
        '--base-url',
        local.url,
        '--model',
        'fake-model',
      ],
      { env },
    );
    const turn = async (id: number, text: string): Promise<unknown> => {
      const since = rpc.lines.length;
      await rpc.send({ id, type: 'prompt', message: text });
      await rpc.waitFor((l) => l.type === 'agent_end' && rpc.lines.indexOf(l) >= since);
      return (await rpc.send({ id: id + 100, type: 'get_last_assistant_text' })).data;
    };
    expect(await turn(1, 'one')).toEqual({ text: 'from local' });
    expect(
      await rpc.send({ id: 2, type: 'set_model', modelId: 'claude-haiku-4-5', provider: 'anthropic' }),
    ).toMatchObject({ success: true, data: { provider: 'anthropic', id: 'claude-haiku-4-5' } });
    expect(await turn(3, 'two')).toEqual({ text: 'from anthropic' });
    expect(await rpc.send({ id: 4, type: 'set_model', modelId: 'fake-model', provider: 'local' })).toMatchObject({
      success: true,
      data: { provider: 'local', id: 'fake-model' },
    });
    expect(await turn(5, 'three')).toEqual({ text: 'local again' });
    expect(await rpc.close()).toBe(0);
    // The conversation crossed providers and stayed valid for the strict server.
    expect(local.rejected).toEqual([]);
    expect(local.requests[1]!.body.messages.map((m: { role: string }) => m.role)).toEqual([
      'system',
      'user',
      'assistant',
      'user',
      'assistant',
      'user',
    ]);
  });
});
