// Resuming a session that was interrupted (kill -9, crash, abort) continues its loop from what the
// file holds: a finished answer makes no request, tool results go on with the next model call,
// cut-off tool calls get results (read-only ones run again, others are reported as interrupted),
// a failed reply at the end is dropped, a compaction cut by the kill changes nothing. Counted on a
// recording scripted provider, and on the wire through the real SDK against the fake API in strict
// mode (two user turns in a row, or a tool_use without its tool_result, is a 400 there).
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import type { AgentMessage } from '../../src/agent/types.js';
import { getModel, scriptedModel } from '../../src/ai/models.js';
import { createScriptedProvider, type ScriptedProvider } from '../../src/ai/scripted.js';
import type {
  AssistantMessage,
  Model,
  StopReason,
  ToolCall,
  ToolResultMessage,
  UserMessage,
} from '../../src/ai/types.js';
import type { AgentSession } from '../../src/runtime/agent-session.js';
import { createAgentSession } from '../../src/runtime/create-agent-session.js';
import type { AgentSessionEvent } from '../../src/runtime/session-events.js';
import { interruptedCallText, planResume } from '../../src/runtime/session-resume.js';
import { SessionStore } from '../../src/session/session-store.js';
import {
  respondLikeScript,
  startFakeAnthropic,
  turnOrderProblem,
  type FakeAnthropic,
  type FakeTurn,
} from '../helpers/fake-anthropic-server.js';

const dirs: string[] = [];
function tempDir(): string {
  const d = mkdtempSync(join(tmpdir(), 'orch-resume-'));
  dirs.push(d);
  return d;
}
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

// ---- messages as a session file holds them ---------------------------------------------------

let model: Pick<Model, 'api' | 'provider' | 'id'> = scriptedModel();
const usage = {
  input: 10,
  output: 5,
  cacheRead: 0,
  cacheWrite: 0,
  totalTokens: 15,
  cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 },
};
const user = (text: string): UserMessage => ({ role: 'user', content: [{ type: 'text', text }], timestamp: 1 });
const call = (id: string, name: string, args: Record<string, unknown>): ToolCall => ({
  type: 'toolCall',
  id,
  name,
  arguments: args,
});
function reply(content: AssistantMessage['content'], stopReason?: StopReason): AssistantMessage {
  const stop = stopReason ?? (content.some((b) => b.type === 'toolCall') ? 'toolUse' : 'stop');
  return {
    role: 'assistant',
    content,
    api: model.api,
    provider: model.provider,
    model: model.id,
    usage,
    stopReason: stop,
    ...(stop === 'error' || stop === 'aborted' ? { errorMessage: `the call ended: ${stop}` } : {}),
    timestamp: 2,
  };
}
const result = (id: string, name: string, text: string): ToolResultMessage => ({
  role: 'toolResult',
  toolCallId: id,
  toolName: name,
  content: [{ type: 'text', text }],
  isError: false,
  timestamp: 3,
});

/** A session file left by a killed run: these entries, written, nothing else. */
function sessionFile(cwd: string, build: (store: SessionStore) => void): string {
  const file = join(cwd, 'session.jsonl');
  const store = SessionStore.create(file, { cwd });
  build(store);
  store.close();
  return file;
}
const append =
  (...messages: AgentMessage[]) =>
  (store: SessionStore) => {
    for (const m of messages) store.appendMessage(m);
  };
const lines = (file: string): unknown[] =>
  readFileSync(file, 'utf8')
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l) as unknown);
const messageEntries = (file: string) =>
  lines(file).filter(
    (e): e is { type: 'message'; message: AgentMessage } => (e as { type: string }).type === 'message',
  );

interface Opened {
  session: AgentSession;
  provider: ScriptedProvider;
  events: AgentSessionEvent[];
}

/** Reopens the file like a resumed worker does, on a recording scripted model that always answers `answer`. */
async function reopen(cwd: string, file: string, answer = 'Finished the task.'): Promise<Opened> {
  const provider = createScriptedProvider([{ text: answer }, { text: answer }, { text: answer }], {
    turnSelection: 'calls',
  });
  const session = await createAgentSession({
    cwd,
    sessionFile: file,
    tools: ['read', 'ls', 'write', 'bash'],
    systemPrompt: 'You are a test agent.',
    defaultSkills: false,
    contextFiles: false,
    model: scriptedModel(),
    streamFn: provider,
    summaries: 'extractive',
    notify: () => {},
  });
  const events: AgentSessionEvent[] = [];
  session.subscribe((e) => events.push(e));
  return { session, provider, events };
}

