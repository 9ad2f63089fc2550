import { afterEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { scriptedModel } from '../../src/ai/models.js';
import { registerScriptedProvider } from '../../src/ai/providers.js';
import { unregisterProvider } from '../../src/ai/registry.js';
import type { Message, Model } from '../../src/ai/types.js';
import { convertToLlm } from '../../src/agent/convert-to-llm.js';
import { agentLoop, agentLoopContinue, runAgentLoop, runAgentLoopContinue } from '../../src/agent/loop.js';
import type { AgentContext, AgentEvent, AgentLoopConfig, AgentMessage, AnyAgentTool } from '../../src/agent/types.js';
import { deferred, fakeModel, testModel, userMessage, type ScriptStep } from './fake-stream.js';

function tool(
  name: string,
  run?: (args: { text: string }, signal: AbortSignal) => Promise<unknown> | unknown,
  extra?: Partial<AnyAgentTool>,
): AnyAgentTool {
  return {
    name,
    description: `${name} tool`,
    parameters: z.object({ text: z.string() }),
    async execute(_id, params: { text: string }, signal) {
      const out = run ? await run(params, signal) : undefined;
      return (out as never) ?? { content: [{ type: 'text', text: `${name}:${params.text}` }] };
    },
    ...extra,
  };
}

function setup(script: ScriptStep[], tools: AnyAgentTool[] = [], extra: Partial<AgentLoopConfig> = {}) {
  const fake = fakeModel(script);
  const context: AgentContext = { systemPrompt: 'sys', messages: [], tools };
  const config: AgentLoopConfig = { model: testModel, streamFn: fake.streamFn, ...extra };
  const events: AgentEvent[] = [];
  const emit = (e: AgentEvent) => events.push(e);
  return { fake, context, config, events, emit };
}

/** Event types with message roles, consecutive message_updates collapsed to one `update*`. */
function sequence(events: AgentEvent[]): string[] {
  const out: string[] = [];
  for (const e of events) {
    let label: string = e.type;
    if (e.type === 'message_start' || e.type === 'message_end') label += `(${e.message.role})`;
    if (e.type === 'message_update') label = 'update*';
    if (label === 'update*' && out[out.length - 1] === 'update*') continue;
    out.push(label);
  }
  return out;
}

const call = (name: string, text: unknown = 'x', id?: string) => ({ name, args: { text }, id });

describe('agentLoop event order', () => {
  it('emits the exact sequence for a text-only prompt and agent_end carries only new messages', async () => {
    const s = setup([{ text: 'hello' }]);
    const old = userMessage('earlier');
    s.context.messages.push(old, { ...userMessage('x'), role: 'user' });
    const prompt = userMessage('hi');
    const result = await runAgentLoop([prompt], s.context, s.config, s.emit);
    expect(sequence(s.events)).toEqual([
      'agent_start',
      'turn_start',
      'message_start(user)',
      'message_end(user)',
      'message_start(assistant)',
      'update*',
      'message_end(assistant)',
      'turn_end',
      'agent_end',
    ]);
    const end = s.events[s.events.length - 1]!;
    expect(end.type === 'agent_end' && end.messages.map((m) => m.role)).toEqual(['user', 'assistant']);
    expect(result[0]).toBe(prompt);
    expect(s.context.messages).toHaveLength(2); // the caller's context is not modified
  });

  it('emits the canonical sequence for one tool round, with tool updates', async () => {
    const progress = tool('work', undefined, {
      async execute(_id, _p, _s, onUpdate) {
        onUpdate({ content: [{ type: 'text', text: 'half' }] });
        return { content: [{ type: 'text', text: 'done' }] };
      },
    });
    const s = setup([{ toolCalls: [call('work')] }, { text: 'finished' }], [progress]);
    const result = await runAgentLoop([userMessage('go')], s.context, s.config, s.emit);
    expect(sequence(s.events)).toEqual([
      'agent_start',
      'turn_start',
      'message_start(user)',
      'message_end(user)',
      'message_start(assistant)',
      'update*',
      'message_end(assistant)',
      'tool_execution_start',
      'tool_execution_update',
      'tool_execution_end',
      'message_start(toolResult)',
      'message_end(toolResult)',
      'turn_end',
      'turn_start',
      'message_start(assistant)',
      'update*',
      'message_end(assistant)',
      'turn_end',
      'agent_end',
    ]);
    expect(result.map((m) => m.role)).toEqual(['user', 'assistant', 'toolResult', 'assistant']);
    // The second model call saw the tool result.
    expect(s.fake.calls[1]!.messages.map((m) => m.role)).toEqual(['user', 'assistant', 'toolResult']);
  });

  it('agentLoop returns a stream whose result is the new messages', async () => {
    const s = setup([{ text: 'a' }]);
    const stream = agentLoop([userMessage('q')], s.context, s.config);
    const types: string[] = [];
    for await (const e of stream) types.push(e.type);
    expect(types[0]).toBe('agent_start');
    expect(types[types.length - 1]).toBe('agent_end');
    expect((await stream.result()).map((m) => m.role)).toEqual(['user', 'assistant']);
  });
});

describe('agentLoopContinue', () => {
  it('throws on an empty context and on an assistant-last context', () => {
    const s = setup([]);
    expect(() => agentLoopContinue(s.context, s.config)).toThrow(/no messages/);
    s.context.messages.push({
      role: 'assistant',
      content: [],
      api: 'fake',
      provider: 'fake',
      model: 'fake-1',
      usage: {
        input: 0,
        output: 0,
        cacheRead: 0,
        cacheWrite: 0,
        totalTokens: 0,
        cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 },
      },
      stopReason: 'stop',
      timestamp: 0,
    });
    expect(() => agentLoopContinue(s.context, s.config)).toThrow('Cannot continue from message role: assistant');
  });

  it('emits no prompt events and returns only new messages', async () => {
    const s = setup([{ text: 'answer' }]);
    s.context.messages.push(userMessage('pending question'));
    const result = await runAgentLoopContinue(s.context, s.config, s.emit);
    expect(sequence(s.events)).toEqual([
      'agent_start',
      'turn_start',
      'message_start(assistant)',
      'update*',
      'message_end(assistant)',
      'turn_end',
      'agent_end',
    ]);
    expect(result.map((m) => m.role)).toEqual(['assistant']);
  });
});

