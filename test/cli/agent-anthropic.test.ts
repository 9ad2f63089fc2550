// `orchestrate agent` through the real Anthropic SDK, against the fake Messages API on 127.0.0.1.
// The print, json and refusal cases call the CLI's main() in this process (what they check is
// the provider path, not the process: a process start was most of each case); rpc mode, which
// speaks over the process's own stdin and stdout, runs as a child process.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import {
  respondLikeScript,
  startFakeAnthropic,
  type FakeAnthropic,
  type FakeTurn,
} from '../helpers/fake-anthropic-server.js';
import { startAgentRpc, type JsonLine } from '../runtime/helpers/agent-cli.js';
import { type CliRun, runCli } from './run-cli.js';

let home: string;
const servers: FakeAnthropic[] = [];
beforeAll(() => {
  home = mkdtempSync(join(tmpdir(), 'orch-cli-anthropic-'));
});
afterAll(async () => {
  for (const s of servers) await s.close();
  rmSync(home, { recursive: true, force: true });
});
afterEach(() => vi.unstubAllEnvs());

/**
 * `orchestrate agent ARGS` through main() in this process. The provider reads its key and base
 * URL from process.env (a child process would inherit them), so they are set there for the call,
 * and undone after the test.
 */
function runAgentCli(args: string[], { env }: { env: Record<string, string | undefined> }): Promise<CliRun> {
  for (const name of ['ANTHROPIC_API_KEY', 'ANTHROPIC_BASE_URL', 'ORCHESTRATE_MODEL']) vi.stubEnv(name, env[name]);
  return runCli(['agent', ...args], { env: { PATH: process.env.PATH, HOME: home, ...env } });
}

async function fake(turns: FakeTurn[]): Promise<{ server: FakeAnthropic; env: Record<string, string | undefined> }> {
  const server = await startFakeAnthropic({ respond: respondLikeScript(turns) });
  servers.push(server);
  return {
    server,
    env: {
      ORCHESTRATE_HOME: home,
      ANTHROPIC_API_KEY: 'sk-test-key',
      ANTHROPIC_BASE_URL: server.url,
      ORCHESTRATE_MODEL: undefined,
    },
  };
}

describe('orchestrate agent through the Anthropic provider', () => {
  it('print mode answers from the Messages API', async () => {
    const { server, env } = await fake([{ text: 'Paris is the capital of France.', usage: { input_tokens: 40 } }]);
    const r = await runAgentCli(['--no-session', '--tools', 'none', '--cwd', home, 'Capital of France?'], { env });
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    expect(r.stdout).toBe('Paris is the capital of France.\n');
    expect(server.requests).toHaveLength(1);
    const body = server.requests[0]!.body as {
      model: string;
      stream: boolean;
      messages: { role: string }[];
      system: unknown;
      tools?: unknown;
    };
    expect(body).toMatchObject({ model: 'claude-sonnet-4-5', stream: true });
    expect(body.messages.map((m) => m.role)).toEqual(['user']);
    expect(JSON.stringify(body.system)).toContain('Current working directory');
    expect(body.tools).toBeUndefined();
    expect(server.requests[0]!.headers.authorization).toBe('Bearer sk-test-key');
  });

  it('--model-price declares a model the built-in list does not have: requests carry its id within its output limit, and usage is priced by it', async () => {
    const { server, env } = await fake([{ text: 'done', usage: { input_tokens: 1_000_000, output_tokens: 100_000 } }]);
    const args = [
      '--mode',
      'json',
      '--no-session',
      '--tools',
      'none',
      '--cwd',
      home,
      '--model',
      'claude-future-7',
      '--model-price',
      '2/10',
      '--max-output',
      '20k',
      'Go',
    ];
    const r = await runAgentCli(args, { env });
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    const body = server.requests[0]!.body as { model: string; max_tokens: number };
    expect(body.model).toBe('claude-future-7');
    expect(body.max_tokens).toBeLessThanOrEqual(20_000);
    const end = r.stdout
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as JsonLine)
      .filter((l) => l.type === 'message_end')
      .at(-1)!;
    const usage = (end.message as { usage: { input: number; output: number; cost: { total: number } } }).usage;
    expect(usage.cost.total).toBeCloseTo((usage.input * 2 + usage.output * 10) / 1e6, 9);
    expect(usage.cost.total).toBeGreaterThan(2); // 1M input at $2 and 100k output at $10
  });

  it('without --model-price an unknown model is refused up front; bad --model-price values say what to give', async () => {
    const { server, env } = await fake([{ text: 'unused' }]);
    const unknown = await runAgentCli(['--no-session', '--cwd', home, '--model', 'claude-future-7', 'Go'], { env });
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toContain('Unknown model "claude-future-7"');
    const bad = await runAgentCli(
      ['--no-session', '--cwd', home, '--model', 'claude-future-7', '--model-price', 'cheap', 'Go'],
      { env },
    );
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('--model-price "cheap" is not IN/OUT');
    const orphan = await runAgentCli(['--no-session', '--cwd', home, '--context-window', '1M', 'Go'], { env });
    expect(orphan.code).toBe(2);
    expect(orphan.stderr).toContain('--context-window only goes with --model-price');
    expect(server.requests).toHaveLength(0);
  });

  it('json mode streams a tool round: the second request carries the tool result', async () => {
    const { server, env } = await fake([
      { text: 'Let me look.', tools: [{ name: 'bash', args: { command: 'echo from-bash' }, id: 'toolu_1' }] },
      { text: 'It printed from-bash.' },
    ]);
    const r = await runAgentCli(
      [
        '--mode',
        'json',
        '--no-session',
        '--tools',
        'bash',
        '--model',
        'haiku',
        '--thinking',
        'off',
        '--cwd',
        home,
        'Run echo',
      ],
      { env },
    );
    expect(r.code).toBe(0);
    const lines = r.stdout
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as JsonLine);
    expect(lines[0]).toMatchObject({ type: 'session' });
    const ends = lines.filter((l) => l.type === 'message_end').map((l) => (l.message as { role: string }).role);
    expect(ends).toEqual(['user', 'assistant', 'toolResult', 'assistant']);
    expect(lines.filter((l) => l.type === 'message_update').length).toBeGreaterThan(1);
    const second = server.requests[1]!.body as {
      model: string;
      messages: { role: string; content: { type: string; tool_use_id?: string; content?: string }[] }[];
    };
    expect(second.model).toBe('claude-haiku-4-5');
    const toolResult = second.messages[2]!.content.find((b) => b.type === 'tool_result')!;
    expect(toolResult).toMatchObject({ tool_use_id: 'toolu_1' });
    expect(JSON.stringify(toolResult.content)).toContain('from-bash');
  });

  it('rpc mode runs a prompt and reports the usage the API returned', async () => {
    const { env } = await fake([{ text: 'pong', usage: { input_tokens: 123 } }]);
    const rpc = startAgentRpc(['--no-session', '--tools', 'none', '--cwd', home], { env });
    expect(await rpc.send({ id: 1, type: 'prompt', message: 'ping' })).toMatchObject({ id: 1, success: true });
    await rpc.waitFor((l) => l.type === 'agent_end');
    expect(await rpc.send({ id: 2, type: 'get_last_assistant_text' })).toMatchObject({ id: 2, data: { text: 'pong' } });
    const stats = (await rpc.send({ id: 3, type: 'get_stats' })).data as { tokens: { input: number }; cost: number };
    expect(stats.tokens.input).toBe(123);
    expect(stats.cost).toBeGreaterThan(0);
    expect(await rpc.close()).toBe(0);
  });
});