const roles = (messages: readonly { role: string }[]) => messages.map((m) => m.role);
const textOf = (m: { content: unknown } | undefined): string =>
  Array.isArray(m?.content)
    ? (m.content as { type: string; text?: string }[]).map((b) => b.text ?? '').join('')
    : String(m?.content ?? '');

describe('planResume: where an interrupted session stands', () => {
  it('tells finished, pending, dangling and empty apart, dropping failed replies at the end', () => {
    const ask = user('Rename the service');
    const read = call('r1', 'read', { path: 'a.txt' });
    const write = call('w1', 'write', { path: 'b.txt', content: 'x' });
    expect(planResume([]).point.kind).toBe('empty');
    expect(planResume([ask]).point.kind).toBe('pending');
    expect(planResume([ask, reply([{ type: 'text', text: 'done' }])]).point.kind).toBe('finished');
    expect(planResume([ask, reply([read]), result('r1', 'read', 'A')]).point.kind).toBe('pending');
    const dangling = planResume([ask, reply([read, write])]).point;
    expect(dangling.kind === 'dangling' && dangling.calls.map((c) => c.id)).toEqual(['r1', 'w1']);
    // A batch cut part-way: only the calls without a result are dangling.
    const partial = planResume([ask, reply([read, write]), result('r1', 'read', 'A')]).point;
    expect(partial.kind === 'dangling' && partial.calls.map((c) => c.id)).toEqual(['w1']);
    // Failed replies at the end are dropped; what is below them decides.
    const failed = planResume([
      ask,
      reply([read]),
      result('r1', 'read', 'A'),
      reply([], 'error'),
      reply([{ type: 'text', text: 'half' }], 'aborted'),
    ]);
    expect(failed.point.kind).toBe('pending');
    expect(failed.dropped.map((m) => m.stopReason)).toEqual(['error', 'aborted']);
    expect(roles(failed.messages)).toEqual(['user', 'assistant', 'toolResult']);
    // A compaction summary (or any internal note) is a user-side turn.
    expect(planResume([{ role: 'compactionSummary', summary: 'S', tokensBefore: 10, timestamp: 1 }]).point.kind).toBe(
      'pending',
    );
  });
});