describe('context conversion', () => {
  it('runs transformContext before convertToLlm, which receives the transformed list', async () => {
    const order: string[] = [];
    const injected = userMessage('injected');
    let transformedList: AgentMessage[] | undefined;
    let converterInput: AgentMessage[] | undefined;
    const s = setup([{ text: 'ok' }], [], {
      transformContext: async (messages) => {
        order.push('transform');
        transformedList = [...messages, injected];
        return transformedList;
      },
      convertToLlm: (messages) => {
        order.push('convert');
        converterInput = messages;
        return convertToLlm(messages);
      },
    });
    await runAgentLoop([userMessage('hi')], s.context, s.config, s.emit);
    expect(order).toEqual(['transform', 'convert']);
    expect(converterInput).toBe(transformedList);
    expect(s.fake.calls[0]!.messages.at(-1)).toBe(injected);
  });

  it('never lets an internal role reach the model, even from a custom converter', async () => {
    const s = setup([{ text: 'ok' }], [], { convertToLlm: (messages) => messages as Message[] });
    const peer: AgentMessage = { role: 'peer', from: 'bob', text: 'hey', timestamp: 1 };
    s.context.messages.push(peer);
    await runAgentLoop([userMessage('hi')], s.context, s.config, s.emit);
    expect(s.fake.calls[0]!.messages.map((m) => m.role)).toEqual(['user']);
  });

  it('incremental conversion gives every call the same messages a full conversion would', async () => {
    const script: ScriptStep[] = [{ toolCalls: [call('t')] }, { toolCalls: [call('t')] }, { text: 'end' }];
    const summary: AgentMessage = { role: 'compactionSummary', summary: 'S', tokensBefore: 10, timestamp: 1 };
    let injectedSteering = false;
    const snapshots: AgentMessage[][] = [];
    const s = setup(script, [tool('t')], {
      getSteeringMessages: () => {
        if (injectedSteering) return [];
        injectedSteering = true;
        return [{ role: 'peer', from: 'p', text: 'note', timestamp: 2 }];
      },
      beforeTurn: (ctx) => {
        snapshots.push(ctx.messages.slice());
      },
    });
    s.context.messages.push(summary);
    await runAgentLoop([userMessage('go')], s.context, s.config, s.emit);
    expect(s.fake.calls).toHaveLength(3);
    for (const [i, c] of s.fake.calls.entries()) expect(c.messages).toEqual(convertToLlm(snapshots[i]!));
    expect(JSON.stringify(s.fake.calls[0]!.messages)).toContain('<summary>');
  });
});

