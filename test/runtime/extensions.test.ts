import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import type { ToolResultMessage } from '../../src/ai/types.js';
import { scriptedModel } from '../../src/ai/models.js';
import { createScriptedProvider, type ScriptedTurn } from '../../src/ai/scripted.js';
import {
  AgentSessionConfigError,
  createAgentSession,
  type CreateAgentSessionOptions,
} from '../../src/runtime/create-agent-session.js';
import { loadExtensions, type ExtensionAPI } from '../../src/runtime/extensions.js';
import type { AgentSessionEvent } from '../../src/runtime/session-events.js';

const PROTECTED = resolve(import.meta.dirname, '../../recipes/extensions/protected-paths.ts');
const dirs: string[] = [];
function tempDir(): string {
  const d = mkdtempSync(join(tmpdir(), 'orch-ext-'));
  dirs.push(d);
  return d;
}
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

function session(cwd: string, turns: ScriptedTurn[], options: CreateAgentSessionOptions) {
  return createAgentSession({
    cwd,
    inMemory: true,
    systemPrompt: 'test',
    defaultSkills: false,
    contextFiles: false,
    model: scriptedModel(),
    streamFn: createScriptedProvider(turns),
    notify: () => {},
    ...options,
  });
}

function toolResults(messages: readonly { role: string }[]): ToolResultMessage[] {
  return messages.filter((m): m is ToolResultMessage => m.role === 'toolResult');
}
const resultText = (r: ToolResultMessage): string => r.content.map((b) => (b.type === 'text' ? b.text : '')).join('');

describe('protected-paths example extension', () => {
  it('blocks write and edit on protected files and lets others through', async () => {
    const cwd = tempDir();
    writeFileSync(join(cwd, 'yarn.lock'), 'original\n');
    const s = await session(
      cwd,
      [
        {
          tools: [
            { name: 'write', args: { path: '.env', content: 'SECRET=1\n' } },
            { name: 'edit', args: { path: 'yarn.lock', edits: [{ oldText: 'original', newText: 'changed' }] } },
            { name: 'write', args: { path: 'notes.txt', content: 'fine\n' } },
          ],
        },
        { text: 'done' },
      ],
      { tools: ['read', 'edit', 'write'], extensions: [PROTECTED] },
    );
    await s.prompt('change things');
    const results = toolResults(s.messages);
    expect(results.map((r) => r.isError)).toEqual([true, true, false]);
    expect(resultText(results[0]!)).toContain('".env" is a protected file (it matches ".env")');
    expect(resultText(results[1]!)).toContain('matches "*.lock"');
    expect(existsSync(join(cwd, '.env'))).toBe(false);
    expect(readFileSync(join(cwd, 'yarn.lock'), 'utf8')).toBe('original\n');
    expect(readFileSync(join(cwd, 'notes.txt'), 'utf8')).toBe('fine\n');
  });

  it('takes its patterns from options and offers a /protected command', async () => {
    const cwd = tempDir();
    const notices: string[] = [];
    const s = await session(
      cwd,
      [{ tools: [{ name: 'write', args: { path: 'sub/a.key2', content: 'x' } }] }, { text: 'ok' }],
      {
        tools: ['write'],
        extensions: [{ path: PROTECTED, options: { patterns: ['sub/**'] } }],
        notify: (m) => notices.push(m),
      },
    );
    await s.prompt('/protected');
    expect(notices).toEqual(['Protected paths: sub/**']);
    expect(s.messages).toEqual([]); // a command is not a prompt
    await s.prompt('write it');
    expect(toolResults(s.messages)[0]!.isError).toBe(true);
  });
});

