// `orchestrate agent --continue` on a session whose last turn a kill cut off, in json mode (the
// turn is finished inside the event stream, after a cut_off_turn_resume line, then the prompt)
// and without a prompt in text and json mode (finishing the turn is the whole command; with
// nothing cut off it is a usage error that says so). The real CLI, the scripted provider; the
// cut-off files come from a real kill -9 while a tool runs, or from truncating a session the
// real CLI wrote the way a kill leaves it. Each kind of session is made once for the file (the
// CLI's start is most of this file's time) and copied into the workspace of each test using it.
import { spawn } from 'node:child_process';
import { copyFileSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AgentMessage } from '../../src/agent/types.js';
import { cutOffTurn, interruptedCallText } from '../../src/runtime/session-resume.js';
import { REPO, runAgentCli, type JsonLine } from '../runtime/helpers/agent-cli.js';
import { CLI_NODE_ARGS } from '../helpers/cli-entry.js';

let home: string;
/** Sessions the real CLI wrote (see the fixture functions below), made once. */
let made: { oneTurn: string; beforeReply: string; duringTool: Workspace };
beforeAll(async () => {
  home = mkdtempSync(join(tmpdir(), 'orch-cut-off-json-'));
  made = { ...(await finishedThenCutBeforeReply()), duringTool: await cutDuringTool() };
}, 180_000);
afterAll(() => rmSync(home, { recursive: true, force: true }));

const env = (): Record<string, string | undefined> => ({
  ORCHESTRATE_HOME: home,
  ANTHROPIC_API_KEY: undefined,
  ORCHESTRATE_MODEL: undefined,
});

interface Entry {
  type: string;
  message?: AgentMessage;
}
const fileLines = (file: string): string[] =>
  readFileSync(file, 'utf8')
    .split('\n')
    .filter((l) => l !== '');
const messages = (file: string): AgentMessage[] =>
  fileLines(file)
    .map((l) => JSON.parse(l) as Entry)
    .flatMap((e) => (e.type === 'message' && e.message ? [e.message] : []));
const textOf = (m: AgentMessage): string =>
  'content' in m && Array.isArray(m.content)
    ? m.content.map((b) => ('text' in b ? b.text : b.type === 'toolCall' ? `call:${b.name}` : '')).join('')
    : '';
const transcript = (file: string): string[] => messages(file).map((m) => `${m.role}: ${textOf(m)}`);

const jsonLines = (stdout: string): JsonLine[] =>
  stdout
    .split('\n')
    .filter((l) => l !== '')
    .map((l) => JSON.parse(l) as JsonLine);
/** "role: text" of every message_end line, in stream order. */
const streamedMessages = (lines: JsonLine[]): string[] =>
  lines
    .filter((l) => l.type === 'message_end')
    .map((l) => {
      const m = l.message as AgentMessage;
      return `${m.role}: ${textOf(m)}`;
    });

