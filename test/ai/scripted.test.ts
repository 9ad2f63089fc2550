import { afterEach, describe, expect, it } from 'vitest';
import { scriptedModel } from '../../src/ai/models.js';
import { isContextOverflow } from '../../src/ai/overflow.js';
import { registerBuiltInProviders, registerScriptedProvider } from '../../src/ai/providers.js';
import { complete, getProvider, unregisterProvider } from '../../src/ai/registry.js';
import {
  createScriptedProvider,
  scriptedInputTokens,
  type ScriptedProvider,
  type ScriptedTurn,
} from '../../src/ai/scripted.js';
import { streamAnthropic } from '../../src/ai/anthropic.js';
import type { AssistantMessage, AssistantMessageEvent, Context, Message, StreamOptions } from '../../src/ai/types.js';
import { emptyUsage } from '../../src/ai/usage.js';

const model = scriptedModel();
const user = (text: string): Message => ({ role: 'user', content: text, timestamp: 1 });
const reply = (text: string, stopReason: AssistantMessage['stopReason'] = 'stop'): AssistantMessage => ({
  role: 'assistant',
  content: [{ type: 'text', text }],
  api: 'scripted',
  provider: 'scripted',
  model: 'scripted',
  usage: emptyUsage(),
  stopReason,
  timestamp: 2,
});

async function run(provider: ScriptedProvider, context: Context, options?: StreamOptions) {
  const s = provider(model, context, options);
  const events: AssistantMessageEvent[] = [];
  for await (const e of s) events.push(e);
  return { events, result: await s.result() };
}
const textOf = (m: AssistantMessage): string => m.content.map((c) => (c.type === 'text' ? c.text : '')).join('');

describe('scripted provider: protocol', () => {
  it('streams text in chunks of the configured size', async () => {
    const p = createScriptedProvider([{ text: 'abcdefghijklmnopqrstuvwxy' }], { chunkSize: 10 });
    const { events, result } = await run(p, { messages: [user('hi')] });
    expect(events.map((e) => e.type)).toEqual([
      'start',
      'text_start',
      'text_delta',
      'text_delta',
      'text_delta',
      'text_end',
      'done',
    ]);
    expect(events.flatMap((e) => (e.type === 'text_delta' ? [e.delta] : []))).toEqual([
      'abcdefghij',
      'klmnopqrst',
      'uvwxy',
    ]);
    expect(result.stopReason).toBe('stop');
    expect(textOf(result)).toBe('abcdefghijklmnopqrstuvwxy');
  });

  it('streams thinking, text and tool calls in order, re-parsing partial tool arguments', async () => {
    const args = { path: 'a.txt', edits: [{ oldText: 'x', newText: 'y' }] };
    // A chunk delay lets the consumer look at the live partial before the next chunk lands.
    const p = createScriptedProvider([{ thinking: 'plan it', text: 'Editing.', tools: [{ name: 'edit', args }] }], {
      chunkSize: 8,
      chunkDelayMs: 1,
    });
    const partialArgs: unknown[] = [];
    const s = p(model, { messages: [user('go')] });
    const types: string[] = [];
    let json = '';
    for await (const e of s) {
      types.push(e.type);
      if (e.type === 'toolcall_delta') {
        json += e.delta;
        const b = e.partial.content[e.contentIndex];
        if (b?.type === 'toolCall') partialArgs.push(structuredClone(b.arguments));
      }
    }
    const result = await s.result();
    const compact = types.filter((t, i) => t !== types[i - 1]);
    expect(compact).toEqual([
      'start',
      'thinking_start',
      'thinking_delta',
      'thinking_end',
      'text_start',
      'text_delta',
      'text_end',
      'toolcall_start',
      'toolcall_delta',
      'toolcall_end',
      'done',
    ]);
    expect(partialArgs).toContainEqual({ path: 'a.txt' });
    expect(partialArgs.at(-1)).toEqual(args);
    expect(JSON.parse(json)).toEqual(args);
    expect(result.stopReason).toBe('toolUse');
    expect(result.content[0]).toMatchObject({
      type: 'thinking',
      thinking: 'plan it',
      thinkingSignature: expect.any(String),
    });
    const call = result.content[2];
    expect(call).toEqual({ type: 'toolCall', id: 'call_0_0', name: 'edit', arguments: args });
    expect(call?.type === 'toolCall' && call.arguments).not.toBe(args); // a fresh object each time
  });

  it('stops between chunks when the signal aborts, keeping the partial content', async () => {
    const p = createScriptedProvider([{ text: 'x'.repeat(100) }], { chunkSize: 10, chunkDelayMs: 2 });
    const controller = new AbortController();
    const s = p(model, { messages: [user('hi')] }, { signal: controller.signal });
    let deltas = 0;
    for await (const e of s) if (e.type === 'text_delta' && ++deltas === 2) controller.abort();
    const result = await s.result();
    expect(result.stopReason).toBe('aborted');
    expect(result.errorMessage).toBe('Request was aborted');
    expect(textOf(result)).toBe('x'.repeat(20));
  });

  it('ends at once with "aborted" when the signal is already aborted', async () => {
    const p = createScriptedProvider([{ text: 'never' }]);
    const { events } = await run(p, { messages: [user('hi')] }, { signal: AbortSignal.abort() });
    expect(events.map((e) => e.type)).toEqual(['error']);
    expect(events[0]?.type === 'error' && events[0].reason).toBe('aborted');
  });

  it('also honours abort with zero chunk delay', async () => {
    const p = createScriptedProvider([{ text: 'y'.repeat(2000) }], { chunkSize: 10 });
    const controller = new AbortController();
    const s = p(model, { messages: [user('hi')] }, { signal: controller.signal });
    for await (const e of s) if (e.type === 'text_delta') controller.abort();
    const result = await s.result();
    expect(result.stopReason).toBe('aborted');
    expect(textOf(result).length).toBeLessThan(2000);
  });
});