describe('parallel tools', () => {
  it('really overlap, and results are emitted in call order', async () => {
    const log: string[] = [];
    const slow = tool('slow', async () => {
      log.push('slow start');
      await new Promise((r) => setTimeout(r, 5));
      log.push('slow end');
    });
    const fast = tool('fast', () => {
      log.push('fast start');
      log.push('fast end');
    });
    const s = setup([{ toolCalls: [call('slow', 'a', 'c1'), call('fast', 'b', 'c2')] }, { text: 'ok' }], [slow, fast]);
    await runAgentLoop([userMessage('go')], s.context, s.config, s.emit);
    expect(log).toEqual(['slow start', 'fast start', 'fast end', 'slow end']);
    const ends = s.events
      .filter((e) => e.type === 'tool_execution_end')
      .map((e) => e.type === 'tool_execution_end' && e.toolCallId);
    expect(ends).toEqual(['c1', 'c2']);
  });

  it('emits immediate failures in call order too, and a deferred second tool starts before the first resolves', async () => {
    const gate = deferred();
    const started: string[] = [];
    const first = tool('first', async () => {
      started.push('first');
      // Without overlap the gate never opens; give up after a while so the test fails, not hangs.
      const fallback = new Promise<void>((r) =>
        setTimeout(() => {
          started.push('gave up');
          r();
        }, 500),
      );
      await Promise.race([gate.promise, fallback]);
    });
    const second = tool('second', () => {
      started.push('second');
      // The first call is still blocked on its gate: this proves the overlap.
      gate.resolve();
    });
    const s = setup(
      [
        {
          toolCalls: [
            call('first', 'a', 'c1'),
            call('nope', 'a', 'c2'),
            call('second', 'b', 'c3'),
            { name: 'first', args: { text: 5 }, id: 'c4' },
          ],
        },
        { text: 'ok' },
      ],
      [first, second],
    );
    const result = await runAgentLoop([userMessage('go')], s.context, s.config, s.emit);
    expect(started).toEqual(['first', 'second']);
    const results = result.filter((m) => m.role === 'toolResult');
    // c2: unknown tool, c4: a number where a string is wanted; both fail before executing.
    expect(results.map((m) => m.role === 'toolResult' && [m.toolCallId, m.isError])).toEqual([
      ['c1', false],
      ['c2', true],
      ['c3', false],
      ['c4', true],
    ]);
    const endOrder = s.events
      .filter((e) => e.type === 'tool_execution_end')
      .map((e) => e.type === 'tool_execution_end' && e.toolCallId);
    expect(endOrder).toEqual(['c1', 'c2', 'c3', 'c4']);
  });
});

