import { PassThrough } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { scriptedModel } from '../../../src/ai/models.js';
import { createScriptedProvider, type ScriptedTurn } from '../../../src/ai/scripted.js';
import { createAgentSession } from '../../../src/runtime/create-agent-session.js';
import { readJsonLines } from '../../../src/runtime/modes/jsonl.js';
import { RPC_COMMAND_TYPES, runRpcMode, salvageIdAndType } from '../../../src/runtime/modes/rpc.js';

type Line = Record<string, unknown>;

/** RPC mode in process, with the input under the test's control. */
async function start(turns: ScriptedTurn[]) {
  const session = await createAgentSession({
    cwd: process.cwd(),
    inMemory: true,
    tools: [],
    systemPrompt: 'test',
    defaultSkills: false,
    contextFiles: false,
    model: scriptedModel(),
    streamFn: createScriptedProvider(turns),
    notify: () => {},
  });
  const input = new PassThrough();
  const out: Line[] = [];
  const waiters: { test: (l: Line) => boolean; resolve: () => void }[] = [];
  const done = runRpcMode(session, input, {
    stdout: (t) => {
      for (const l of t.split('\n')) {
        if (!l) continue;
        const line = JSON.parse(l) as Line;
        out.push(line);
        for (const w of waiters.splice(0))
          if (w.test(line)) w.resolve();
          else waiters.push(w);
      }
    },
    stderr: () => {},
  });
  const waitFor = (test: (l: Line) => boolean): Promise<void> =>
    out.some(test) ? Promise.resolve() : new Promise((resolve) => waiters.push({ test, resolve }));
  return { input, out, done, waitFor };
}

/** Feeds `lines` to RPC mode, closes the input and returns everything it wrote. */
async function rpc(turns: ScriptedTurn[], lines: string[]): Promise<Line[]> {
  const r = await start(turns);
  for (const l of lines) r.input.write(`${l}\n`);
  r.input.end();
  expect(await r.done).toBe(0);
  return r.out;
}

const responses = (out: Line[]): Line[] => out.filter((l) => l.type === 'response');

