import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { Agent, type AgentOptions } from '../../src/agent/agent.js';
import type { AgentEvent, AgentMessage, AnyAgentTool } from '../../src/agent/types.js';
import { deferred, fakeModel, testModel, userMessage, type ScriptStep } from './fake-stream.js';

const echo: AnyAgentTool = {
  name: 'echo',
  description: 'echo',
  parameters: z.object({ text: z.string() }),
  async execute(_id, p: { text: string }) {
    return { content: [{ type: 'text', text: p.text }] };
  },
};

function makeAgent(script: ScriptStep[], options: Partial<AgentOptions> = {}) {
  const fake = fakeModel(script);
  const agent = new Agent({
    initialState: { model: testModel, systemPrompt: 'sys', tools: [echo] },
    streamFn: fake.streamFn,
    ...options,
  });
  const events: AgentEvent[] = [];
  agent.subscribe((e) => events.push(e));
  return { agent, fake, events };
}

const lastUserTexts = (messages: AgentMessage[]) =>
  messages
    .filter((m) => m.role === 'user')
    .map((m) =>
      m.role === 'user' && typeof m.content === 'string'
        ? m.content
        : m.role === 'user'
          ? (m.content[0] as { text: string }).text
          : '',
    );

describe('Agent', () => {
  it('keeps its state from the loop events', async () => {
    const { agent, events } = makeAgent([{ toolCalls: [{ name: 'echo', args: { text: 'x' } }] }, { text: 'done' }]);
    const seenPending: number[] = [];
    const seenStreaming: boolean[] = [];
    agent.subscribe((e) => {
      if (e.type === 'tool_execution_start') seenPending.push(agent.state.pendingToolCalls.size);
      if (e.type === 'message_update')
        seenStreaming.push(agent.state.streamMessage !== null && agent.state.isStreaming);
    });
    await agent.prompt('hello');
    expect(agent.state.messages.map((m) => m.role)).toEqual(['user', 'assistant', 'toolResult', 'assistant']);
    expect(agent.state.isStreaming).toBe(false);
    expect(agent.state.streamMessage).toBeNull();
    expect(agent.state.pendingToolCalls.size).toBe(0);
    expect(seenPending).toEqual([1]);
    expect(seenStreaming.length).toBeGreaterThan(0);
    expect(seenStreaming.every(Boolean)).toBe(true);
    expect(events[0]!.type).toBe('agent_start');
  });

  it('prompt() while streaming throws, naming steer() and followUp()', async () => {
    const gate = deferred();
    const { agent } = makeAgent([{ text: 'slow', gate: gate.promise }]);
    const first = agent.prompt('one');
    await expect(agent.prompt('two')).rejects.toThrow(/use steer\(\) or followUp\(\)/);
    gate.resolve();
    await first;
    expect(lastUserTexts(agent.state.messages)).toEqual(['one']);
  });

  it('sets state.error from a failed model call, and clears it on the next run', async () => {
    const { agent } = makeAgent([{ stopReason: 'error', errorMessage: 'rate limited' }, { text: 'ok' }]);
    await agent.prompt('x');
    expect(agent.state.error).toBe('rate limited');
    await agent.prompt('y');
    expect(agent.state.error).toBeUndefined();
  });

  it('turns a synchronous provider throw into an error message and agent_end', async () => {
    const { agent, events } = makeAgent([], {
      streamFn: () => {
        throw new Error('boom');
      },
    });
    await agent.prompt('x');
    expect(agent.state.messages.at(-1)).toMatchObject({ role: 'assistant', stopReason: 'error' });
    expect(agent.state.error).toMatch(/boom/);
    expect(events.at(-1)!.type).toBe('agent_end');
  });

  it('sends reasoning only when the thinking level is not "off"', async () => {
    const { agent, fake } = makeAgent([{ text: 'a' }, { text: 'b' }]);
    await agent.prompt('x');
    agent.setThinkingLevel('high');
    await agent.prompt('y');
    expect(fake.calls.map((c) => c.options?.reasoning)).toEqual([undefined, 'high']);
  });

  it('passes stream options and the api key through to the provider', async () => {
    const { agent, fake } = makeAgent([{ text: 'a' }], {
      streamOptions: { maxTokens: 77, sessionId: 's1' },
      getApiKey: () => 'k',
    });
    await agent.prompt('x');
    expect(fake.calls[0]!.options).toMatchObject({ maxTokens: 77, sessionId: 's1', apiKey: 'k' });
  });

  it('delivers follow-ups one at a time by default, each in its own turn after the agent would stop', async () => {
    const gate = deferred();
    const { agent, fake } = makeAgent([{ text: 'first', gate: gate.promise }, { text: 'second' }, { text: 'third' }]);
    const run = agent.prompt('start');
    agent.followUp('f1');
    agent.followUp('f2');
    expect(agent.hasQueuedMessages()).toBe(true);
    gate.resolve();
    await run;
    expect(fake.calls).toHaveLength(3);
    expect(lastUserTexts(fake.calls[1]!.messages as AgentMessage[])).toEqual(['start', 'f1']);
    expect(lastUserTexts(fake.calls[2]!.messages as AgentMessage[])).toEqual(['start', 'f1', 'f2']);
    expect(agent.hasQueuedMessages()).toBe(false);
  });

  it('delivers all queued follow-ups at once in "all" mode', async () => {
    const gate = deferred();
    const { agent, fake } = makeAgent([{ text: 'first', gate: gate.promise }, { text: 'second' }], {
      followUpMode: 'all',
    });
    const run = agent.prompt('start');
    agent.followUp('f1');
    agent.followUp('f2');
    gate.resolve();
    await run;
    expect(fake.calls).toHaveLength(2);
    expect(lastUserTexts(fake.calls[1]!.messages as AgentMessage[])).toEqual(['start', 'f1', 'f2']);
  });

  it('steering during a run reaches the next model call', async () => {
    const gate = deferred();
    const { agent, fake } = makeAgent([
      { toolCalls: [{ name: 'echo', args: { text: 'a' } }], gate: gate.promise },
      { text: 'ok' },
    ]);
    const run = agent.prompt('go');
    agent.steer('actually, stop');
    gate.resolve();
    await run;
    expect(lastUserTexts(fake.calls[1]!.messages as AgentMessage[])).toEqual(['go', 'actually, stop']);
  });

  it('continue() rules: throws on empty history and on an assistant tail with nothing queued', async () => {
    const { agent } = makeAgent([{ text: 'a' }]);
    await expect(agent.continue()).rejects.toThrow(/no messages/);
    await agent.prompt('x');
    await expect(agent.continue()).rejects.toThrow(/Cannot continue from message role: assistant/);
  });

  it('continue() from an assistant tail takes queued steering before follow-ups', async () => {
    const { agent, fake } = makeAgent([{ text: 'a' }, { text: 'b' }, { text: 'c' }, { text: 'd' }]);
    await agent.prompt('x');
    agent.followUp('later');
    agent.steer('now');
    agent.steer('now 2');
    await agent.continue();
    // One steering message per turn (one-at-a-time): "now" starts the run, the initial poll is
    // skipped so "now 2" gets its own turn, and the follow-up comes only after steering is drained.
    expect(fake.calls).toHaveLength(4);
    expect(lastUserTexts(fake.calls[1]!.messages as AgentMessage[])).toEqual(['x', 'now']);
    expect(lastUserTexts(fake.calls[2]!.messages as AgentMessage[])).toEqual(['x', 'now', 'now 2']);
    expect(lastUserTexts(fake.calls[3]!.messages as AgentMessage[])).toEqual(['x', 'now', 'now 2', 'later']);
  });

  it('continue() re-runs the model when the history ends with a user message', async () => {
    const { agent, fake } = makeAgent([{ text: 'reply' }]);
    agent.appendMessage(userMessage('pending'));
    await agent.continue();
    expect(fake.calls).toHaveLength(1);
    expect(agent.state.messages.map((m) => m.role)).toEqual(['user', 'assistant']);
  });

  it('abort() stops the run and waitForIdle() resolves when it has finished', async () => {
    const toolStarted = deferred();
    const slow: AnyAgentTool = {
      name: 'slow',
      description: 'slow',
      parameters: z.object({}),
      execute: (_id, _p, signal) =>
        new Promise((_resolve, reject) => {
          toolStarted.resolve();
          signal.addEventListener('abort', () => reject(new Error('Operation aborted')));
        }),
    };
    const { agent, fake } = makeAgent([{ toolCalls: [{ name: 'slow', args: {} }] }, { text: 'never' }]);
    agent.setTools([slow]);
    void agent.prompt('go');
    await toolStarted.promise;
    agent.abort();
    await agent.waitForIdle();
    expect(agent.state.isStreaming).toBe(false);
    expect(fake.calls).toHaveLength(1);
    expect(agent.state.messages.at(-1)).toMatchObject({
      role: 'toolResult',
      isError: true,
      content: [{ type: 'text', text: 'Operation aborted' }],
    });
  });

  it('subscribe() calls listeners in order; unsubscribe stops delivery; a throwing listener does not break the run', async () => {
    const errors: unknown[] = [];
    const { agent } = makeAgent([{ text: 'a' }, { text: 'b' }], { onListenerError: (e) => errors.push(e) });
    const order: string[] = [];
    agent.subscribe(() => {
      throw new Error('bad listener');
    });
    const off = agent.subscribe((e) => e.type === 'agent_start' && order.push('first'));
    agent.subscribe((e) => e.type === 'agent_start' && order.push('second'));
    await agent.prompt('x');
    off();
    await agent.prompt('y');
    expect(order).toEqual(['first', 'second', 'second']);
    expect(errors.length).toBeGreaterThan(0);
    expect(agent.state.messages).toHaveLength(4);
  });

  it('replaceMessages copies, reset clears messages, error and queues', async () => {
    const { agent } = makeAgent([{ stopReason: 'error', errorMessage: 'x' }]);
    const list: AgentMessage[] = [userMessage('a')];
    agent.replaceMessages(list);
    list.push(userMessage('b'));
    expect(agent.state.messages).toHaveLength(1);
    await agent.continue();
    agent.followUp('f');
    agent.reset();
    expect(agent.state.messages).toEqual([]);
    expect(agent.state.error).toBeUndefined();
    expect(agent.hasQueuedMessages()).toBe(false);
  });
});
