// `orchestrate agent --continue "prompt"` (print mode) on a session whose last turn a kill cut off:
// the turn is finished first through AgentSession.resume, then the prompt is sent as its own
// turn. The cut-off files are written by the real CLI: one by a real kill -9 while a tool runs,
// one by truncating a finished session the way a kill during the reply leaves it. Also the rule
// that tells a cut-off turn from one that stopped normally (cutOffTurn).
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AgentMessage } from '../../src/agent/types.js';
import { scriptedModel } from '../../src/ai/models.js';
import type { AssistantMessage, ToolCall } from '../../src/ai/types.js';
import { cutOffTurn, interruptedCallText } from '../../src/runtime/session-resume.js';
import { REPO, runAgentCli } from '../runtime/helpers/agent-cli.js';
import { CLI_NODE_ARGS } from '../helpers/cli-entry.js';
import { messageText, type SessionEntry, sessionFileLines, sessionMessages } from '../helpers/session-file.js';

let home: string;
beforeAll(() => {
  home = mkdtempSync(join(tmpdir(), 'orch-cut-off-'));
});
afterAll(() => rmSync(home, { recursive: true, force: true }));

const env = (): Record<string, string | undefined> => ({
  ORCHESTRATE_HOME: home,
  ANTHROPIC_API_KEY: undefined,
  ORCHESTRATE_MODEL: undefined,
});