describe('RPC mode', () => {
  it('answers prompt at once, then streams the run; every response carries its id', async () => {
    const out = await rpc([{ text: 'hello' }], ['{"id":"p1","type":"prompt","message":"hi"}']);
    expect(out[0]).toEqual({ id: 'p1', type: 'response', command: 'prompt', success: true });
    const types = out.map((l) => l.type);
    expect(types.indexOf('agent_start')).toBeGreaterThan(0);
    expect(types[types.length - 1]).toBe('agent_end');
  });

  it('keeps serving after malformed lines and reports them with the id it could read', async () => {
    const out = await rpc(
      [],
      ['{"id":"a1","type":"get_state"', 'not json at all', '[1,2]', '{"id":7,"type":"get_state"}'],
    );
    const r = responses(out);
    expect(r[0]).toMatchObject({ id: 'a1', command: 'get_state', success: false });
    expect(String(r[0]!.error)).toMatch(/^Malformed command: /);
    expect(r[1]).toMatchObject({ command: 'parse', success: false });
    expect(r[1]).not.toHaveProperty('id');
    expect(r[2]).toMatchObject({ command: 'parse', success: false });
    expect(r[3]).toMatchObject({
      id: 7,
      command: 'get_state',
      success: true,
      data: { isStreaming: false, messageCount: 0 },
    });
  });

  it('names the valid commands for an unknown one, and validates fields', async () => {
    const out = await rpc(
      [],
      [
        '{"id":"u","type":"explode"}',
        '{"id":"v","type":"steer"}',
        '{"id":"w","type":"set_thinking_level","level":"max"}',
      ],
    );
    const r = responses(out);
    expect(r[0]).toMatchObject({ id: 'u', command: 'explode', success: false });
    expect(String(r[0]!.error)).toBe(`Unknown command "explode". Valid commands: ${RPC_COMMAND_TYPES.join(', ')}.`);
    expect(r[1]).toMatchObject({ id: 'v', command: 'steer', success: false });
    expect(String(r[1]!.error)).toContain('needs "message"');
    expect(r[2]).toMatchObject({ id: 'w', success: false });
  });

  it('names of Object.prototype members are unknown commands, not a crash', async () => {
    const out = await rpc(
      [],
      [
        '{"id":"a","type":"__proto__"}',
        '{"id":"b","type":"constructor"}',
        '{"id":"c","type":"toString"}',
        '{"id":"d","type":"get_state"}',
      ],
    );
    const r = responses(out);
    expect(r.map((x) => [x.id, x.success])).toEqual([
      ['a', false],
      ['b', false],
      ['c', false],
      ['d', true],
    ]);
    expect(String(r[1]!.error)).toMatch(/^Unknown command "constructor"/);
  });

  it('a failed run is a second response with the prompt id', async () => {
    const out = await rpc([{ error: '400 invalid_request_error: bad' }], ['{"id":"p","type":"prompt","message":"hi"}']);
    const r = responses(out);
    expect(r).toEqual([
      { id: 'p', type: 'response', command: 'prompt', success: true },
      { id: 'p', type: 'response', command: 'prompt', success: false, error: '400 invalid_request_error: bad' },
    ]);
  });

  it('a prompt while running without streamingBehavior is refused with its id', async () => {
    const out = await rpc(
      [{ text: 'slow', delayMs: 50 }, { text: 'second' }],
      [
        '{"id":"1","type":"prompt","message":"a"}',
        '{"id":"2","type":"prompt","message":"b"}',
        '{"id":"3","type":"prompt","message":"c","streamingBehavior":"followUp"}',
      ],
    );
    const r = responses(out);
    expect(r.find((x) => x.id === '2')).toMatchObject({ success: false });
    expect(r.find((x) => x.id === '3')).toMatchObject({ success: true });
    expect(out.filter((l) => l.type === 'agent_end')).toHaveLength(1);
    const lastEnd = out.filter((l) => l.type === 'message_end').pop() as { message: { content: { text: string }[] } };
    expect(lastEnd.message.content[0]!.text).toBe('second');
  });

  it('abort stops a slow run and answers', async () => {
    const r = await start([{ text: 'slow', delayMs: 5000 }]);
    r.input.write('{"id":"1","type":"prompt","message":"a"}\n');
    await r.waitFor((l) => l.type === 'agent_start');
    r.input.write('{"id":"x","type":"abort"}\n');
    await r.waitFor((l) => l.id === 'x');
    r.input.end();
    expect(await r.done).toBe(0);
    expect(responses(r.out).find((l) => l.id === 'x')).toMatchObject({ success: true, command: 'abort' });
    const end = r.out.find((l) => l.type === 'agent_end') as { messages: { stopReason?: string }[] };
    expect(end.messages[end.messages.length - 1]!.stopReason).toBe('aborted');
  });
});

describe('strict JSON lines', () => {
  it('does not split records on U+2028 / U+2029, strips CR, and joins records split across chunks', async () => {
    const input = new PassThrough();
    const got: string[] = [];
    const done = readJsonLines(input, (l) => got.push(l));
    input.write('{"a":"x\u2028y\u2029z"}\r\n{"b":');
    input.write('1}\n\n{"c":2}');
    input.end();
    await done;
    expect(got).toEqual(['{"a":"x\u2028y\u2029z"}', '{"b":1}', '{"c":2}']);
  });

  it('skips a line longer than the limit and reports it', async () => {
    const input = new PassThrough();
    const got: string[] = [];
    const over: number[] = [];
    const done = readJsonLines(input, (l) => got.push(l), { maxBytes: 10, onOversize: (n) => over.push(n) });
    input.write('{"a":"0123456789"}\n{"b":1}\n');
    input.end();
    await done;
    expect(got).toEqual(['{"b":1}']);
    expect(over).toHaveLength(1);
  });

  it('salvages id and type from a broken line', () => {
    expect(salvageIdAndType('{"id": "q-1", "type": "get_state", oops}')).toEqual({ id: 'q-1', type: 'get_state' });
    expect(salvageIdAndType('{"id": 12, "type"')).toEqual({ id: 12 });
  });
});
