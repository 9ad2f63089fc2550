import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import type { AgentTool } from '../../src/agent/types.js';
import { forgetLearnedWindows } from '../../src/ai/learned-windows.js';
import { scriptedModel } from '../../src/ai/models.js';
import { createScriptedProvider, type ScriptedProviderOptions, type ScriptedTurn } from '../../src/ai/scripted.js';
import type { Context } from '../../src/ai/types.js';
import type { AgentSession } from '../../src/runtime/agent-session.js';
import { createAgentSession, type CreateAgentSessionOptions } from '../../src/runtime/create-agent-session.js';
import type { AgentSessionEvent } from '../../src/runtime/session-events.js';

const dirs: string[] = [];
function tempDir(): string {
  const d = mkdtempSync(join(tmpdir(), 'orch-session-'));
  dirs.push(d);
  return d;
}
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
  // A scripted overflow states a limit, and the process remembers it as the model's window
  // (learned-windows): forget it so one test's overflow does not shrink the next test's window.
  forgetLearnedWindows();
});

interface Harness {
  session: AgentSession;
  events: AgentSessionEvent[];
  calls: Context[];
}

/** A session on the scripted provider with no built-in tools and a tiny system prompt. */
async function harness(
  turns: ScriptedTurn[],
  options: CreateAgentSessionOptions = {},
  providerOptions: ScriptedProviderOptions = {},
): Promise<Harness> {
  const provider = createScriptedProvider(turns, providerOptions);
  const session = await createAgentSession({
    cwd: tempDir(),
    inMemory: true,
    tools: [],
    systemPrompt: 'You are a test agent.',
    defaultSkills: false,
    contextFiles: false,
    model: scriptedModel(),
    streamFn: provider,
    summaries: 'extractive',
    retry: { baseDelayMs: 1 },
    notify: () => {},
    ...options,
  });
  const events: AgentSessionEvent[] = [];
  session.subscribe((e) => events.push(e));
  return { session, events, calls: provider.calls };
}

const types = (events: AgentSessionEvent[], prefix: string): AgentSessionEvent[] =>
  events.filter((e) => e.type.startsWith(prefix));

function userTexts(ctx: Context): string[] {
  return ctx.messages
    .filter((m) => m.role === 'user')
    .map((m) =>
      typeof m.content === 'string' ? m.content : m.content.map((b) => (b.type === 'text' ? b.text : '')).join(''),
    );
}

describe('AgentSession persistence', () => {
  it('writes nothing before the first reply, then every message in event order', async () => {
    const dir = tempDir();
    const file = join(dir, 's.jsonl');
    const { session } = await harness([{ text: 'first answer' }], { inMemory: false, sessionFile: file });
    let existedAtUserMessage: boolean | undefined;
    session.subscribe((e) => {
      if (e.type === 'message_end' && e.message.role === 'user') existedAtUserMessage = existsSync(file);
    });
    await session.prompt('hello');
    expect(existedAtUserMessage).toBe(false);
    const lines = readFileSync(file, 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { type: string; message?: { role: string } });
    expect(lines[0]!.type).toBe('session');
    expect(lines.filter((l) => l.type === 'message').map((l) => l.message!.role)).toEqual(['user', 'assistant']);
    expect(lines.map((l) => l.type)).toContain('model_change');
    await session.dispose();
  });
});

