import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { errorAssistantMessage } from '../../src/ai/event-stream.js';
import type { ToolCall } from '../../src/ai/types.js';
import { executeToolCalls, type ToolPipelineConfig } from '../../src/agent/tool-pipeline.js';
import type { AgentEvent, AgentToolResult, AnyAgentTool } from '../../src/agent/types.js';

const assistant = {
  ...errorAssistantMessage({ api: 'fake', provider: 'fake', id: 'm' }, ''),
  stopReason: 'toolUse' as const,
};

const editParams = z.object({
  path: z.string(),
  edits: z.array(z.object({ oldText: z.string(), newText: z.string() })),
  count: z.number().int().optional(),
  dryRun: z.boolean().optional(),
});

function editTool(seen: unknown[] = []): AnyAgentTool {
  return {
    name: 'edit',
    description: 'Edit a file',
    parameters: editParams,
    argumentAliases: { file_path: 'path' },
    async execute(_id, params) {
      seen.push(params);
      return { content: [{ type: 'text', text: 'edited' }], details: { n: 1 } };
    },
  };
}

function okTool(name: string, result?: () => AgentToolResult | Promise<AgentToolResult>): AnyAgentTool {
  return {
    name,
    description: name,
    parameters: z.object({}),
    async execute() {
      return result ? result() : { content: [{ type: 'text', text: `${name} ok` }] };
    },
  };
}

const toolCall = (name: string, args: unknown, id = 'call-1'): ToolCall => ({
  type: 'toolCall',
  id,
  name,
  arguments: args as Record<string, unknown>,
});

async function runOne(tools: AnyAgentTool[], call: ToolCall, config: ToolPipelineConfig = {}) {
  const events: AgentEvent[] = [];
  const batch = await executeToolCalls(
    assistant,
    [call],
    { messages: [], tools },
    config,
    new AbortController().signal,
    (e) => events.push(e),
  );
  const result = batch.results[0]!;
  const text = result.content.map((c) => (c.type === 'text' ? c.text : '')).join('');
  return { result, text, events, batch };
}

describe('stage failures become one error result with actionable text', () => {
  it('unknown tool lists the available tools', async () => {
    const { result, text } = await runOne([okTool('read'), okTool('bash'), okTool('ls')], toolCall('grep', {}));
    expect(result.isError).toBe(true);
    expect(text).toBe('Tool "grep" not found. Available tools: read, bash, ls.');
  });

  it('invalid arguments: one line per issue with path, expectation and what was received, how to fix, and the arguments', async () => {
    const args = { path: 42, edits: [{ oldText: 'a' }] };
    const { result, text } = await runOne([editTool()], toolCall('edit', args));
    expect(result.isError).toBe(true);
    const lines = text.split('\n');
    expect(lines[0]).toBe('Invalid arguments for tool "edit":');
    expect(lines).toContain('- path: expected string, received number 42');
    expect(lines).toContain('- edits[0].newText: expected string, received undefined (missing)');
    expect(text).toMatch(/Call "edit" again with arguments that match its parameter schema/);
    expect(text).toContain(`Received arguments:\n${JSON.stringify(args, null, 2)}`);
  });

  it('truncates huge received arguments', async () => {
    const { text } = await runOne([editTool()], toolCall('edit', { path: 1, edits: [], junk: 'x'.repeat(10_000) }));
    expect(text.length).toBeLessThan(3000);
    expect(text).toMatch(/truncated, \d+ more characters/);
  });

  it('a blocking before-hook gives its reason, or the default text', async () => {
    const blocked = await runOne([okTool('rm')], toolCall('rm', {}), {
      beforeToolCall: () => ({ block: true, reason: 'rm is not allowed here' }),
    });
    expect([blocked.result.isError, blocked.text]).toEqual([true, 'rm is not allowed here']);
    const silent = await runOne([okTool('rm')], toolCall('rm', {}), { beforeToolCall: () => ({ block: true }) });
    expect([silent.result.isError, silent.text]).toEqual([true, 'Tool execution was blocked']);
  });

  it('a throwing before-hook fails closed with its message and the tool does not run', async () => {
    let ran = false;
    const tool = okTool('rm', () => {
      ran = true;
      return { content: [] };
    });
    const { result, text } = await runOne([tool], toolCall('rm', {}), {
      beforeToolCall: () => {
        throw new Error('policy service unreachable');
      },
    });
    expect([result.isError, text, ran]).toEqual([true, 'policy service unreachable', false]);
  });

  it('a throwing tool reports its message unchanged', async () => {
    const tool = okTool('bash', () => {
      throw new Error('Command exited with code 2\nno such file');
    });
    const { result, text, events } = await runOne([tool], toolCall('bash', {}));
    expect([result.isError, text]).toEqual([true, 'Command exited with code 2\nno such file']);
    expect(events.find((e) => e.type === 'tool_execution_end')).toMatchObject({ isError: true });
  });

  it('an isError field returned by a tool is ignored: only throwing reports failure', async () => {
    const tool = okTool('t', () => ({ content: [{ type: 'text', text: 'fine' }], isError: true }) as AgentToolResult);
    const { result } = await runOne([tool], toolCall('t', {}));
    expect(result.isError).toBe(false);
  });

  it('afterToolCall overrides replace fields wholesale and keep the omitted ones', async () => {
    const { result, text, batch } = await runOne([editTool()], toolCall('edit', { path: 'a', edits: [] }), {
      afterToolCall: ({ result: executed, isError }) => {
        expect([executed.details, isError]).toEqual([{ n: 1 }, false]);
        return { content: [{ type: 'text', text: '[redacted]' }], isError: true };
      },
    });
    expect([text, result.isError, result.details]).toEqual(['[redacted]', true, { n: 1 }]);
    expect(batch.terminate).toBe(false);
  });

  it('afterToolCall can turn a result into a stop request', async () => {
    const { batch } = await runOne([okTool('t')], toolCall('t', {}), { afterToolCall: () => ({ terminate: true }) });
    expect(batch.terminate).toBe(true);
  });

  it('afterToolCall is not called for calls that failed before executing', async () => {
    let called = false;
    await runOne([okTool('t')], toolCall('missing', {}), {
      afterToolCall: () => {
        called = true;
      },
    });
    expect(called).toBe(false);
  });
});

