// `orchestrate agent` end to end on the scripted provider: the real CLI in a child process.
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { main } from '../../../src/cli/main.js';
import { FIXTURES, runAgentCli, startAgentRpc, type JsonLine } from '../../runtime/helpers/agent-cli.js';

let home: string;
beforeAll(() => {
  home = mkdtempSync(join(tmpdir(), 'orch-cli-agent-'));
});
afterAll(() => rmSync(home, { recursive: true, force: true }));

const env = (): Record<string, string | undefined> => ({ ORCHESTRATE_HOME: home, ANTHROPIC_API_KEY: undefined });
const script = (name: string): string => join(FIXTURES, name);

/** main() in process (no child): for flag errors that never reach a model or stdin. */
async function inProcess(
  argv: string[],
  extraEnv: Record<string, string | undefined> = {},
): Promise<{ code: number; stdout: string; stderr: string }> {
  let stdout = '';
  let stderr = '';
  const code = await main(argv, {
    stdout: (t) => (stdout += t),
    stderr: (t) => (stderr += t),
    cwd: home,
    env: { ...env(), ...extraEnv },
  });
  return { code, stdout, stderr };
}

// Each test of the first three blocks starts the CLI under tsx, and the first in-process main()
// loads the whole CLI: a loaded machine takes tens of seconds for that alone (25 s seen at load
// 25), so their bound (only a hang's) is well above the helper's per-process 60 s.
const SLOW_START = { timeout: 150_000 };

describe('orchestrate agent, print mode', SLOW_START, () => {
  it('prints the final answer and exits 0', async () => {
    const r = await runAgentCli(['--script', script('hello.yaml'), '--cwd', home, 'Say hello'], { env: env() });
    expect(r.stderr).toBe('');
    expect(r.stdout).toBe('Hello from the scripted model.\n');
    expect(r.code).toBe(0);
  });

  it('a failed run prints the error on stderr and exits 1; the prompt may come from stdin', async () => {
    const r = await runAgentCli(['--script', script('failing.yaml'), '--cwd', home, '--no-session'], {
      env: env(),
      input: 'Do the thing\n',
    });
    expect(r.stdout).toBe('');
    expect(r.stderr).toContain('400 invalid_request_error: the request was rejected');
    expect(r.code).toBe(1);
  });
});

describe('orchestrate agent, json mode', SLOW_START, () => {
  it('prints the session header, then every event as one JSON line in order', async () => {
    const sessionFile = join(home, 'json.jsonl');
    const r = await runAgentCli(
      [
        '--mode',
        'json',
        '--script',
        script('tool-round.yaml'),
        '--cwd',
        home,
        '--tools',
        'bash',
        '--session',
        sessionFile,
        'List files',
      ],
      { env: env() },
    );
    expect(r.code).toBe(0);
    const lines = r.stdout
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as JsonLine);
    expect(lines[0]).toMatchObject({ type: 'session', version: 3, cwd: home });
    // Streaming updates vary with chunking; everything else is fixed.
    const types = lines
      .slice(1)
      .map((l) => l.type)
      .filter((t) => t !== 'message_update' && t !== 'tool_execution_update');
    expect(types).toEqual([
      'agent_start',
      'turn_start',
      'message_start', // user
      'message_end',
      'message_start', // assistant with the tool call
      'message_end',
      'tool_execution_start',
      'tool_execution_end',
      'message_start', // tool result
      'message_end',
      'turn_end',
      'turn_start',
      'message_start', // final answer
      'message_end',
      'turn_end',
      'agent_end',
    ]);
    const toolEnd = lines.find((l) => l.type === 'tool_execution_end') as {
      result: { content: { text: string }[] };
      isError: boolean;
    };
    expect(toolEnd.isError).toBe(false);
    expect(toolEnd.result.content[0]!.text).toContain('listed');
    expect(lines.some((l) => l.type === 'message_update')).toBe(true);
    const header = JSON.parse(readFileSync(sessionFile, 'utf8').split('\n')[0]!) as JsonLine;
    expect(header.id).toBe(lines[0]!.id);
  });
});