describe('steering', () => {
  it('during sequential tools skips the remaining calls and reaches the next model call', async () => {
    const queue: AgentMessage[] = [];
    const executed: string[] = [];
    const seq = tool(
      'seq',
      (p) => {
        executed.push(p.text);
        if (p.text === '1') queue.push(userMessage('stop that'));
      },
      { sequential: true },
    );
    const s = setup([{ toolCalls: [call('seq', '1'), call('seq', '2'), call('seq', '3')] }, { text: 'ok' }], [seq], {
      getSteeringMessages: () => queue.splice(0),
    });
    await runAgentLoop([userMessage('go')], s.context, s.config, s.emit);
    expect(executed).toEqual(['1']);
    const ends = s.events.filter((e) => e.type === 'tool_execution_end');
    expect(
      ends.map((e) => e.type === 'tool_execution_end' && [e.isError, (e.result.content[0] as { text: string }).text]),
    ).toEqual([
      [false, 'seq:1'],
      [true, 'Skipped due to queued user message.'],
      [true, 'Skipped due to queued user message.'],
    ]);
    expect(s.events.filter((e) => e.type === 'tool_execution_start')).toHaveLength(3);
    const lastOfCall2 = s.fake.calls[1]!.messages.at(-1)!;
    expect(lastOfCall2.role === 'user' && lastOfCall2.content).toBe('stop that');
    // The steering message was emitted as message events after the tool turn.
    const seqs = sequence(s.events);
    expect(seqs.slice(seqs.indexOf('turn_start', 2), seqs.indexOf('turn_start', 2) + 3)).toEqual([
      'turn_start',
      'message_start(user)',
      'message_end(user)',
    ]);
  });

  it('during parallel preflight skips prepared calls without a duplicate start event', async () => {
    const queue: AgentMessage[] = [];
    const executed: string[] = [];
    const par = tool('par', (p) => void executed.push(p.text));
    const s = setup(
      [{ toolCalls: [call('par', '1', 'a'), call('par', '2', 'b'), call('par', '3', 'c')] }, { text: 'ok' }],
      [par],
      {
        getSteeringMessages: () => queue.splice(0),
        beforeToolCall: ({ toolCall }) => {
          if (toolCall.id === 'a') queue.push(userMessage('wait'));
        },
      },
    );
    await runAgentLoop([userMessage('go')], s.context, s.config, s.emit);
    expect(executed).toEqual([]);
    const starts = s.events
      .filter((e) => e.type === 'tool_execution_start')
      .map((e) => e.type === 'tool_execution_start' && e.toolCallId);
    expect(starts).toEqual(['a', 'b', 'c']);
    const ends = s.events.filter((e) => e.type === 'tool_execution_end');
    expect(ends.every((e) => e.type === 'tool_execution_end' && e.isError)).toBe(true);
    expect(s.fake.calls).toHaveLength(2);
  });

  it('a steering message queued before the run is delivered with the prompt turn', async () => {
    const queue: AgentMessage[] = [userMessage('also this')];
    const s = setup([{ text: 'ok' }], [], { getSteeringMessages: () => queue.splice(0) });
    await runAgentLoop([userMessage('go')], s.context, s.config, s.emit);
    expect(s.fake.calls).toHaveLength(1);
    expect(s.fake.calls[0]!.messages.map((m) => m.role === 'user' && m.content)).toEqual(['go', 'also this']);
  });
});

describe('follow-ups', () => {
  it('run only after a turn without tool calls', async () => {
    const followUps: AgentMessage[] = [userMessage('next')];
    let polledDuringTools = false;
    const t = tool('t', () => {
      polledDuringTools = followUps.length === 0;
    });
    const s = setup([{ toolCalls: [call('t')] }, { text: 'first answer' }, { text: 'second answer' }], [t], {
      getFollowUpMessages: () => followUps.splice(0),
    });
    const result = await runAgentLoop([userMessage('go')], s.context, s.config, s.emit);
    expect(polledDuringTools).toBe(false);
    expect(s.fake.calls).toHaveLength(3);
    // The follow-up reached only the third call, after the no-tool reply.
    expect(s.fake.calls[1]!.messages.some((m) => m.role === 'user' && m.content === 'next')).toBe(false);
    expect(s.fake.calls[2]!.messages.at(-1)).toMatchObject({ role: 'user', content: 'next' });
    expect(result.map((m) => m.role)).toEqual(['user', 'assistant', 'toolResult', 'assistant', 'user', 'assistant']);
  });
});