describe('scripted provider: usage', () => {
  it('counts input as chars/4 of the serialized context and output as chars/4 of the reply, deterministically', async () => {
    const priced = scriptedModel({ cost: { input: 3, output: 15, cacheRead: 0, cacheWrite: 0 } });
    const p = createScriptedProvider([{ text: 'Twelve chars' }, { text: 'Twelve chars' }]);
    const context: Context = {
      systemPrompt: 'Be brief.',
      messages: [user('What is the answer?')],
      tools: [
        {
          name: 'read',
          description: 'Read a file',
          parameters: { type: 'object', properties: { path: { type: 'string' } } },
        },
      ],
    };
    const chars =
      'Be brief.'.length + JSON.stringify(context.messages[0]).length + JSON.stringify(context.tools).length;
    const a = await p(priced, context).result();
    const b = await p(priced, { ...context, messages: [...context.messages] }).result();
    expect(a.usage.input).toBe(Math.ceil(chars / 4));
    expect(a.usage.output).toBe(3);
    expect(b.usage).toEqual(a.usage);
    expect(a.usage.totalTokens).toBe(a.usage.input + 3);
    expect(a.usage.cost.total).toBeCloseTo((a.usage.input * 3 + 3 * 15) / 1e6, 12);
  });

  it('keeps input counts exact as a conversation grows, is rewritten, or is appended in place', async () => {
    const p = createScriptedProvider(
      Array.from({ length: 10 }, () => ({ text: 'r' })),
      { turnSelection: 'calls' },
    );
    const first = user('start');
    const grown: Message[] = [first];
    const expectExact = async (messages: Message[]) => {
      const r = await p(model, { messages }).result();
      expect(r.usage.input).toBe(scriptedInputTokens({ messages }));
      return r;
    };
    grown.push(await expectExact([...grown]), user('second'));
    await expectExact([...grown]);
    await expectExact([first, user('a different middle that is much longer than before')]);
    await expectExact([first]);
    const live: Message[] = [first];
    const unrecorded = createScriptedProvider([{ text: 'x' }, { text: 'y' }], { record: false });
    const a = await unrecorded(model, { messages: live }).result();
    live.push(a, user('next question, appended to the same array'));
    const b = await unrecorded(model, { messages: live }).result();
    expect(b.usage.input).toBe(scriptedInputTokens({ messages: live }));
    expect(textOf(b)).toBe('y');
    expect(unrecorded.calls).toHaveLength(0);
  });

  it('lets a turn override the token counts', async () => {
    const p = createScriptedProvider([{ text: 'ok', usage: { input: 150_000, cacheRead: 1000 } }]);
    const { result } = await run(p, { messages: [user('hi')] });
    expect(result.usage).toMatchObject({ input: 150_000, cacheRead: 1000, totalTokens: 151_001 });
  });
});