describe('orchestrate agent, rpc mode', SLOW_START, () => {
  it('round-trips every command; errors keep their id; malformed lines do not stop the server', async () => {
    const rpc = startAgentRpc(['--script', script('rpc.yaml'), '--cwd', home, '--tools', 'read'], { env: env() });
    const ok = (r: JsonLine, command: string): JsonLine => {
      expect(r).toMatchObject({ type: 'response', command, success: true });
      return (r.data ?? {}) as JsonLine;
    };

    expect(ok(await rpc.send({ id: 's0', type: 'get_state' }), 'get_state')).toMatchObject({
      isStreaming: false,
      messageCount: 0,
      model: { provider: 'scripted' },
    });
    ok(await rpc.send({ id: 'p1', type: 'prompt', message: 'first question' }), 'prompt');
    await rpc.waitFor((l) => l.type === 'agent_end');
    expect(ok(await rpc.send({ id: 't1', type: 'get_last_assistant_text' }), 'get_last_assistant_text')).toEqual({
      text: 'first answer',
    });

    // A follow-up queued while idle is delivered with the next prompt's run.
    ok(await rpc.send({ id: 'f1', type: 'follow_up', message: 'and a follow-up' }), 'follow_up');
    ok(await rpc.send({ id: 'st1', type: 'steer', message: 'steer too' }), 'steer');
    ok(await rpc.send({ id: 'p2', type: 'prompt', message: 'second question' }), 'prompt');
    await rpc.waitFor((l) => l.type === 'agent_end' && rpc.lines.filter((x) => x.type === 'agent_end').length === 2);
    const messages = ok(await rpc.send({ id: 'm1', type: 'get_messages' }), 'get_messages').messages as {
      role: string;
    }[];
    expect(messages.map((m) => m.role)).toEqual([
      'user',
      'assistant',
      'user',
      'user',
      'assistant',
      'user',
      'assistant',
    ]);

    const stats = ok(await rpc.send({ id: 'g1', type: 'get_stats' }), 'get_stats');
    expect(stats).toMatchObject({ userMessages: 4, assistantMessages: 3, turns: 3 });

    expect(ok(await rpc.send({ id: 'th', type: 'set_thinking_level', level: 'high' }), 'set_thinking_level')).toEqual({
      level: 'high',
    });
    expect(ok(await rpc.send({ id: 'sm', type: 'set_model', modelId: 'claude-haiku-4-5' }), 'set_model')).toMatchObject(
      { id: 'claude-haiku-4-5', provider: 'scripted' },
    );
    expect(ok(await rpc.send({ id: 'gc', type: 'get_commands' }), 'get_commands')).toEqual({ commands: [] });

    // compact fails here (everything fits in the kept part): an error response with the id.
    const compact = await rpc.send({ id: 'c1', type: 'compact' });
    expect(compact).toMatchObject({ id: 'c1', type: 'response', command: 'compact', success: false });
    expect(String(compact.error)).toMatch(/Nothing to compact/);

    const entries = ok(await rpc.send({ id: 'e1', type: 'get_entries' }), 'get_entries').entries as {
      id: string;
      role?: string;
      preview?: string;
    }[];
    const second = entries.find((e) => e.role === 'user' && e.preview === 'second question')!;
    expect(ok(await rpc.send({ id: 'n1', type: 'navigate', targetId: second.id }), 'navigate')).toMatchObject({
      editorText: 'second question',
    });
    expect(
      (ok(await rpc.send({ id: 's1', type: 'get_state' }), 'get_state') as { messageCount: number }).messageCount,
    ).toBe(2);
    const first = entries.find((e) => e.role === 'user' && e.preview === 'first question')!;
    const forked = ok(await rpc.send({ id: 'k1', type: 'fork', entryId: first.id }), 'fork');
    expect(forked).toMatchObject({ text: 'first question' });

    const missing = await rpc.send({ id: 'n2', type: 'navigate', targetId: 'nope' });
    expect(missing).toMatchObject({ id: 'n2', command: 'navigate', success: false });
    rpc.write('{"id":"bad1","type":"get_state",');
    await rpc.waitFor((l) => l.id === 'bad1');
    expect(rpc.lines.find((l) => l.id === 'bad1')).toMatchObject({
      type: 'response',
      command: 'get_state',
      success: false,
    });
    const unknown = await rpc.send({ id: 'u1', type: 'teleport' });
    expect(unknown).toMatchObject({ id: 'u1', success: false });
    expect(String(unknown.error)).toContain('Valid commands: prompt, steer, follow_up, abort, compact, get_state');

    // Still serving: abort while idle answers, and a new prompt runs in the forked session.
    ok(await rpc.send({ id: 'a1', type: 'abort' }), 'abort');
    ok(await rpc.send({ id: 'p3', type: 'prompt', message: 'again' }), 'prompt');
    expect(await rpc.close()).toBe(0);
    expect(rpc.lines.filter((l) => l.type === 'agent_end')).toHaveLength(3);
    expect(rpc.stderr()).toBe('');
  });
});