describe('argument repair before validation', () => {
  it('coerces "5" to 5 and "true" to true', async () => {
    const seen: unknown[] = [];
    const { result } = await runOne(
      [editTool(seen)],
      toolCall('edit', { path: 'a', edits: [], count: '5', dryRun: 'true' }),
    );
    expect(result.isError).toBe(false);
    expect(seen[0]).toEqual({ path: 'a', edits: [], count: 5, dryRun: true });
  });

  it('parses arguments sent as one JSON string', async () => {
    const seen: unknown[] = [];
    const raw = JSON.stringify({ path: 'a', edits: [{ oldText: 'x', newText: 'y' }] });
    const { result } = await runOne([editTool(seen)], toolCall('edit', raw));
    expect(result.isError).toBe(false);
    expect(seen[0]).toEqual({ path: 'a', edits: [{ oldText: 'x', newText: 'y' }] });
  });

  it('renames a known alias and wraps a single object into the expected array', async () => {
    const seen: unknown[] = [];
    const { result } = await runOne(
      [editTool(seen)],
      toolCall('edit', { file_path: 'a', edits: { oldText: 'x', newText: 'y' } }),
    );
    expect(result.isError).toBe(false);
    expect(seen[0]).toEqual({ path: 'a', edits: [{ oldText: 'x', newText: 'y' }] });
  });

  it('never mutates the raw arguments the model sent', async () => {
    const raw = { file_path: 'a', edits: '[{"oldText":"x","newText":"y"}]', count: '3' };
    const copy = structuredClone(raw);
    const { events } = await runOne([editTool()], toolCall('edit', raw));
    expect(raw).toEqual(copy);
    expect(events.find((e) => e.type === 'tool_execution_start')).toMatchObject({ args: copy });
  });
});