describe('scripted provider: recorded calls', () => {
  it('records each context as a snapshot, after the provider transform repaired orphan tool calls', async () => {
    const p = createScriptedProvider([{ text: 'one' }, { text: 'two' }]);
    const withOrphan: AssistantMessage = {
      ...reply(''),
      content: [{ type: 'toolCall', id: 'c1', name: 'bash', arguments: {} }],
      stopReason: 'toolUse',
    };
    const messages: Message[] = [user('a'), withOrphan, user('steer')];
    await run(p, { systemPrompt: 'sys', messages });
    messages.push(reply('later'));
    expect(p.calls).toHaveLength(1);
    expect(p.calls[0]!.systemPrompt).toBe('sys');
    expect(p.calls[0]!.messages.map((m) => m.role)).toEqual(['user', 'assistant', 'toolResult', 'user']);
    expect(p.calls[0]!.messages[2]).toMatchObject({
      toolCallId: 'c1',
      isError: true,
      content: [{ type: 'text', text: 'No result provided' }],
    });
  });

  it('reset() forgets calls and fired error turns', async () => {
    const p = createScriptedProvider([{ error: 'boom' }, { text: 'fine' }]);
    expect((await run(p, { messages: [user('hi')] })).result.errorMessage).toBe('boom');
    p.reset();
    expect(p.calls).toHaveLength(0);
    expect((await run(p, { messages: [user('hi')] })).result.errorMessage).toBe('boom');
  });
});

describe('scripted provider: turn selection', () => {
  const script: ScriptedTurn[] = [{ text: 'first' }, { text: 'second' }, { text: 'third' }];

  it('picks the turn by the number of successful replies in the context, so agents can share a script', async () => {
    const p = createScriptedProvider(script);
    const agentA = await run(p, { messages: [user('a')] });
    const agentB = await run(p, { messages: [user('b')] });
    const agentA2 = await run(p, { messages: [user('a'), agentA.result, user('more')] });
    expect([textOf(agentA.result), textOf(agentB.result), textOf(agentA2.result)]).toEqual([
      'first',
      'first',
      'second',
    ]);
  });

  it('ignores errored and aborted replies when counting, and resumes a conversation on a fresh provider', async () => {
    const resumed: Message[] = [
      user('a'),
      reply('first'),
      user('b'),
      reply('oops', 'error'),
      reply('cut', 'aborted'),
      reply('second'),
      user('c'),
    ];
    const { result } = await run(createScriptedProvider(script), { messages: resumed });
    expect(textOf(result)).toBe('third');
  });

  it('fires an error turn once, so the retry gets the following turn', async () => {
    const p = createScriptedProvider([
      { text: 'hello' },
      { error: 'overloaded_error: Overloaded' },
      { text: 'after retry' },
    ]);
    const first = await run(p, { messages: [user('a')] });
    const context: Context = { messages: [user('a'), first.result, user('b')] };
    const failed = await run(p, context);
    const retried = await run(p, context);
    expect(failed.result).toMatchObject({ stopReason: 'error', errorMessage: 'overloaded_error: Overloaded' });
    expect(failed.events.map((e) => e.type)).toEqual(['error']);
    expect(textOf(retried.result)).toBe('after retry');
  });

  it('streams afterBlocks blocks of an error turn before failing', async () => {
    const p = createScriptedProvider([
      { error: 'connection reset', text: 'partial answer', tools: [{ name: 'x' }], afterBlocks: 1 },
    ]);
    const { events, result } = await run(p, { messages: [user('a')] });
    expect(events.map((e) => e.type)).toEqual(['start', 'text_start', 'text_delta', 'text_end', 'error']);
    expect(result.content).toEqual([{ type: 'text', text: 'partial answer' }]);
    expect(result.errorMessage).toBe('connection reset');
  });

  it('reports an exhausted script as an error naming the turn count and the call', async () => {
    const p = createScriptedProvider([{ text: 'only' }]);
    const first = await run(p, { messages: [user('a')] });
    const { result } = await run(p, { messages: [user('a'), first.result, user('b')] });
    expect(result.stopReason).toBe('error');
    expect(result.errorMessage).toMatch(
      /^scripted provider: script has 1 turns, call 2 \(reply 2 of this conversation\) has none/,
    );
  });

  it('calls function turns with the context and the call index', async () => {
    const seen: [number, number][] = [];
    const p = createScriptedProvider([
      (context, callIndex) => {
        seen.push([context.messages.length, callIndex]);
        return { text: `echo ${callIndex}` };
      },
    ]);
    const { result } = await run(p, { messages: [user('a')] });
    expect(textOf(result)).toBe('echo 0');
    expect(seen).toEqual([[1, 0]]);
  });

  it('reports a throwing function turn as an error message', async () => {
    const p = createScriptedProvider([
      () => {
        throw new Error('bad script');
      },
    ]);
    const { result } = await run(p, { messages: [user('a')] });
    expect(result.errorMessage).toMatch(/turn 1 failed: bad script/);
  });

  it('accepts a full AssistantMessage as a turn', async () => {
    const p = createScriptedProvider([reply('verbatim')]);
    const { result } = await run(p, { messages: [user('a')] });
    expect(textOf(result)).toBe('verbatim');
    expect(result.provider).toBe('scripted');
  });

  it('selects by call order with turnSelection "calls"', async () => {
    const p = createScriptedProvider(script, { turnSelection: 'calls' });
    const texts: string[] = [];
    for (let i = 0; i < 3; i++) texts.push(textOf((await run(p, { messages: [user('same')] })).result));
    expect(texts).toEqual(['first', 'second', 'third']);
  });

  it('picks a conversation by a regex on the first user message and fills {{match.N}}', async () => {
    const p = createScriptedProvider({
      turns: [{ text: 'default' }],
      conversations: [
        {
          match: /Rename (\w+) in (?<dir>\S+)/,
          turns: [
            {
              text: 'Renaming {{match.1}} under {{match.dir}}',
              tools: [{ name: 'edit', args: { path: '{{match.2}}/x.ts' } }],
            },
          ],
        },
      ],
    });
    const hit = await run(p, { messages: [user('Rename log in src/app')] });
    const miss = await run(p, { messages: [user('Something else')] });
    expect(textOf(hit.result)).toBe('Renaming log under src/app');
    expect(hit.result.content[1]).toMatchObject({ arguments: { path: 'src/app/x.ts' } });
    expect(textOf(miss.result)).toBe('default');
  });

  it('matches a conversation on the system prompt too', async () => {
    const p = createScriptedProvider({
      turns: [],
      conversations: [{ match: /role: reviewer/, turns: [{ text: 'LGTM' }] }],
    });
    expect(textOf((await run(p, { systemPrompt: 'role: reviewer', messages: [user('check')] })).result)).toBe('LGTM');
    expect((await run(p, { messages: [user('check')] })).result.errorMessage).toMatch(
      /no conversation matches the first user message "check"/,
    );
  });
});