describe('AgentSession.resume (scripted model, real session files and tools)', () => {
  it('a finished answer: no request, nothing written', async () => {
    const cwd = tempDir();
    const file = sessionFile(cwd, append(user('Say hi'), reply([{ type: 'text', text: 'Hi.' }])));
    const before = messageEntries(file);
    const { session, provider } = await reopen(cwd, file);
    expect(await session.resume()).toBe('finished');
    expect(provider.calls).toHaveLength(0);
    expect(session.lastAssistantText()).toBe('Hi.');
    await session.dispose();
    expect(messageEntries(file)).toEqual(before);
  });

  it('tool results at the end: the next model call, with no new user message', async () => {
    const cwd = tempDir();
    const file = sessionFile(
      cwd,
      append(user('List files'), reply([call('l1', 'ls', {})]), result('l1', 'ls', 'a.txt')),
    );
    const { session, provider } = await reopen(cwd, file);
    expect(await session.resume()).toBe('pending');
    expect(provider.calls).toHaveLength(1);
    expect(roles(provider.calls[0]!.messages)).toEqual(['user', 'assistant', 'toolResult']);
    await session.dispose();
    expect(roles(messageEntries(file).map((e) => e.message))).toEqual(['user', 'assistant', 'toolResult', 'assistant']);
  });

  it('cut-off tool calls: the read-only one runs again, the write is reported as interrupted and not run, then the loop goes on', async () => {
    const cwd = tempDir();
    writeFileSync(join(cwd, 'notes.txt'), 'port: 8080\n');
    const file = sessionFile(
      cwd,
      append(
        user('Copy the port'),
        reply([
          call('r1', 'read', { path: 'notes.txt' }),
          call('w1', 'write', { path: 'out.txt', content: 'port: 8080\n' }),
        ]),
      ),
    );
    const { session, provider, events } = await reopen(cwd, file);
    expect(await session.resume()).toBe('dangling');
    expect(existsSync(join(cwd, 'out.txt'))).toBe(false);
    expect(provider.calls).toHaveLength(1);
    const sent = provider.calls[0]!.messages;
    expect(roles(sent)).toEqual(['user', 'assistant', 'toolResult', 'toolResult']);
    const [readResult, writeResult] = sent.slice(2) as ToolResultMessage[];
    expect([readResult!.toolCallId, readResult!.isError]).toEqual(['r1', false]);
    expect(textOf(readResult)).toContain('port: 8080');
    expect([writeResult!.toolCallId, writeResult!.isError]).toEqual(['w1', true]);
    expect(textOf(writeResult)).toBe(interruptedCallText('write'));
    expect(textOf(writeResult)).toMatch(/interrupted.*may or may not have taken effect/s);
    // Shown like any tool run, and written to the file before the model call.
    expect(
      events.filter((e) => e.type === 'tool_execution_end').map((e) => (e as { toolName: string }).toolName),
    ).toEqual(['read', 'write']);
    await session.dispose();
    expect(roles(messageEntries(file).map((e) => e.message))).toEqual([
      'user',
      'assistant',
      'toolResult',
      'toolResult',
      'assistant',
    ]);
  });

  it('a batch cut part-way: only the calls without a result get one', async () => {
    const cwd = tempDir();
    writeFileSync(join(cwd, 'a.txt'), 'A\n');
    const file = sessionFile(
      cwd,
      append(
        user('Run both'),
        reply([call('r1', 'read', { path: 'a.txt' }), call('b1', 'bash', { command: 'echo ran >> bash.log' })]),
        result('r1', 'read', 'A'),
      ),
    );
    const { session, provider } = await reopen(cwd, file);
    expect(await session.resume()).toBe('dangling');
    expect(existsSync(join(cwd, 'bash.log'))).toBe(false);
    const sent = provider.calls[0]!.messages;
    expect(sent.filter((m) => m.role === 'toolResult').map((m) => (m as ToolResultMessage).toolCallId)).toEqual([
      'r1',
      'b1',
    ]);
    expect(textOf(sent[sent.length - 1] as ToolResultMessage)).toBe(interruptedCallText('bash'));
    await session.dispose();
  });

  it('an error reply at the end is dropped (the file keeps it); a note then joins the pending turn', async () => {
    const cwd = tempDir();
    const build = append(
      user('List files'),
      reply([call('l1', 'ls', {})]),
      result('l1', 'ls', 'a.txt'),
      reply([], 'error'),
    );
    const plain = await reopen(cwd, sessionFile(cwd, build));
    expect(await plain.session.resume()).toBe('pending');
    expect(plain.provider.calls).toHaveLength(1);
    expect(roles(plain.provider.calls[0]!.messages)).toEqual(['user', 'assistant', 'toolResult']);
    await plain.session.dispose();

    const cwd2 = tempDir();
    const file = sessionFile(cwd2, build);
    const noted = await reopen(cwd2, file);
    expect(await noted.session.resume('The previous attempt was interrupted. Continue.')).toBe('pending');
    expect(noted.provider.calls).toHaveLength(1);
    const sent = noted.provider.calls[0]!.messages;
    expect(roles(sent)).toEqual(['user', 'assistant', 'toolResult', 'user']);
    expect(textOf(sent[3])).toBe('The previous attempt was interrupted. Continue.');
    await noted.session.dispose();
    expect(
      messageEntries(file).map((e) => (e.message.role === 'assistant' ? e.message.stopReason : e.message.role)),
    ).toEqual(['user', 'toolUse', 'toolResult', 'error', 'user', 'stop']);
  });

  it('a note after a finished answer starts the next turn (one request)', async () => {
    const cwd = tempDir();
    const file = sessionFile(cwd, append(user('Fix it'), reply([{ type: 'text', text: 'Fixed.' }])));
    const { session, provider } = await reopen(cwd, file);
    expect(await session.resume('verify failed: try again')).toBe('finished');
    expect(provider.calls).toHaveLength(1);
    expect(roles(provider.calls[0]!.messages)).toEqual(['user', 'assistant', 'user']);
    await session.dispose();
  });

  it('mid-compaction: a job cut by the kill changes nothing; a finished compaction continues from its context', async () => {
    // Killed while summarizing after the final answer: still finished, no request.
    const cwd = tempDir();
    const done = sessionFile(cwd, (store) => {
      append(user('Say hi'), reply([{ type: 'text', text: 'Hi.' }]))(store);
      store.appendCompactionJob({
        type: 'compaction_job',
        jobId: 'j1',
        stage: 'cut_point',
        firstKeptEntryId: store.leafId!,
        tokensBefore: 15,
        isSplitTurn: false,
        summarizeCount: 1,
      });
      store.appendCompactionJob({
        type: 'compaction_job',
        jobId: 'j1',
        stage: 'summary_requested',
        attempt: 1,
        provider: 'scripted',
        modelId: 'scripted',
      });
    });
    const a = await reopen(cwd, done);
    expect(await a.session.resume()).toBe('finished');
    expect(a.provider.calls).toHaveLength(0);
    await a.session.dispose();

    // Killed while compacting at a turn boundary (after tool results): the next model call.
    const cwd2 = tempDir();
    const mid = sessionFile(cwd2, (store) => {
      append(user('List files'), reply([call('l1', 'ls', {})]), result('l1', 'ls', 'a.txt'))(store);
      store.appendCompactionJob({
        type: 'compaction_job',
        jobId: 'j2',
        stage: 'cut_point',
        firstKeptEntryId: store.leafId!,
        tokensBefore: 15,
        isSplitTurn: false,
        summarizeCount: 2,
      });
    });
    const b = await reopen(cwd2, mid);
    expect(await b.session.resume()).toBe('pending');
    expect(b.provider.calls).toHaveLength(1);
    expect(roles(b.provider.calls[0]!.messages)).toEqual(['user', 'assistant', 'toolResult']);
    await b.session.dispose();

    // Killed right after the compaction entry was written: summary + kept turn, then the next call.
    const cwd3 = tempDir();
    const compacted = sessionFile(cwd3, (store) => {
      append(user('List files'))(store);
      const kept = store.appendMessage(reply([call('l1', 'ls', {})]));
      store.appendMessage(result('l1', 'ls', 'a.txt'));
      store.appendCompaction('## Goal\nList files', kept, 15);
    });
    const c = await reopen(cwd3, compacted);
    expect(await c.session.resume()).toBe('pending');
    expect(c.provider.calls).toHaveLength(1);
    expect(roles(c.provider.calls[0]!.messages)).toEqual(['user', 'assistant', 'toolResult']);
    expect(textOf(c.provider.calls[0]!.messages[0])).toContain('List files');
    await c.session.dispose();
  });
});