describe('stopping', () => {
  it('an error reply is a hard stop: no tools run and follow-ups are not consulted', async () => {
    let ran = false;
    let followUpPolls = 0;
    const s = setup(
      [{ toolCalls: [call('t')], stopReason: 'error', errorMessage: 'overloaded' }],
      [
        tool('t', () => {
          ran = true;
        }),
      ],
      {
        getFollowUpMessages: () => {
          followUpPolls++;
          return [userMessage('later')];
        },
      },
    );
    const result = await runAgentLoop([userMessage('go')], s.context, s.config, s.emit);
    expect(ran).toBe(false);
    expect(followUpPolls).toBe(0);
    expect(sequence(s.events).slice(-2)).toEqual(['turn_end', 'agent_end']);
    expect(result.at(-1)).toMatchObject({ role: 'assistant', stopReason: 'error', errorMessage: 'overloaded' });
  });

  it('an aborted reply is a hard stop as well', async () => {
    const s = setup([{ toolCalls: [call('t')], stopReason: 'aborted' }], [tool('t')], {
      getFollowUpMessages: () => [userMessage('x')],
    });
    const result = await runAgentLoop([userMessage('go')], s.context, s.config, s.emit);
    expect(s.events.some((e) => e.type === 'tool_execution_start')).toBe(false);
    expect(s.fake.calls).toHaveLength(1);
    expect(result.at(-1)).toMatchObject({ stopReason: 'aborted' });
  });

  it('a `length` reply that holds tool calls still runs them', async () => {
    let ran = false;
    const s = setup(
      [{ toolCalls: [call('t')], stopReason: 'length' }, { text: 'ok' }],
      [
        tool('t', () => {
          ran = true;
        }),
      ],
    );
    await runAgentLoop([userMessage('go')], s.context, s.config, s.emit);
    expect(ran).toBe(true);
    expect(s.fake.calls).toHaveLength(2);
  });

  it('ends after a batch whose results all ask to terminate', async () => {
    const stopper = tool('stop', () => ({ content: [{ type: 'text', text: 'bye' }], terminate: true }));
    const s = setup([{ toolCalls: [call('stop'), call('stop')] }, { text: 'never' }], [stopper]);
    const result = await runAgentLoop([userMessage('go')], s.context, s.config, s.emit);
    expect(s.fake.calls).toHaveLength(1);
    expect(result.map((m) => m.role)).toEqual(['user', 'assistant', 'toolResult', 'toolResult']);
    expect(sequence(s.events).slice(-2)).toEqual(['turn_end', 'agent_end']);
  });

  it('continues when only some results ask to terminate', async () => {
    const stopper = tool('stop', () => ({ content: [{ type: 'text', text: 'bye' }], terminate: true }));
    const s = setup([{ toolCalls: [call('stop'), call('t')] }, { text: 'done' }], [stopper, tool('t')]);
    await runAgentLoop([userMessage('go')], s.context, s.config, s.emit);
    expect(s.fake.calls).toHaveLength(2);
  });

  it('an abort during tools ends the run without another model call', async () => {
    const controller = new AbortController();
    const aborting = tool('long', async (_p, signal) => {
      controller.abort();
      if (signal.aborted) throw new Error('Operation aborted');
    });
    const s = setup([{ toolCalls: [call('long')] }, { text: 'never' }], [aborting]);
    const result = await runAgentLoop([userMessage('go')], s.context, s.config, s.emit, controller.signal);
    expect(s.fake.calls).toHaveLength(1);
    expect(result.at(-1)).toMatchObject({ role: 'toolResult', isError: true });
    expect(sequence(s.events).slice(-2)).toEqual(['turn_end', 'agent_end']);
  });

  it('shouldStop returning true ends the run cleanly after the turn', async () => {
    const seen: number[] = [];
    const s = setup([{ toolCalls: [call('t')] }, { toolCalls: [call('t')] }, { text: 'x' }], [tool('t')], {
      shouldStop: ({ toolResults, newMessages }) => {
        seen.push(toolResults.length);
        return newMessages.filter((m) => m.role === 'assistant').length >= 2;
      },
    });
    await runAgentLoop([userMessage('go')], s.context, s.config, s.emit);
    expect(s.fake.calls).toHaveLength(2);
    expect(seen).toEqual([1, 1]);
    expect(s.events.at(-1)!.type).toBe('agent_end');
  });
});

