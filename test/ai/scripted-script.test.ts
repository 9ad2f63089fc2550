import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { scriptedModel } from '../../src/ai/models.js';
import { createScriptedProvider } from '../../src/ai/scripted.js';
import {
  loadScriptFile,
  parseScript,
  ScriptFileError,
  scriptedProviderFromFile,
} from '../../src/ai/scripted-script.js';
import type { AssistantMessage } from '../../src/ai/types.js';

const dir = mkdtempSync(join(tmpdir(), 'scripted-script-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function file(name: string, text: string): string {
  const p = join(dir, name);
  writeFileSync(p, text);
  return p;
}

function problemsOf(fn: () => unknown): string {
  try {
    fn();
  } catch (err) {
    expect(err).toBeInstanceOf(ScriptFileError);
    return (err as Error).message;
  }
  throw new Error('expected a ScriptFileError');
}

const textOf = (m: AssistantMessage): string => m.content.map((c) => (c.type === 'text' ? c.text : '')).join('');

describe('script files', () => {
  it('loads a YAML list of turns with thinking, tools, errors and delays', () => {
    const script = loadScriptFile(
      file(
        'list.yaml',
        `
- thinking: "consider"
  text: "Let me edit."
  tools:
    - { name: edit, args: { path: a.txt, edits: [{ oldText: x, newText: y }] } }
- error: "overloaded_error: Overloaded"
- delay_ms: 5
  text: "final answer"
  stop_reason: length
`,
      ),
    );
    expect(script.turns).toEqual([
      {
        thinking: 'consider',
        text: 'Let me edit.',
        tools: [{ name: 'edit', args: { path: 'a.txt', edits: [{ oldText: 'x', newText: 'y' }] }, id: undefined }],
        delayMs: undefined,
        stopReason: undefined,
      },
      {
        text: undefined,
        thinking: undefined,
        tools: undefined,
        delayMs: undefined,
        error: 'overloaded_error: Overloaded',
        stopReason: 'error',
        afterBlocks: undefined,
      },
      { text: 'final answer', thinking: undefined, tools: undefined, delayMs: 5, stopReason: 'length' },
    ]);
  });

  it('loads JSON with conversations and drives a provider end to end', async () => {
    const path = file(
      'convs.json',
      JSON.stringify({
        turns: [{ text: 'default reply' }],
        conversations: [{ match: 'rename (\\w+)', flags: 'i', turns: [{ text: 'renaming {{match.1}}' }] }],
      }),
    );
    const provider = scriptedProviderFromFile(path, { chunkSize: 4 });
    const hit = await provider(scriptedModel(), {
      messages: [{ role: 'user', content: 'Rename logger please', timestamp: 1 }],
    }).result();
    const miss = await provider(scriptedModel(), {
      messages: [{ role: 'user', content: 'hello', timestamp: 1 }],
    }).result();
    expect(textOf(hit)).toBe('renaming logger');
    expect(textOf(miss)).toBe('default reply');
  });

  it('stream_delay_ms writes a reply slowly: each chunk waits that long', async () => {
    const script = parseScript('- stream_delay_ms: 30\n  text: "abcdefgh"\n', 'slow.yaml');
    expect(script.turns).toEqual([
      {
        text: 'abcdefgh',
        thinking: undefined,
        tools: undefined,
        delayMs: undefined,
        chunkDelayMs: 30,
        stopReason: undefined,
      },
    ]);
    const provider = createScriptedProvider(script, { chunkSize: 2 });
    const started = Date.now();
    const deltas: string[] = [];
    for await (const e of provider(scriptedModel(), { messages: [{ role: 'user', content: 'hi', timestamp: 1 }] })) {
      if (e.type === 'text_delta') deltas.push(e.delta);
    }
    expect(deltas).toEqual(['ab', 'cd', 'ef', 'gh']);
    // Four waits of 30 ms (a timer may fire up to 1 ms early).
    expect(Date.now() - started).toBeGreaterThanOrEqual(4 * 29);
  });

  it('an error turn from a file fires once, then the next turn answers', async () => {
    const provider = createScriptedProvider(
      parseScript('- error: "rate_limit_error: slow down"\n- text: ok\n', 'inline.yaml'),
    );
    const ctx = { messages: [{ role: 'user' as const, content: 'hi', timestamp: 1 }] };
    expect((await provider(scriptedModel(), ctx).result()).errorMessage).toBe('rate_limit_error: slow down');
    expect(textOf(await provider(scriptedModel(), ctx).result())).toBe('ok');
  });

  it('reports an unknown key with the file path, line:col and the turn index', () => {
    const path = file('bad-key.yaml', '- text: fine\n- txt: typo\n');
    const msg = problemsOf(() => loadScriptFile(path));
    expect(msg).toContain(`${path}:2:3: turn 1: unknown key "txt"`);
  });

  it('reports problems inside a conversation turn with the conversation and turn numbers', () => {
    const path = file(
      'bad-conv.yaml',
      `conversations:
  - match: "ok"
    turns:
      - text: fine
      - tools:
          - { args: { a: 1 } }
`,
    );
    const msg = problemsOf(() => loadScriptFile(path));
    expect(msg).toMatch(
      new RegExp(
        `${path.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}:6:\\d+: conversations\\[0\\] turn 1: tools\\[0\\]\\.name: `,
      ),
    );
  });

  it('rejects an empty turn, a bad regex and an error stop reason without error text', () => {
    const msg = problemsOf(() =>
      parseScript(
        `turns:
  - {}
  - text: x
    stop_reason: error
conversations:
  - match: "(unclosed"
    turns: [{ text: y }]
`,
        'mixed.yaml',
      ),
    );
    expect(msg).toContain('mixed.yaml:2:5: turn 0: a turn needs at least one of text, thinking, tools or error');
    expect(msg).toMatch(/mixed\.yaml:4:\d+: turn 1: stop_reason: stop_reason "error" needs an error text/);
    expect(msg).toMatch(/mixed\.yaml:6:\d+: conversations\[0\]: match: invalid regular expression/);
  });

  it('reports YAML syntax errors, an empty file and a missing file clearly', () => {
    expect(problemsOf(() => parseScript('- text: [unclosed\n', 's.yaml'))).toMatch(/s\.yaml:\d+:\d+: /);
    expect(problemsOf(() => parseScript('', 'empty.yaml'))).toMatch(/empty\.yaml: the script is empty/);
    const missing = join(dir, 'nope.yaml');
    expect(problemsOf(() => loadScriptFile(missing))).toContain(`${missing}: cannot read the script file`);
  });
});