// ---- on the wire: the real SDK against the fake API in strict mode ----------------------------------

describe('AgentSession.resume on the wire (Anthropic SDK, strict role alternation)', () => {
  const servers: FakeAnthropic[] = [];
  afterAll(async () => {
    for (const s of servers) await s.close();
  });

  async function resumeOverHttp(build: (store: SessionStore) => void, turns: FakeTurn[], note?: string) {
    const server = await startFakeAnthropic({ respond: respondLikeScript(turns), strictTurns: true });
    servers.push(server);
    const anthropic: Model = { ...getModel('claude-haiku-4-5')!, baseUrl: server.url };
    const cwd = tempDir();
    writeFileSync(join(cwd, 'notes.txt'), 'port: 8080\n');
    const file = sessionFile(cwd, build);
    model = scriptedModel(); // the builders stamp replies with the Anthropic model
    const session = await createAgentSession({
      cwd,
      sessionFile: file,
      model: anthropic,
      apiKey: 'sk-test',
      tools: ['read', 'write'],
      thinkingLevel: 'off',
      streamOptions: { maxRetries: 0 },
      retry: { enabled: false },
      defaultSkills: false,
      contextFiles: false,
      notify: () => {},
    });
    const kind = await session.resume(note);
    const last = session.messages[session.messages.length - 1];
    await session.dispose();
    // Every request the resume made was one a strict endpoint accepts.
    for (const q of server.requests)
      expect(turnOrderProblem(q.body?.messages), JSON.stringify(q.body?.messages)).toBeUndefined();
    return { kind, server, last };
  }

  const anthropicBuild = (make: () => AgentMessage[]) => (store: SessionStore) => {
    model = getModel('claude-haiku-4-5')!;
    append(...make())(store);
  };

  it('the strict fake API rejects two user turns in a row (the check can fail)', async () => {
    const server = await startFakeAnthropic({ respond: respondLikeScript([{ text: 'ok' }]), strictTurns: true });
    servers.push(server);
    const res = await fetch(`${server.url}/v1/messages`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-api-key': 'k' },
      body: JSON.stringify({
        model: 'm',
        max_tokens: 10,
        messages: [
          { role: 'user', content: 'a' },
          { role: 'user', content: 'b' },
        ],
      }),
    });
    expect(res.status).toBe(400);
    expect(await res.text()).toMatch(/roles must alternate/);
  });

  it('tool results + an aborted reply + a note: one user turn, one request', async () => {
    const { kind, server, last } = await resumeOverHttp(
      anthropicBuild(() => [
        user('Read the notes'),
        reply([call('toolu_r1', 'read', { path: 'notes.txt' })]),
        result('toolu_r1', 'read', 'port: 8080'),
        reply([{ type: 'text', text: 'half' }], 'aborted'),
      ]),
      [{ text: 'The port is 8080.' }],
      'The previous attempt was interrupted. Continue.',
    );
    expect(kind).toBe('pending');
    expect(server.requests).toHaveLength(1);
    expect(last).toMatchObject({ role: 'assistant', stopReason: 'stop' });
    const sent = server.requests[0]!.body.messages;
    expect(roles(sent)).toEqual(['user', 'assistant', 'user']);
    expect(sent[2].content.map((b: { type: string }) => b.type)).toEqual(['tool_result', 'text']);
  });

  it('cut-off read + write calls: results first, then one request', async () => {
    const { kind, server, last } = await resumeOverHttp(
      anthropicBuild(() => [
        user('Copy the port'),
        reply([
          call('toolu_r1', 'read', { path: 'notes.txt' }),
          call('toolu_w1', 'write', { path: 'out.txt', content: 'x' }),
        ]),
      ]),
      [{ text: 'Copied.' }],
    );
    expect(kind).toBe('dangling');
    expect(server.requests).toHaveLength(1);
    expect(last).toMatchObject({ stopReason: 'stop' });
    const results = server.requests[0]!.body.messages[2].content as {
      tool_use_id: string;
      content: string;
      is_error: boolean;
    }[];
    expect(results.map((r) => [r.tool_use_id, r.is_error])).toEqual([
      ['toolu_r1', false],
      ['toolu_w1', true],
    ]);
    expect(results[1]!.content).toMatch(/interrupted/);
  });

  it('a session an older resume left (tool call, then its note): the synthetic result and the note are one user turn', async () => {
    const { kind, server, last } = await resumeOverHttp(
      anthropicBuild(() => [
        user('Copy the port'),
        reply([call('toolu_w1', 'write', { path: 'out.txt', content: 'x' })]),
        user('The previous attempt was interrupted. Continue.'),
      ]),
      [{ text: 'Done.' }],
    );
    expect(kind).toBe('pending');
    expect(server.requests).toHaveLength(1);
    expect(last).toMatchObject({ stopReason: 'stop' });
    expect(server.requests[0]!.body.messages[2].content.map((b: { type: string }) => b.type)).toEqual([
      'tool_result',
      'text',
    ]);
  });

  it('a finished answer makes no request at all', async () => {
    const { kind, server } = await resumeOverHttp(
      anthropicBuild(() => [user('Say hi'), reply([{ type: 'text', text: 'Hi.' }])]),
      [],
    );
    expect(kind).toBe('finished');
    expect(server.requests).toHaveLength(0);
  });

  it('a compaction summary followed by a kept user turn: one user turn', async () => {
    const { kind, server, last } = await resumeOverHttp(
      (store) => {
        model = getModel('claude-haiku-4-5')!;
        append(user('First task'), reply([{ type: 'text', text: 'ok' }]))(store);
        const kept = store.appendMessage(user('Now list the files'));
        store.appendCompaction('## Goal\nFirst task, done', kept, 100);
      },
      [{ text: 'a.txt' }],
    );
    expect(kind).toBe('pending');
    expect(server.requests).toHaveLength(1);
    expect(last).toMatchObject({ stopReason: 'stop' });
    expect(roles(server.requests[0]!.body.messages)).toEqual(['user']);
  });
});