describe('orchestrate agent, bad input', SLOW_START, () => {
  it('an unknown flag exits 2 with a usage hint', async () => {
    const r = await inProcess(['agent', '--bogus', 'hi']);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('Unknown argument: bogus');
    expect(r.stderr).toContain('--help');
  });

  it('an unknown tool exits 2 listing the valid ones', async () => {
    const r = await inProcess(['agent', '--script', script('hello.yaml'), '--tools', 'read,sed', 'hi']);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('Unknown tool "sed". Valid tools: read, bash, edit, write, grep, find, ls.');
  });

  it('no API key with the anthropic provider names ANTHROPIC_API_KEY and the scripted way, exit 2', async () => {
    const r = await inProcess(['agent', '--no-session', 'hi']);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('ANTHROPIC_API_KEY');
    expect(r.stderr).toContain('--provider scripted --script FILE');
  });

  it('--continue with a missing session file says so, exit 2', async () => {
    const r = await inProcess([
      'agent',
      '--script',
      script('hello.yaml'),
      '--session',
      'missing.jsonl',
      '--continue',
      'hi',
    ]);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/session file .*missing\.jsonl does not exist/);
  });

  it('a --cwd that is not a folder exits 2 naming it; before, the agent ran there and every tool failed', async () => {
    const missing = await inProcess([
      'agent',
      '--no-session',
      '--script',
      script('hello.yaml'),
      '--cwd',
      'no-such',
      'hi',
    ]);
    expect(missing.stderr).toContain(
      `--cwd no-such: no folder ${join(home, 'no-such')}; give the folder the agent works in.`,
    );
    expect(missing.stdout).toBe('');
    expect(missing.code).toBe(2);
    const file = join(home, 'a-file');
    writeFileSync(file, '');
    const notDir = await inProcess(['agent', '--no-session', '--script', script('hello.yaml'), '--cwd', file, 'hi']);
    expect(notDir.stderr).toContain(`${file} is a file, not a folder`);
    expect(notDir.code).toBe(2);
  });

  it('--session naming a folder and --session-dir naming a file exit 2 saying which to use', async () => {
    const folder = mkdtempSync(join(home, 'sessions-'));
    const asFile = await inProcess(['agent', '--script', script('hello.yaml'), '--session', folder, 'hi']);
    expect(asFile.stderr).toContain(
      `--session ${folder} is a folder; give a session file (.jsonl), or --session-dir ${folder}`,
    );
    expect(asFile.stderr).not.toContain('internal error');
    expect(asFile.code).toBe(2);
    const file = join(home, 'not-a-dir');
    writeFileSync(file, '');
    const asDir = await inProcess(['agent', '--script', script('hello.yaml'), '--session-dir', file, 'hi']);
    expect(asDir.stderr).toContain(`--session-dir ${file} is a file, not a folder`);
    expect(asDir.stderr).not.toContain('free disk space');
    expect(asDir.code).toBe(2);
  });

  it('a --skills path where nothing is exits 2; before, the agent ran without those skills and no word', async () => {
    const r = await inProcess(['agent', '--no-session', '--script', script('hello.yaml'), '--skills', 'skilz', 'hi']);
    expect(r.stderr).toContain("--skills skilz: nothing is there; give a folder of skills or one skill's .md file.");
    expect(r.stdout).toBe('');
    expect(r.code).toBe(2);
  });

  it('--session-dir with --session or --no-session exits 2; before, it was dropped without a word', async () => {
    const named = await inProcess([
      'agent',
      '--script',
      script('hello.yaml'),
      '--session',
      's.jsonl',
      '--session-dir',
      'sd',
      'hi',
    ]);
    expect(named.stderr).toContain(
      '--session-dir is the folder for new sessions; with --session s.jsonl the session is that file: give one of the two.',
    );
    expect(named.code).toBe(2);
    const none = await inProcess([
      'agent',
      '--script',
      script('hello.yaml'),
      '--no-session',
      '--session-dir',
      'sd',
      'hi',
    ]);
    expect(none.stderr).toContain('with --no-session nothing is written: give one of the two.');
    expect(none.code).toBe(2);
  });

  it('a bad --mode value and a prompt with --mode rpc exit 2', async () => {
    expect((await inProcess(['agent', '--mode', 'xml', 'hi'])).code).toBe(2);
    const r = await inProcess(['agent', '--mode', 'rpc', '--script', script('hello.yaml'), 'hi']);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('--mode rpc takes its prompts as commands on stdin');
  });
});