describe('extension API', () => {
  it('registers tools, hooks and event handlers from a .mjs module', async () => {
    const cwd = tempDir();
    const file = join(cwd, 'ext.mjs');
    writeFileSync(
      file,
      `import { z } from 'zod';
export default function (api) {
  globalThis.__extEvents = [];
  api.registerTool({ name: 'shout', description: 'upper-cases', parameters: z.object({ text: z.string() }),
    execute: async (_id, p) => ({ content: [{ type: 'text', text: p.text.toUpperCase() }] }) });
  api.on('after_tool_call', (e) => ({ content: [{ type: 'text', text: e.result.content[0].text + '!' }] }));
  api.on('event', async (e) => { await new Promise((r) => setTimeout(r, 1)); globalThis.__extEvents.push(e.type); });
}
`,
    );
    // zod must resolve from the temp folder: point the module at the repo's copy.
    writeFileSync(
      file,
      readFileSync(file, 'utf8').replace(
        "from 'zod'",
        `from '${resolve(import.meta.dirname, '../../node_modules/zod/index.js')}'`,
      ),
    );
    const s = await session(cwd, [{ tools: [{ name: 'shout', args: { text: 'hi' } }] }, { text: 'done' }], {
      tools: ['shout'],
      extensions: [file],
      systemPrompt: undefined,
    });
    expect(s.tools.map((t) => t.name)).toEqual(['shout']);
    expect(s.systemPrompt).toContain('shout');
    await s.prompt('go');
    expect(resultText(toolResults(s.messages)[0]!)).toBe('HI!');
    // Slow async handlers still saw every event, in order, before prompt() resolved.
    const seen = (globalThis as { __extEvents?: string[] }).__extEvents!;
    expect(seen[0]).toBe('agent_start');
    expect(seen[seen.length - 1]).toBe('agent_end');
    expect(seen.filter((t) => t === 'tool_execution_end')).toHaveLength(1);
  });

  it('an in-process factory can veto compaction; a throwing event handler is reported, not fatal', async () => {
    const events: AgentSessionEvent[] = [];
    const factory = (api: ExtensionAPI): void => {
      api.on('before_compact', () => ({ cancel: true, reason: 'not now' }));
      api.on('event', (e) => {
        if (e.type === 'agent_end') throw new Error('handler bug');
      });
    };
    const s = await session(tempDir(), [{ text: 'a'.repeat(300) }, { text: 'b' }], {
      tools: [],
      extensions: [{ factory, name: 'veto' }],
      compaction: { keepRecentTokens: 10 },
    });
    s.subscribe((e) => events.push(e));
    await s.prompt('one');
    await s.prompt('two');
    await expect(s.compact()).rejects.toThrow('not now');
    expect(events.find((e) => e.type === 'extension_error')).toMatchObject({
      extensionPath: 'veto',
      event: 'event',
      error: 'handler bug',
    });
  });

  it('reports a missing module and a module without a default export as config errors', async () => {
    const cwd = tempDir();
    await expect(session(cwd, [], { extensions: ['nope.mjs'] })).rejects.toThrow(AgentSessionConfigError);
    await expect(session(cwd, [], { extensions: ['nope.mjs'] })).rejects.toThrow(/nope\.mjs: the file does not exist/);
    // An import the extension cannot resolve is named as such, not as a missing extension file.
    writeFileSync(join(cwd, 'needs-pkg.mjs'), "import 'orchestrate-no-such-package';\nexport default () => {};\n");
    const err = await session(cwd, [], { extensions: ['needs-pkg.mjs'] }).then(
      () => undefined,
      (e: Error) => e,
    );
    expect(err?.message).toMatch(
      /needs-pkg\.mjs: Cannot find package 'orchestrate-no-such-package' imported from .*needs-pkg\.mjs \(install it where the extension can resolve it/,
    );
    expect(err?.message).not.toContain('does not exist');
    writeFileSync(join(cwd, 'bad.mjs'), 'export const x = 1;\n');
    await expect(loadExtensions(['bad.mjs'], cwd)).rejects.toThrow(/no default export function/);
  });

  it('a throwing before_tool_call handler blocks the call with its error', async () => {
    const factory = (api: ExtensionAPI): void => {
      api.on('before_tool_call', () => {
        throw new Error('policy service down');
      });
      api.registerTool({
        name: 'noop',
        description: 'nothing',
        parameters: z.object({}),
        execute: async () => ({ content: [{ type: 'text', text: 'ran' }] }),
      });
    };
    const s = await session(tempDir(), [{ tools: [{ name: 'noop' }] }, { text: 'ok' }], {
      tools: ['noop'],
      extensions: [{ factory }],
    });
    await s.prompt('go');
    const r = toolResults(s.messages)[0]!;
    expect(r.isError).toBe(true);
    expect(resultText(r)).toContain('policy service down');
  });
});