async function waitUntil(ok: () => boolean, what: string): Promise<void> {
  const t0 = Date.now();
  while (!ok()) {
    if (Date.now() - t0 > 60_000) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

interface Workspace {
  work: string;
  file: string;
  script: string;
}
function workspace(name: string, turns: string[]): Workspace {
  const work = mkdtempSync(join(home, `${name}-`));
  const script = join(work, 'script.yaml');
  writeFileSync(script, turns.join('\n'));
  return { work, file: join(work, 'chat.jsonl'), script };
}

/** The turns every session fixture was written with (a copy is continued with its own script). */
const ONE_TWO = ['- text: "Answer one."', '- text: "Answer two."'];

/**
 * A session whose first turn a real kill -9 cut off while its bash call ran: the file ends with
 * the reply holding the call. The call appends to runs.txt, then holds until released (after
 * the kill, so the orphaned shell does not outlive the test).
 */
async function cutDuringTool(): Promise<Workspace> {
  const w = workspace('made-during-tool', [HOLDING_BASH]);
  const args = ['--script', w.script, '--session', w.file, '--cwd', w.work, '--tools', 'bash', '--sandbox', 'none'];
  const child = spawn(process.execPath, [...CLI_NODE_ARGS, 'agent', ...args, 'start the work'], {
    cwd: REPO,
    env: { ...process.env, ORCHESTRATE_HOME: home, ANTHROPIC_API_KEY: '', CI: '' },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  const closed = new Promise<void>((r) => child.on('close', () => r()));
  try {
    await waitUntil(
      () =>
        existsSync(join(w.work, 'runs.txt')) &&
        existsSync(w.file) &&
        messages(w.file).some((m) => m.role === 'assistant'),
      'the tool to run',
    );
    child.kill('SIGKILL');
    await closed;
  } finally {
    writeFileSync(join(w.work, 'release'), '');
  }
  expect(cutOffTurn(messages(w.file))).toMatchObject({ kind: 'dangling', calls: [{ id: 'call-1', name: 'bash' }] });
  return w;
}

/**
 * A session with one finished turn, and the same after a second finished turn with the file cut
 * after the second prompt: what a kill while it was answered leaves.
 */
async function finishedThenCutBeforeReply(): Promise<{ oneTurn: string; beforeReply: string }> {
  const w = workspace('made-turns', ONE_TWO);
  const args = ['--script', w.script, '--session', w.file, '--cwd', w.work, '--tools', 'none'];
  expect((await runAgentCli([...args, 'one'], { env: env() })).code).toBe(0);
  const oneTurn = join(w.work, 'one-turn.jsonl');
  copyFileSync(w.file, oneTurn);
  expect(cutOffTurn(messages(oneTurn))).toBeUndefined();
  expect((await runAgentCli([...args, '--continue', 'two'], { env: env() })).code).toBe(0);
  const lines = fileLines(w.file);
  expect((JSON.parse(lines.at(-1)!) as Entry).message?.role).toBe('assistant');
  const beforeReply = join(w.work, 'before-reply.jsonl');
  writeFileSync(beforeReply, `${lines.slice(0, -1).join('\n')}\n`);
  expect(cutOffTurn(messages(beforeReply))).toEqual({ kind: 'unanswered' });
  return { oneTurn, beforeReply };
}

/** The session a kill -9 cut off during its bash call, in w (with the runs.txt its one run left). */
function killedDuringTool(w: Workspace): void {
  copyFileSync(made.duringTool.file, w.file);
  copyFileSync(join(made.duringTool.work, 'runs.txt'), join(w.work, 'runs.txt'));
}

/** Two finished turns with the file cut after the second prompt, in w. */
function killedBeforeReply(w: Workspace): void {
  copyFileSync(made.beforeReply, w.file);
}

/** One finished turn ("one", "Answer one."), in w. */
function oneFinishedTurn(w: Workspace): void {
  copyFileSync(made.oneTurn, w.file);
}

const HOLDING_BASH =
  '- tools: [{ name: bash, id: call-1, args: { command: "echo run >> runs.txt; while [ ! -f release ]; do sleep 0.05; done" } }]';

describe('orchestrate agent --mode json --continue on a session a kill cut off', () => {
  it("kill -9 during a tool call: the cut_off_turn_resume line, the finished turn's events, then the prompt's", async () => {
    const w = workspace('json-dangling', [
      HOLDING_BASH,
      '- text: "Finished the interrupted turn."',
      '- text: "Answer to the new prompt."',
    ]);
    const args = ['--script', w.script, '--session', w.file, '--cwd', w.work, '--tools', 'bash', '--sandbox', 'none'];
    killedDuringTool(w);

    const r = await runAgentCli([...args, '--mode', 'json', '--continue', 'now', 'the', 'next', 'step'], {
      env: env(),
      timeoutMs: 60_000,
    });
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    const lines = jsonLines(r.stdout);
    expect(lines[0]).toMatchObject({ type: 'session', version: 3 });
    expect(lines[1]).toEqual({
      type: 'cut_off_turn_resume',
      kind: 'dangling',
      toolCalls: [{ id: 'call-1', name: 'bash' }],
      message:
        'The last turn of this session was interrupted (its bash call has no result); finishing it before the prompt.',
    });
    expect(lines.filter((l) => l.type === 'cut_off_turn_resume')).toHaveLength(1);
    // The cut-off call is answered as interrupted (in the stream), and not run again.
    expect(lines.find((l) => l.type === 'tool_execution_end')).toMatchObject({
      toolCallId: 'call-1',
      toolName: 'bash',
      isError: true,
    });
    expect(streamedMessages(lines)).toEqual([
      `toolResult: ${interruptedCallText('bash')}`,
      'assistant: Finished the interrupted turn.',
      'user: now the next step',
      'assistant: Answer to the new prompt.',
    ]);
    // Two runs, in order: finishing the cut-off turn, then the prompt.
    expect(lines.filter((l) => l.type === 'agent_end')).toHaveLength(2);
    const firstEnd = lines.findIndex((l) => l.type === 'agent_end');
    const promptAt = lines.findIndex((l) => l.type === 'message_end' && (l.message as AgentMessage).role === 'user');
    expect(firstEnd).toBeLessThan(promptAt);
    expect(readFileSync(join(w.work, 'runs.txt'), 'utf8')).toBe('run\n');

    expect(transcript(w.file)).toEqual([
      'user: start the work',
      'assistant: call:bash',
      `toolResult: ${interruptedCallText('bash')}`,
      'assistant: Finished the interrupted turn.',
      'user: now the next step',
      'assistant: Answer to the new prompt.',
    ]);
  }, 120_000);

  it('no prompt: only the cut-off turn is finished and streamed, exit 0', async () => {
    const w = workspace('json-no-prompt', [
      '- text: "Answer one."',
      '- text: "Answer two."',
      '- text: "Answer three."',
    ]);
    const args = ['--script', w.script, '--session', w.file, '--cwd', w.work, '--tools', 'none'];
    killedBeforeReply(w);

    const r = await runAgentCli([...args, '--mode', 'json', '--continue'], { env: env() });
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    const lines = jsonLines(r.stdout);
    expect(lines[0]).toMatchObject({ type: 'session' });
    expect(lines[1]).toEqual({
      type: 'cut_off_turn_resume',
      kind: 'unanswered',
      toolCalls: [],
      message: 'The last turn of this session was interrupted (its last prompt has no reply); finishing it.',
    });
    expect(streamedMessages(lines)).toEqual(['assistant: Answer two.']);
    expect(lines.at(-1)).toMatchObject({ type: 'agent_end' });
    expect(transcript(w.file)).toEqual(['user: one', 'assistant: Answer one.', 'user: two', 'assistant: Answer two.']);
  }, 60_000);

  it('a cut-off turn that fails: exit 1, the reason on stderr, the prompt is not sent', async () => {
    const w = workspace('json-fails', ['- text: "Answer one."', '- text: "Answer two."']);
    const args = ['--script', w.script, '--session', w.file, '--cwd', w.work, '--tools', 'none'];
    killedBeforeReply(w);
    // Now the model refuses the reply the cut-off turn needs (not a transient error: no retry).
    writeFileSync(
      w.script,
      ['- text: "Answer one."', '- error: "invalid request: the model refuses"', '- text: "Answer three."'].join('\n'),
    );

    const r = await runAgentCli([...args, '--mode', 'json', '--continue', 'three'], { env: env() });
    expect(r.code).toBe(1);
    expect(r.stderr).toBe(
      'The interrupted turn could not be finished, so the prompt was not sent: invalid request: the model refuses\n',
    );
    const lines = jsonLines(r.stdout);
    expect(lines[1]).toMatchObject({ type: 'cut_off_turn_resume', kind: 'unanswered' });
    expect(lines.find((l) => l.type === 'message_end')).toMatchObject({
      message: { role: 'assistant', stopReason: 'error' },
    });
    expect(streamedMessages(lines).some((m) => m.startsWith('user:'))).toBe(false);
    expect(transcript(w.file).filter((m) => m.startsWith('user:'))).toEqual(['user: one', 'user: two']);
  }, 60_000);

  it('a session that ended normally: no cut_off_turn_resume line, the prompt as before', async () => {
    const w = workspace('json-whole', ['- text: "Answer one."', '- text: "Answer two."']);
    const args = ['--script', w.script, '--session', w.file, '--cwd', w.work, '--tools', 'none'];
    oneFinishedTurn(w);
    const r = await runAgentCli([...args, '--mode', 'json', '--continue', 'two'], { env: env() });
    expect(r).toMatchObject({ code: 0, stderr: '' });
    const lines = jsonLines(r.stdout);
    expect(lines.some((l) => l.type === 'cut_off_turn_resume')).toBe(false);
    expect(streamedMessages(lines)).toEqual(['user: two', 'assistant: Answer two.']);
  }, 60_000);
});

describe('orchestrate agent --continue without a prompt (text mode)', () => {
  it('kill -9 during a tool call: the turn is finished and its final answer printed, exit 0', async () => {
    const w = workspace('text-no-prompt', [HOLDING_BASH, '- text: "Finished the interrupted turn."']);
    const args = ['--script', w.script, '--session', w.file, '--cwd', w.work, '--tools', 'bash', '--sandbox', 'none'];
    killedDuringTool(w);

    const r = await runAgentCli([...args, '--continue'], { env: env(), timeoutMs: 60_000 });
    expect(r.stderr).toBe(
      'orchestrate agent: the last turn of this session was interrupted (its bash call has no result); finishing it.\n',
    );
    expect(r.stdout).toBe('Finished the interrupted turn.\n');
    expect(r.code).toBe(0);
    expect(transcript(w.file)).toEqual([
      'user: start the work',
      'assistant: call:bash',
      `toolResult: ${interruptedCallText('bash')}`,
      'assistant: Finished the interrupted turn.',
    ]);
    expect(readFileSync(join(w.work, 'runs.txt'), 'utf8')).toBe('run\n');
  }, 120_000);

  it('--session FILE alone (no --continue) reopens it too', async () => {
    const w = workspace('text-session-only', ['- text: "Answer one."', '- text: "Answer two."']);
    const args = ['--script', w.script, '--session', w.file, '--cwd', w.work, '--tools', 'none'];
    killedBeforeReply(w);
    const r = await runAgentCli(args, { env: env() });
    expect(r).toMatchObject({
      code: 0,
      stdout: 'Answer two.\n',
      stderr:
        'orchestrate agent: the last turn of this session was interrupted (its last prompt has no reply); finishing it.\n',
    });
  }, 60_000);
});

describe('orchestrate agent --continue without a prompt on a session with nothing cut off', () => {
  for (const mode of ['text', 'json']) {
    it(`${mode} mode: usage error (exit 2) saying the session has nothing to finish; nothing is written`, async () => {
      const w = workspace(`nothing-${mode}`, ['- text: "Answer one."', '- text: "Answer two."']);
      const args = ['--script', w.script, '--session', w.file, '--cwd', w.work, '--tools', 'none'];
      oneFinishedTurn(w);
      const before = readFileSync(w.file, 'utf8');
      const r = await runAgentCli([...args, '--mode', mode, '--continue'], { env: env() });
      expect(r.code).toBe(2);
      expect(r.stdout).toBe('');
      expect(r.stderr).toBe(
        `orchestrate agent: the session ${w.file} has nothing to finish (its last turn was not cut off), so a prompt is needed: give one, e.g. orchestrate agent --continue "Now add a test", or pipe it on stdin\nRun "orchestrate agent --help" for usage.\n`,
      );
      expect(readFileSync(w.file, 'utf8')).toBe(before);
    }, 60_000);
  }

  it('a --session file that does not exist: the plain "give a prompt" usage error, and no file is created', async () => {
    const w = workspace('missing', ['- text: "Answer one."']);
    const r = await runAgentCli(
      ['--script', w.script, '--session', w.file, '--cwd', w.work, '--tools', 'none', '--mode', 'json'],
      { env: env() },
    );
    expect(r).toMatchObject({ code: 2, stdout: '' });
    expect(r.stderr).toMatch(/^orchestrate agent: give a prompt, e\.g\. /);
    expect(existsSync(w.file)).toBe(false);
  }, 60_000);
});