describe('scripted provider: overflow mode', () => {
  it('fails with an overflow-pattern error when the input estimate exceeds contextWindow, without using a turn', async () => {
    const p = createScriptedProvider([{ text: 'fits' }], { contextWindow: 50 });
    const big = await run(p, { messages: [user('z'.repeat(400))] });
    expect(big.result.stopReason).toBe('error');
    expect(big.result.errorMessage).toMatch(/prompt is too long: \d+ tokens > 50 maximum/);
    expect(isContextOverflow(big.result)).toBe(true);
    expect(big.events.map((e) => e.type)).toEqual(['error']);
    const small = await run(p, { messages: [user('short')] });
    expect(textOf(small.result)).toBe('fits');
  });
});

describe('provider registration', () => {
  afterEach(() => unregisterProvider('scripted-test'));

  it('registerScriptedProvider makes a script reachable through the registry', async () => {
    const p = registerScriptedProvider([{ text: 'via registry' }], 'scripted-test');
    const result = await complete(scriptedModel({ api: 'scripted-test' }), { messages: [user('hi')] });
    expect(textOf(result)).toBe('via registry');
    expect(p.calls).toHaveLength(1);
  });

  it('registerBuiltInProviders registers the Anthropic provider idempotently', () => {
    registerBuiltInProviders();
    registerBuiltInProviders();
    expect(getProvider('anthropic-messages')).toBe(streamAnthropic);
  });
});

describe('scripted provider: permit hooks', () => {
  it('waits for beforeAttempt and fails with its message when it throws', async () => {
    const { createScriptedProvider: make } = await import('../../src/ai/scripted.js');
    const { scriptedModel: sm } = await import('../../src/ai/models.js');
    const p = make([{ text: 'hello' }]);
    let released!: () => void;
    const gate = new Promise<void>((r) => (released = r));
    const ended: boolean[] = [];
    const s = p(
      sm(),
      { messages: [{ role: 'user', content: 'hi', timestamp: 1 }] },
      {
        beforeAttempt: () => gate,
        onAttemptEnd: ({ started }) => ended.push(started),
      },
    );
    let settled = false;
    void s.result().then(() => (settled = true));
    await new Promise((r) => setTimeout(r, 10));
    expect(settled).toBe(false);
    released();
    expect((await s.result()).stopReason).toBe('stop');
    expect(ended).toEqual([true]);
    const denied = p(
      sm(),
      { messages: [{ role: 'user', content: 'hi', timestamp: 1 }] },
      {
        beforeAttempt: async () => {
          throw new Error('Budget exhausted: x');
        },
      },
    );
    const r = await denied.result();
    expect(r.stopReason).toBe('error');
    expect(r.errorMessage).toBe('Budget exhausted: x');
  });
});