describe('AgentSession retries', () => {
  it('retries a transient error once and succeeds with the second call', async () => {
    const h = await harness([{ error: '503 service unavailable: overloaded' }, { text: 'ok now' }]);
    await h.session.prompt('go');
    expect(h.calls).toHaveLength(2);
    expect(h.session.lastAssistantText()).toBe('ok now');
    const retry = types(h.events, 'auto_retry');
    expect(retry).toEqual([
      {
        type: 'auto_retry_start',
        attempt: 1,
        maxAttempts: 3,
        delayMs: 1,
        errorMessage: '503 service unavailable: overloaded',
      },
      { type: 'auto_retry_end', success: true, attempt: 1 },
    ]);
    // The failed reply stays in the file but not in the context.
    expect(h.session.messages.filter((m) => m.role === 'assistant')).toHaveLength(1);
    expect(h.session.stats().failedReplies).toBe(1);
  });

  it('gives up after maxRetries retries (maxRetries + 1 calls) and reports the final error', async () => {
    const h = await harness(
      [
        { error: 'overloaded_error: Overloaded' },
        { error: 'overloaded_error: Overloaded' },
        { error: 'overloaded_error: still' },
        { text: 'never' },
      ],
      {
        retry: { maxRetries: 2, baseDelayMs: 1 },
      },
    );
    await h.session.prompt('go');
    expect(h.calls).toHaveLength(3);
    const retry = types(h.events, 'auto_retry');
    expect(retry.map((e) => e.type)).toEqual(['auto_retry_start', 'auto_retry_start', 'auto_retry_end']);
    expect(retry[2]).toMatchObject({ success: false, attempt: 2, finalError: 'overloaded_error: still' });
    const last = h.session.messages[h.session.messages.length - 1];
    expect(last).toMatchObject({ role: 'assistant', stopReason: 'error' });
  });

  it('does not retry errors that are not transient', async () => {
    const h = await harness([{ error: '401 authentication_error: invalid x-api-key' }, { text: 'never' }]);
    await h.session.prompt('go');
    expect(h.calls).toHaveLength(1);
    expect(types(h.events, 'auto_retry')).toEqual([]);
  });
});