describe('batches', () => {
  it('any sequential tool makes the whole batch run one call at a time', async () => {
    const log: string[] = [];
    const slow: AnyAgentTool = {
      name: 'slow',
      description: 'slow',
      parameters: z.object({}),
      async execute(id) {
        log.push(`start ${id}`);
        await new Promise((r) => setTimeout(r, 2));
        log.push(`end ${id}`);
        return { content: [] };
      },
    };
    const seq: AnyAgentTool = { ...okTool('seq'), sequential: true };
    await executeToolCalls(
      assistant,
      [toolCall('slow', {}, 'a'), toolCall('slow', {}, 'b'), toolCall('seq', {}, 'c')],
      { messages: [], tools: [slow, seq] },
      {},
      new AbortController().signal,
      () => {},
    );
    expect(log).toEqual(['start a', 'end a', 'start b', 'end b']);
  });

  it('calls of one serial group run one at a time in call order while the other calls overlap them', async () => {
    const log: string[] = [];
    // Each write waits for the test to release it: a second write that started meanwhile would be in the log.
    const releases = new Map<string, () => void>();
    const started = new Map<string, () => void>();
    const startedP = (id: string) => new Promise<void>((r) => started.set(id, r));
    const write: AnyAgentTool = {
      name: 'write',
      description: 'write',
      parameters: z.object({}),
      serialGroup: 'server-a',
      async execute(id) {
        log.push(`start ${id}`);
        started.get(id)?.();
        await new Promise<void>((r) => releases.set(id, r));
        log.push(`end ${id}`);
        return { content: [{ type: 'text', text: `wrote ${id}` }] };
      },
    };
    // A tool outside the group: it runs while the first write still runs.
    const read: AnyAgentTool = {
      name: 'read',
      description: 'read',
      parameters: z.object({}),
      async execute(id) {
        log.push(`read ${id}`);
        return { content: [{ type: 'text', text: `read ${id}` }] };
      },
    };
    const firstStarted = startedP('w1');
    const secondStarted = startedP('w2');
    const thirdStarted = startedP('w3');
    const batch = executeToolCalls(
      assistant,
      [
        toolCall('write', {}, 'w1'),
        toolCall('write', {}, 'w2'),
        toolCall('read', {}, 'r'),
        toolCall('write', {}, 'w3'),
      ],
      { messages: [], tools: [write, read] },
      {},
      new AbortController().signal,
      () => {},
    );
    await firstStarted;
    // The read ran although w1 is still running; w2 and w3 have not started.
    expect(log).toEqual(['start w1', 'read r']);
    releases.get('w1')!();
    await secondStarted;
    expect(log).toEqual(['start w1', 'read r', 'end w1', 'start w2']);
    releases.get('w2')!();
    await thirdStarted;
    releases.get('w3')!();
    const done = await batch;
    expect(log).toEqual(['start w1', 'read r', 'end w1', 'start w2', 'end w2', 'start w3', 'end w3']);
    expect(done.results.map((r) => r.toolCallId)).toEqual(['w1', 'w2', 'r', 'w3']);
  });

  it('two serial groups do not wait for each other', async () => {
    const log: string[] = [];
    const releases: (() => void)[] = [];
    let bothStarted: () => void = () => {};
    const both = new Promise<void>((r) => (bothStarted = r));
    const tool = (name: string, group: string): AnyAgentTool => ({
      name,
      description: name,
      parameters: z.object({}),
      serialGroup: group,
      async execute(id) {
        log.push(`start ${id}`);
        if (log.length === 2) bothStarted();
        await new Promise<void>((r) => releases.push(r));
        return { content: [] };
      },
    });
    const batch = executeToolCalls(
      assistant,
      [toolCall('a', {}, 'a1'), toolCall('b', {}, 'b1')],
      { messages: [], tools: [tool('a', 'one'), tool('b', 'two')] },
      {},
      new AbortController().signal,
      () => {},
    );
    await both;
    expect(log).toEqual(['start a1', 'start b1']);
    for (const r of releases) r();
    await batch;
  });

  it('tool updates arrive as tool_execution_update with the raw arguments; late updates are dropped', async () => {
    let late: ((p: AgentToolResult) => void) | undefined;
    const tool: AnyAgentTool = {
      name: 'p',
      description: 'p',
      parameters: z.object({ n: z.number() }),
      async execute(_id, _params, _signal, onUpdate) {
        onUpdate({ content: [{ type: 'text', text: '50%' }] });
        late = onUpdate;
        return { content: [{ type: 'text', text: 'done' }] };
      },
    };
    const { events } = await runOne([tool], toolCall('p', { n: '1' }));
    late!({ content: [{ type: 'text', text: 'too late' }] });
    const updates = events.filter((e) => e.type === 'tool_execution_update');
    expect(updates).toEqual([
      {
        type: 'tool_execution_update',
        toolCallId: 'call-1',
        toolName: 'p',
        args: { n: '1' },
        partialResult: { content: [{ type: 'text', text: '50%' }] },
      },
    ]);
  });

  it('calls not started before an abort are skipped with an explanation', async () => {
    const controller = new AbortController();
    controller.abort();
    let ran = false;
    const batch = await executeToolCalls(
      assistant,
      [toolCall('t', {})],
      {
        messages: [],
        tools: [
          okTool('t', () => {
            ran = true;
            return { content: [] };
          }),
        ],
      },
      {},
      controller.signal,
      () => {},
    );
    expect(ran).toBe(false);
    expect(batch.results[0]).toMatchObject({
      isError: true,
      content: [{ type: 'text', text: expect.stringMatching(/aborted/) }],
    });
  });
});

describe('runaway error texts', () => {
  it('a tool error that echoes a huge argument is cut to a bounded head and tail', async () => {
    const huge = 'y'.repeat(300_000);
    const echo: AnyAgentTool = {
      name: 'open',
      description: 'open',
      parameters: z.object({ path: z.string() }),
      async execute(_id, params) {
        throw new Error(`ENAMETOOLONG: name too long, stat '${(params as { path: string }).path}'`);
      },
    };
    const { result, text } = await runOne([echo], toolCall('open', { path: huge }));
    expect(result.isError).toBe(true);
    expect(text.length).toBeLessThanOrEqual(60_000);
    expect(text.startsWith('ENAMETOOLONG: name too long')).toBe(true);
    expect(text).toMatch(/characters of this error text cut/);
  });

  it('an error text within the limit is passed through unchanged', async () => {
    const msg = `Command exited with code 1\n${'out\n'.repeat(5_000)}`;
    const fail = okTool('run', () => {
      throw new Error(msg);
    });
    const { text } = await runOne([fail], toolCall('run', {}));
    expect(text).toBe(msg);
  });
});