describe('hooks and failures around the model call', () => {
  it('beforeTurn can swap the model and the system prompt for the following calls', async () => {
    const other: Model = { ...testModel, id: 'fake-2' };
    let turn = 0;
    const s = setup([{ toolCalls: [call('t')] }, { text: 'x' }], [tool('t')], {
      beforeTurn: () => (turn++ === 1 ? { model: other, systemPrompt: 'new system' } : undefined),
    });
    const result = await runAgentLoop([userMessage('go')], s.context, s.config, s.emit);
    expect(s.fake.calls.map((c) => [c.model.id, c.systemPrompt])).toEqual([
      ['fake-1', 'sys'],
      ['fake-2', 'new system'],
    ]);
    expect(result.at(-1)).toMatchObject({ model: 'fake-2' });
  });

  it('resolves the API key before every call and passes it to the provider', async () => {
    let n = 0;
    const s = setup([{ toolCalls: [call('t')] }, { text: 'x' }], [tool('t')], {
      getApiKey: (provider) => `${provider}-key-${++n}`,
    });
    await runAgentLoop([userMessage('go')], s.context, s.config, s.emit);
    expect(s.fake.calls.map((c) => c.options?.apiKey)).toEqual(['fake-key-1', 'fake-key-2']);
  });

  it('a provider that throws synchronously becomes an error message and agent_end', async () => {
    const s = setup([]);
    s.config.streamFn = () => {
      throw new Error('socket exploded');
    };
    const result = await runAgentLoop([userMessage('go')], s.context, s.config, s.emit);
    expect(result.at(-1)).toMatchObject({ role: 'assistant', stopReason: 'error' });
    expect((result.at(-1) as { errorMessage: string }).errorMessage).toContain('socket exploded');
    expect(sequence(s.events).slice(-4)).toEqual([
      'message_start(assistant)',
      'message_end(assistant)',
      'turn_end',
      'agent_end',
    ]);
  });

  it('a getApiKey that throws becomes an error message and agent_end', async () => {
    const s = setup([{ text: 'never' }], [], {
      getApiKey: () => {
        throw new Error('token expired');
      },
    });
    const stream = agentLoop([userMessage('go')], s.context, s.config);
    const result = await stream.result();
    expect(s.fake.calls).toHaveLength(0);
    expect((result.at(-1) as { errorMessage: string }).errorMessage).toMatch(/getApiKey failed: token expired/);
  });

  it('a throwing steering poll ends the run with an error message instead of a rejection', async () => {
    const s = setup([{ text: 'x' }], [], {
      getSteeringMessages: () => {
        throw new Error('queue broken');
      },
    });
    const result = await runAgentLoop([userMessage('go')], s.context, s.config, s.emit);
    expect(result.at(-1)).toMatchObject({ role: 'assistant', stopReason: 'error', errorMessage: 'queue broken' });
    expect(s.events.at(-1)!.type).toBe('agent_end');
  });
});

describe('through the provider registry', () => {
  const api = 'scripted-agent-loop-test';
  afterEach(() => unregisterProvider(api));

  it('without a streamFn the loop dispatches on model.api (here: the real scripted provider)', async () => {
    const provider = registerScriptedProvider(
      [{ tools: [{ name: 't', args: { text: 'hi' } }] }, { text: 'all done' }],
      api,
    );
    const context: AgentContext = { systemPrompt: 'sys', messages: [], tools: [tool('t')] };
    const result = await runAgentLoop([userMessage('go')], context, { model: scriptedModel({ api }) }, () => {});
    expect(result.map((m) => m.role)).toEqual(['user', 'assistant', 'toolResult', 'assistant']);
    expect(result[2]).toMatchObject({ isError: false, content: [{ type: 'text', text: 't:hi' }] });
    expect(provider.calls).toHaveLength(2);
    expect(provider.calls[1]!.tools?.map((t) => t.name)).toEqual(['t']);
  });

  it('an unregistered api becomes an error reply and a clean end', async () => {
    const result = await runAgentLoop(
      [userMessage('go')],
      { messages: [], tools: [] },
      { model: scriptedModel({ api: 'nobody-serves-this' }) },
      () => {},
    );
    expect(result.at(-1)).toMatchObject({ role: 'assistant', stopReason: 'error' });
    expect((result.at(-1) as { errorMessage: string }).errorMessage).toMatch(/No provider is registered/);
  });
});

describe('streamed message snapshots', () => {
  it('message_start and message_update carry snapshots that later deltas do not change', async () => {
    const { context, config, events, emit } = setup([{ text: 'Hello there, this streams in several chunks' }]);
    await runAgentLoop([userMessage('hi')], context, config, emit);
    const assistantText = (m: AgentEvent) =>
      'message' in m && m.message.role === 'assistant'
        ? m.message.content.map((b) => (b.type === 'text' ? b.text : '')).join('')
        : undefined;
    const start = events.find((e) => e.type === 'message_start' && e.message.role === 'assistant')!;
    expect(assistantText(start)).toBe('');
    const updates = events.filter((e) => e.type === 'message_update').map(assistantText);
    // Each update shows the text as it was at that point: strictly growing, never the final text early.
    for (let i = 1; i < updates.length; i++) expect(updates[i]!.length).toBeGreaterThanOrEqual(updates[i - 1]!.length);
    expect(updates.some((t) => t !== 'Hello there, this streams in several chunks')).toBe(true);
  });
});