describe('AgentSession compaction', () => {
  const long = 'x'.repeat(8000);
  // Big enough to be kept alone (keepRecentTokens 50), so everything before it is summarized.
  const next = `next: ${'z'.repeat(400)}`;

  it('compacts once and re-runs the turn after a context overflow', async () => {
    const h = await harness(
      [{ text: long }, { error: 'prompt is too long: 2100 tokens > 1500 maximum' }, { text: 'recovered' }],
      { compaction: { keepRecentTokens: 50 } },
      { turnSelection: 'calls' },
    );
    await h.session.prompt('write a lot');
    await h.session.prompt(next);
    expect(h.calls).toHaveLength(3);
    expect(h.session.lastAssistantText()).toBe('recovered');
    const compaction = types(h.events, 'auto_compaction');
    expect(compaction.map((e) => e.type)).toEqual(['auto_compaction_start', 'auto_compaction_end']);
    expect(compaction[1]).toMatchObject({ reason: 'overflow', willRetry: true, aborted: false });
    // The retried call saw the summary instead of the long reply, and the new prompt.
    const retried = h.calls[2]!;
    expect(JSON.stringify(retried.messages).includes(long)).toBe(false);
    expect(userTexts(retried).some((t) => t.includes('## Goal') && t.includes('write a lot'))).toBe(true);
    expect(userTexts(retried)).toContain(next);
  });

  it('an overflow right after the recovery compaction stops the prompt, never loops on it', async () => {
    const tooLong = { error: 'prompt is too long: 9999 tokens > 1500 maximum' };
    const h = await harness(
      [{ text: long }, tooLong, tooLong, tooLong, { text: 'never' }],
      { compaction: { keepRecentTokens: 50 } },
      { turnSelection: 'calls' },
    );
    await h.session.prompt('write a lot');
    await expect(h.session.prompt(next)).rejects.toMatchObject({ name: 'RunStoppedError', kind: 'compaction' });
    expect(h.calls).toHaveLength(3);
    const ends = h.events.filter((e) => e.type === 'auto_compaction_end');
    expect(ends).toHaveLength(2);
    expect(ends[1]).toMatchObject({
      reason: 'overflow',
      willRetry: false,
      errorMessage: expect.stringContaining('still too long'),
    });
    expect(h.events.filter((e) => e.type === 'run_stopped')).toEqual([expect.objectContaining({ kind: 'compaction' })]);
    expect(h.session.store.entries.filter((e) => e.type === 'compaction')).toHaveLength(1);
  });

  it('compacts after a run whose context passed contextWindow - reserveTokens', async () => {
    const h = await harness(
      [{ text: 'y'.repeat(14000) }, { text: 'z'.repeat(14000) }, { text: 'after' }],
      {
        model: scriptedModel({ contextWindow: 8000 }),
        compaction: { reserveTokens: 1000, keepRecentTokens: 100 },
      },
      { turnSelection: 'calls' },
    );
    await h.session.prompt('one');
    expect(types(h.events, 'auto_compaction')).toEqual([]);
    await h.session.prompt('two');
    const compaction = types(h.events, 'auto_compaction');
    expect(compaction.map((e) => e.type)).toEqual(['auto_compaction_start', 'auto_compaction_end']);
    expect(compaction[0]).toMatchObject({ reason: 'threshold' });
    expect(compaction[1]).toMatchObject({ reason: 'threshold', willRetry: false, result: { source: 'extractive' } });
    expect(h.calls).toHaveLength(2); // threshold compaction never re-runs the turn
    expect(h.session.messages[0]).toMatchObject({ role: 'compactionSummary' });
    expect(JSON.stringify(h.session.messages).includes('y'.repeat(14000))).toBe(false);
    // The last reply's usage predates the compaction: the next prompt's pre-check does not compact again.
    await h.session.prompt('three');
    expect(h.calls).toHaveLength(3);
    expect(h.events.filter((e) => e.type === 'auto_compaction_start')).toHaveLength(1);
  });

  it('manual compact reports "already compacted" and "nothing to compact" as errors', async () => {
    const h = await harness([{ text: 'a'.repeat(400) }, { text: 'b'.repeat(400) }], {
      compaction: { keepRecentTokens: 20 },
    });
    // Why, as data: callers that handle a skip read the reason, never the wording (issue 43).
    await expect(h.session.compact()).rejects.toMatchObject({
      message: expect.stringMatching(/^Nothing to compact/),
      status: 'skipped',
      reason: 'nothing_to_compact',
    });
    await h.session.prompt('one');
    await h.session.prompt('two');
    const result = await h.session.compact('keep the numbers');
    expect(result.source).toBe('extractive');
    // The focus is an instruction for a model: the extractive summary neither follows nor shows it.
    expect(result.summary).toMatch(/^## Goal\n/);
    expect(result.summary).not.toContain('keep the numbers');
    const ends = h.events.filter((e) => e.type === 'compaction_end');
    expect(ends.map((e) => e.type === 'compaction_end' && e.result !== undefined)).toEqual([false, true]);
    await expect(h.session.compact()).rejects.toMatchObject({
      message: expect.stringMatching(/^Already compacted/),
      status: 'skipped',
      reason: 'already_compacted',
    });
  });

  it('compact with keepRecentTokens 0 summarizes a session that is too short for a normal compaction', async () => {
    const h = await harness([{ text: 'short answer' }]);
    await h.session.prompt('a short question');
    await expect(h.session.compact()).rejects.toThrow(/Nothing to compact/);
    const result = await h.session.compact('handoff', { keepRecentTokens: 0 });
    expect(result.summary).toContain('a short question');
    expect(h.session.store.currentPath().some((e) => e.type === 'compaction')).toBe(true);
  });

  it('uses a beforeCompact hook summary instead of the built-in one', async () => {
    const h = await harness([{ text: 'a'.repeat(400) }, { text: 'b' }], {
      compaction: { keepRecentTokens: 20 },
      hooks: { beforeCompact: () => ({ summary: '## Goal\nfrom the hook' }) },
    });
    await h.session.prompt('one');
    await h.session.prompt('two');
    const result = await h.session.compact();
    expect(result).toMatchObject({ source: 'hook', summary: '## Goal\nfrom the hook' });
  });
});

describe('AgentSession control', () => {
  it('abort stops a run in progress and leaves an aborted reply', async () => {
    const h = await harness([{ text: 'slow', delayMs: 5000 }]);
    const started = new Promise<void>((resolve) => h.session.subscribe((e) => e.type === 'agent_start' && resolve()));
    const run = h.session.prompt('go');
    await started;
    expect(h.session.isStreaming).toBe(true);
    await h.session.abort();
    await run;
    expect(h.session.isStreaming).toBe(false);
    expect(h.session.messages[h.session.messages.length - 1]).toMatchObject({
      role: 'assistant',
      stopReason: 'aborted',
    });
  });

  it('abort during a retry wait ends the prompt without another call', async () => {
    const h = await harness([{ error: '503 overloaded' }, { text: 'never' }], { retry: { baseDelayMs: 60_000 } });
    h.session.subscribe((e) => {
      if (e.type === 'auto_retry_start') void h.session.abort();
    });
    await h.session.prompt('go');
    expect(h.calls).toHaveLength(1);
    expect(types(h.events, 'auto_retry').map((e) => e.type)).toEqual(['auto_retry_start', 'auto_retry_end']);
    expect(h.events.find((e) => e.type === 'auto_retry_end')).toMatchObject({ success: false });
  });

  it('a steering message sent during a tool call reaches the next model call', async () => {
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    const waitTool: AgentTool<z.ZodObject<Record<string, never>>> = {
      name: 'wait',
      description: 'waits',
      parameters: z.object({}),
      execute: async () => {
        await gate;
        return { content: [{ type: 'text', text: 'waited' }] };
      },
    };
    const h = await harness([{ tools: [{ name: 'wait' }] }, { text: 'done' }], {
      customTools: [waitTool],
      tools: ['wait'],
    });
    h.session.subscribe((e) => {
      if (e.type === 'tool_execution_start') {
        h.session.steer('also check the logs');
        expect(h.session.getState().pendingMessageCount).toBe(1);
        release();
      }
    });
    await h.session.prompt('start');
    expect(h.calls).toHaveLength(2);
    expect(userTexts(h.calls[1]!)).toEqual(['start', 'also check the logs']);
    expect(h.session.getState().pendingMessageCount).toBe(0);
  });

  it('a follow-up queued during a run is answered after it', async () => {
    const h = await harness([{ text: 'first', delayMs: 20 }, { text: 'second' }]);
    h.session.subscribe((e) => {
      if (e.type === 'agent_start') h.session.followUp('and then?');
    });
    await h.session.prompt('start');
    expect(h.calls).toHaveLength(2);
    expect(userTexts(h.calls[1]!)).toEqual(['start', 'and then?']);
    expect(h.session.lastAssistantText()).toBe('second');
  });

  it('prompt while running throws unless a streaming behaviour is given', async () => {
    const h = await harness([{ text: 'slow', delayMs: 30 }, { text: 'queued answer' }]);
    const run = h.session.prompt('first');
    await expect(h.session.prompt('second')).rejects.toThrow(/already running/);
    await h.session.prompt('second', { streamingBehavior: 'followUp' });
    await run;
    expect(h.session.lastAssistantText()).toBe('queued answer');
  });
});

describe('AgentSession stats and settings', () => {
  it('stats count messages, tool calls, tokens and cost from the session', async () => {
    const echo: AgentTool<z.ZodObject<{ text: z.ZodString }>> = {
      name: 'echo',
      description: 'echoes',
      parameters: z.object({ text: z.string() }),
      execute: async (_id, p) => ({ content: [{ type: 'text', text: p.text }] }),
    };
    const model = scriptedModel({ cost: { input: 3, output: 15, cacheRead: 0, cacheWrite: 0 } });
    const h = await harness([{ tools: [{ name: 'echo', args: { text: 'hi' } }] }, { text: 'done' }], {
      customTools: [echo],
      tools: ['echo'],
      model,
    });
    await h.session.prompt('go');
    const stats = h.session.stats();
    expect(stats).toMatchObject({
      userMessages: 1,
      assistantMessages: 2,
      toolCalls: 1,
      toolResults: 1,
      turns: 2,
      failedReplies: 0,
    });
    const replies = h.session.messages.filter((m) => m.role === 'assistant');
    const input = replies.reduce((n, m) => n + (m.role === 'assistant' ? m.usage.input : 0), 0);
    expect(stats.tokens.input).toBe(input);
    expect(input).toBeGreaterThan(0);
    expect(stats.cost).toBeCloseTo((input * 3 + stats.tokens.output * 15) / 1e6, 10);
    expect(stats.context.contextWindow).toBe(200_000);
    expect(stats.context.estimated).toBe(false);
  });

  it('setModel and setThinkingLevel are recorded in the session', async () => {
    const h = await harness([{ text: 'a' }]);
    await h.session.prompt('go');
    h.session.setModel(scriptedModel({ id: 'other', reasoning: false }));
    expect(h.session.thinkingLevel).toBe('off');
    const types = h.session.store.entries.map((e) => e.type);
    expect(types.filter((t) => t === 'model_change')).toHaveLength(2);
    expect(h.events.map((e) => e.type)).toEqual(expect.arrayContaining(['model_change', 'thinking_level_change']));
    expect(h.session.getState().model.id).toBe('other');
  });
});

describe('AgentSession navigation', () => {
  it('navigate to a user message rewinds to its parent and returns its text', async () => {
    const h = await harness([{ text: 'A' }, { text: 'B' }, { text: 'C' }]);
    await h.session.prompt('one');
    await h.session.prompt('two');
    const two = h.session.store.entries.find(
      (e) => e.type === 'message' && e.message.role === 'user' && JSON.stringify(e.message.content).includes('two'),
    )!;
    const result = await h.session.navigate(two.id);
    expect(result.editorText).toBe('two');
    expect(h.session.messages.map((m) => m.role)).toEqual(['user', 'assistant']);
    await h.session.prompt('three');
    expect(userTexts(h.calls[2]!)).toEqual(['one', 'three']);
  });

  it('navigate with summarize attaches a branch summary where the conversation continues', async () => {
    const h = await harness([{ text: 'A' }, { text: 'B' }]);
    await h.session.prompt('one');
    await h.session.prompt('two');
    const firstReply = h.session.store.entries.find((e) => e.type === 'message' && e.message.role === 'assistant')!;
    const result = await h.session.navigate(firstReply.id, { summarize: true });
    expect(result.summaryEntryId).toBeDefined();
    const last = h.session.messages[h.session.messages.length - 1]!;
    expect(last.role).toBe('branchSummary');
    expect(last.role === 'branchSummary' && last.summary).toContain('two');
  });

  it('fork continues in a new file with the path before the chosen user message', async () => {
    const dir = tempDir();
    const h = await harness([{ text: 'A' }, { text: 'B' }, { text: 'C' }], { inMemory: false, sessionDir: dir });
    await h.session.prompt('one');
    await h.session.prompt('two');
    const oldFile = h.session.sessionFile!;
    const two = h.session.store.entries.find(
      (e) => e.type === 'message' && e.message.role === 'user' && JSON.stringify(e.message.content).includes('two'),
    )!;
    const forked = await h.session.fork(two.id);
    expect(forked.text).toBe('two');
    expect(forked.sessionFile).not.toBe(oldFile);
    expect(h.session.messages.map((m) => m.role)).toEqual(['user', 'assistant']);
    await h.session.prompt('two, again');
    const lines = readFileSync(forked.sessionFile!, 'utf8').trim().split('\n');
    expect(JSON.parse(lines[0]!)).toMatchObject({ type: 'session', parentSession: oldFile });
    await expect(
      h.session.fork(h.session.store.entries.find((e) => e.type === 'message' && e.message.role === 'assistant')!.id),
    ).rejects.toThrow(/fork from a user message/);
  });
});