async function waitUntil(ok: () => boolean, what: string): Promise<void> {
  const t0 = Date.now();
  while (!ok()) {
    if (Date.now() - t0 > 60_000) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

describe('orchestrate agent --continue "prompt" on a session a kill cut off', () => {
  it('tool calls without results: the calls are answered as interrupted (not run again), the turn finishes, then the prompt', async () => {
    const work = mkdtempSync(join(home, 'dangling-'));
    const file = join(work, 'chat.jsonl');
    const script = join(work, 'script.yaml');
    // The tool appends to runs.txt and then holds until the test lets it go (after the kill, so
    // the orphaned shell does not outlive the test).
    writeFileSync(
      script,
      [
        '- tools: [{ name: bash, id: call-1, args: { command: "echo run >> runs.txt; while [ ! -f release ]; do sleep 0.05; done" } }]',
        '- text: "Finished the interrupted turn."',
        '- text: "Answer to the new prompt."',
      ].join('\n'),
    );
    const args = ['--script', script, '--session', file, '--cwd', work, '--tools', 'bash', '--sandbox', 'none'];
    const child = spawn(process.execPath, [...CLI_NODE_ARGS, 'agent', ...args, 'start the work'], {
      cwd: REPO,
      env: { ...process.env, ORCHESTRATE_HOME: home, ANTHROPIC_API_KEY: '', CI: '' },
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    const closed = new Promise<void>((r) => child.on('close', () => r()));
    try {
      // The reply with the call is on disk before the tool runs; runs.txt says the tool is running.
      await waitUntil(
        () =>
          existsSync(join(work, 'runs.txt')) &&
          existsSync(file) &&
          sessionMessages(file).some((m) => m.role === 'assistant'),
        'the tool to run',
      );
      child.kill('SIGKILL');
      await closed;
    } finally {
      writeFileSync(join(work, 'release'), '');
    }
    const cut = sessionMessages(file);
    expect(cut.map((m) => m.role)).toEqual(['user', 'assistant']);
    expect(cutOffTurn(cut)).toMatchObject({ kind: 'dangling', calls: [{ id: 'call-1', name: 'bash' }] });

    const r = await runAgentCli([...args, '--continue', 'now', 'the', 'next', 'step'], {
      env: env(),
      timeoutMs: 60_000,
    });
    expect(r.stderr).toBe(
      'orchestrate agent: the last turn of this session was interrupted (its bash call has no result); finishing it before this prompt.\n',
    );
    expect(r.stdout).toBe('Answer to the new prompt.\n');
    expect(r.code).toBe(0);

    const after = sessionMessages(file);
    expect(after.map((m) => `${m.role}: ${messageText(m)}`)).toEqual([
      'user: start the work',
      'assistant: call:bash',
      `toolResult: ${interruptedCallText('bash')}`,
      'assistant: Finished the interrupted turn.',
      'user: now the next step',
      'assistant: Answer to the new prompt.',
    ]);
    expect(after[2]).toMatchObject({ role: 'toolResult', toolCallId: 'call-1', isError: true });
    // The call with side effects was not run a second time.
    expect(readFileSync(join(work, 'runs.txt'), 'utf8')).toBe('run\n');
  }, 120_000);

  it('a prompt without a reply: it is answered first, then the new prompt', async () => {
    const work = mkdtempSync(join(home, 'unanswered-'));
    const file = join(work, 'chat.jsonl');
    const script = join(work, 'script.yaml');
    writeFileSync(script, ['- text: "Answer one."', '- text: "Answer two."', '- text: "Answer three."'].join('\n'));
    const args = ['--script', script, '--session', file, '--cwd', work, '--tools', 'none'];
    expect((await runAgentCli([...args, 'one'], { env: env() })).stdout).toBe('Answer one.\n');
    expect((await runAgentCli([...args, '--continue', 'two'], { env: env() })).stdout).toBe('Answer two.\n');
    // A kill while "two" was being answered: the file ends with the prompt.
    const lines = sessionFileLines(file);
    expect((JSON.parse(lines.at(-1)!) as SessionEntry).message?.role).toBe('assistant');
    writeFileSync(file, `${lines.slice(0, -1).join('\n')}\n`);
    expect(cutOffTurn(sessionMessages(file))).toEqual({ kind: 'unanswered' });

    const r = await runAgentCli([...args, '--continue', 'three'], { env: env() });
    expect(r.stderr).toBe(
      'orchestrate agent: the last turn of this session was interrupted (its last prompt has no reply); finishing it before this prompt.\n',
    );
    expect(r.stdout).toBe('Answer three.\n');
    expect(r.code).toBe(0);
    expect(sessionMessages(file).map((m) => `${m.role}: ${messageText(m)}`)).toEqual([
      'user: one',
      'assistant: Answer one.',
      'user: two',
      'assistant: Answer two.',
      'user: three',
      'assistant: Answer three.',
    ]);
  }, 60_000);

  it('a session that ended normally is continued as before (no resume, no notice)', async () => {
    const work = mkdtempSync(join(home, 'whole-'));
    const file = join(work, 'chat.jsonl');
    const script = join(work, 'script.yaml');
    writeFileSync(script, ['- text: "Answer one."', '- text: "Answer two."'].join('\n'));
    const args = ['--script', script, '--session', file, '--cwd', work, '--tools', 'none'];
    await runAgentCli([...args, 'one'], { env: env() });
    const r = await runAgentCli([...args, '--continue', 'two'], { env: env() });
    expect(r).toMatchObject({ code: 0, stdout: 'Answer two.\n', stderr: '' });
  }, 60_000);
});

describe('cutOffTurn: only what a kill leaves counts as cut off', () => {
  const m = scriptedModel();
  const usage = {
    input: 1,
    output: 1,
    cacheRead: 0,
    cacheWrite: 0,
    totalTokens: 2,
    cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 },
  };
  const user = (text: string): AgentMessage => ({ role: 'user', content: [{ type: 'text', text }], timestamp: 1 });
  const call = (id: string): ToolCall => ({ type: 'toolCall', id, name: 'bash', arguments: { command: 'ls' } });
  const reply = (
    content: AssistantMessage['content'],
    stopReason: AssistantMessage['stopReason'] = 'stop',
  ): AgentMessage => ({
    role: 'assistant',
    content,
    api: m.api,
    provider: m.provider,
    model: m.id,
    usage,
    stopReason,
    timestamp: 2,
  });
  const result = (id: string, isError = false): AgentMessage => ({
    role: 'toolResult',
    toolCallId: id,
    toolName: 'bash',
    content: [{ type: 'text', text: 'out' }],
    isError,
    timestamp: 3,
  });

  it('cut off: calls without results (all or part of a batch), a prompt without a reply', () => {
    expect(cutOffTurn([user('a'), reply([call('1'), call('2')], 'toolUse')])).toMatchObject({
      kind: 'dangling',
      calls: [{ id: '1' }, { id: '2' }],
    });
    expect(cutOffTurn([user('a'), reply([call('1'), call('2')], 'toolUse'), result('1')])).toMatchObject({
      kind: 'dangling',
      calls: [{ id: '2' }],
    });
    expect(cutOffTurn([user('a'), reply([{ type: 'text', text: 'x' }]), user('b')])).toEqual({ kind: 'unanswered' });
  });

  it('not cut off: empty, a finished answer, a failed reply, tool results at the end (Esc, a cap), a summary at the end', () => {
    expect(cutOffTurn([])).toBeUndefined();
    expect(cutOffTurn([user('a'), reply([{ type: 'text', text: 'x' }])])).toBeUndefined();
    expect(cutOffTurn([user('a'), reply([], 'aborted')])).toBeUndefined();
    expect(cutOffTurn([user('a'), reply([], 'error')])).toBeUndefined();
    expect(cutOffTurn([user('a'), reply([call('1')], 'toolUse'), result('1', true)])).toBeUndefined();
    expect(
      cutOffTurn([
        user('a'),
        reply([{ type: 'text', text: 'x' }]),
        { role: 'branchSummary', summary: 's', fromId: 'e1', timestamp: 4 },
      ]),
    ).toBeUndefined();
  });
});
