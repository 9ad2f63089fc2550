// A session file that cannot be written stops the run at once (no tool runs whose call was not
// recorded), the prompt fails with a message naming the file and the OS error, and no further
// prompt starts. The file keeps everything written before the failure, readable. And secrets
// (the API key in use, given values) never reach the file.
import { mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import type { AgentTool } from '../../src/agent/types.js';
import { scriptedModel } from '../../src/ai/models.js';
import { createScriptedProvider } from '../../src/ai/scripted.js';
import { createAgentSession, type CreateAgentSessionOptions } from '../../src/runtime/create-agent-session.js';
import { probeSandbox } from '../../src/tools/sandbox.js';
import { SessionStore } from '../../src/session/session-store.js';

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

/** An offline session without skills, context files or notices: the options each test varies come on top. */
function offlineSession(options: CreateAgentSessionOptions) {
  return createAgentSession({
    systemPrompt: 'test',
    defaultSkills: false,
    contextFiles: false,
    model: scriptedModel(),
    summaries: 'extractive',
    notify: () => undefined,
    ...options,
  });
}

function counterTool(): AgentTool<z.ZodObject<{ n: z.ZodNumber }>> & { runs: number } {
  const tool = {
    runs: 0,
    name: 'count',
    description: 'Counts',
    parameters: z.object({ n: z.number() }),
    execute: async () => {
      tool.runs++;
      return { content: [{ type: 'text' as const, text: 'counted' }] };
    },
  };
  return tool;
}

async function session(file: string, tool: ReturnType<typeof counterTool>) {
  const notes: string[] = [];
  const s = await offlineSession({
    cwd: tmpdir(),
    store: SessionStore.open(file),
    tools: [],
    customTools: [tool],
    streamFn: createScriptedProvider([
      { tools: [{ name: 'count', args: { n: 1 } }] },
      { tools: [{ name: 'count', args: { n: 2 } }] },
      { text: 'done' },
    ]),
    notify: (m) => notes.push(m),
  });
  return { s, notes };
}

describe('a session file that cannot be written', () => {
  it('stops the run before the unrecorded tool call runs, and names the file and the OS error', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'orch-wfail-'));
    dirs.push(dir);
    const file = join(dir, 's.jsonl');
    const tool = counterTool();
    const { s, notes } = await session(file, tool);
    // The path becomes a folder before the first write: every write fails, even for root.
    mkdirSync(file);
    const err = await s.prompt('count twice').then(
      () => undefined,
      (e: Error) => e,
    );
    expect(err?.message).toContain(file);
    expect(err?.message).toMatch(/EISDIR/);
    expect(tool.runs).toBe(0);
    expect(notes.join('\n')).toMatch(/run was stopped/);
    // Nothing more starts on a session that cannot record it.
    await expect(s.prompt('again')).rejects.toThrow(/cannot go on/);
    await s.dispose();
  });

  it('keeps what was written before the failure, every line readable', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'orch-wfail-'));
    dirs.push(dir);
    const file = join(dir, 's.jsonl');
    const tool = counterTool();
    const { s } = await session(file, tool);
    // Break the file after the first tool call was recorded: swap it for a folder (and drop the
    // open descriptor, which would still write to the removed file).
    let kept = '';
    s.subscribe((e) => {
      if (e.type === 'tool_execution_end' && tool.runs === 1) {
        kept = readFileSync(file, 'utf8');
        rmSync(file);
        mkdirSync(file);
        s.store.storage.close();
      }
    });
    await expect(s.prompt('count twice')).rejects.toThrow(/EISDIR/);
    // Nothing runs after the failure: the second tool call never happens.
    expect(tool.runs).toBe(1);
    const lines = kept
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { type: string; message?: { role: string } });
    expect(lines.filter((l) => l.message?.role === 'assistant')).toHaveLength(1);
    await s.dispose();
  });
});

describe('when a session file is written', () => {
  it('a tool call is in the file before the tool runs, and the last reply when prompt() resolves', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'orch-wpoint-'));
    dirs.push(dir);
    const file = join(dir, 's.jsonl');
    const seenByTool: boolean[] = [];
    const tool = {
      name: 'count',
      description: 'Counts',
      parameters: z.object({ n: z.number() }),
      // Reads the file as a crash at this moment would leave it.
      execute: async (callId: string) => {
        seenByTool.push(readFileSync(file, 'utf8').includes(`"id":"${callId}"`));
        return { content: [{ type: 'text' as const, text: 'counted' }] };
      },
    };
    const { s } = await session(file, Object.assign(tool, { runs: 0 }));
    await s.prompt('count twice');
    const lastReply = readFileSync(file, 'utf8').trim().split('\n').at(-1)!;
    expect(seenByTool).toEqual([true, true]);
    expect(JSON.parse(lastReply)).toMatchObject({
      type: 'message',
      message: { role: 'assistant', content: [{ type: 'text', text: 'done' }] },
    });
    await s.dispose();
  });
});

describe('secrets in a session file', () => {
  it('the API key in use and the given secrets are written as placeholders; the agent still has them', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'orch-wsecret-'));
    dirs.push(dir);
    const file = join(dir, 's.jsonl');
    const s = await offlineSession({
      cwd: dir,
      sessionFile: file,
      tools: [],
      apiKey: 'sk-ant-session-key-123',
      secrets: [{ name: 'TOKEN', value: 'tok_session_456' }],
      streamFn: createScriptedProvider([{ text: 'key sk-ant-session-key-123 and tok_session_456' }]),
    });
    await s.prompt('say tok_session_456');
    expect(s.lastAssistantText()).toBe('key sk-ant-session-key-123 and tok_session_456');
    const text = readFileSync(file, 'utf8');
    expect(text).not.toMatch(/sk-ant-session-key-123|tok_session_456/);
    expect(text).toContain('key [REDACTED:ANTHROPIC_API_KEY] and [REDACTED:TOKEN]');
    await s.dispose();
  });
});

describe('secrets in the full output of a bash command', () => {
  it('the API key and the given secrets are placeholders in the temp file too (the tool writes it outside the session)', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'orch-bsecret-'));
    dirs.push(dir);
    const command = 'for i in $(seq 1 3000); do echo "line $i tok_session_456 sk-ant-session-key-123"; done';
    const s = await offlineSession({
      cwd: dir,
      sessionFile: join(dir, 's.jsonl'),
      tools: ['bash'],
      toolOptions: { bash: { tempDir: dir } },
      apiKey: 'sk-ant-session-key-123',
      secrets: [{ name: 'TOKEN', value: 'tok_session_456' }],
      streamFn: createScriptedProvider([{ tools: [{ name: 'bash', args: { command } }] }, { text: 'done' }]),
    });
    await s.prompt('print it');
    const spills = readdirSync(dir).filter((f) => f.endsWith('.log'));
    expect(spills).toHaveLength(1);
    const full = readFileSync(join(dir, spills[0]!), 'utf8');
    expect(full).not.toMatch(/sk-ant-session-key-123|tok_session_456/);
    expect(full.split('\n')[0]).toBe('line 1 [REDACTED:TOKEN] [REDACTED:ANTHROPIC_API_KEY]');
    await s.dispose();
  });
});

describe('the provider key and the shell', () => {
  it("the model's bash commands never see ANTHROPIC_API_KEY in the sandbox; unconfined only when the bash env sets it", async () => {
    const dir = mkdtempSync(join(tmpdir(), 'orch-bkey-'));
    dirs.push(dir);
    const saved = process.env.ANTHROPIC_API_KEY;
    process.env.ANTHROPIC_API_KEY = 'sk-ant-env-key-789';
    try {
      let n = 0;
      const run = async (env?: Record<string, string>, sandbox: 'workspace' | 'none' = 'workspace') => {
        const s = await offlineSession({
          cwd: dir,
          sessionFile: join(dir, `s-${n++}.jsonl`),
          tools: ['bash'],
          toolOptions: { bash: { ...(env ? { env } : {}), sandbox: { mode: sandbox, warn: () => {} } } },
          streamFn: createScriptedProvider([
            {
              tools: [
                { name: 'bash', args: { command: 'echo "key=[${ANTHROPIC_API_KEY-unset}] home=[${HOME:+set}]"' } },
              ],
            },
            { text: 'done' },
          ]),
        });
        await s.prompt('print it');
        const result = s.messages.find((m) => m.role === 'toolResult');
        await s.dispose();
        return result?.role === 'toolResult'
          ? result.content.map((b) => (b.type === 'text' ? b.text : '')).join('')
          : '';
      };
      expect(await run()).toBe('key=[unset] home=[set]'); // the rest of the environment is there
      expect(await run(undefined, 'none')).toBe('key=[unset] home=[set]');
      // Unconfined, a task's env may pass it on purpose; the sandbox never lets a provider key in.
      expect(await run({ ANTHROPIC_API_KEY: 'sk-ant-given-on-purpose' }, 'none')).toContain(
        'key=[sk-ant-given-on-purpose]',
      );
      if (probeSandbox().ok)
        expect(await run({ ANTHROPIC_API_KEY: 'sk-ant-given-on-purpose' })).toBe('key=[unset] home=[set]');
    } finally {
      if (saved === undefined) delete process.env.ANTHROPIC_API_KEY;
      else process.env.ANTHROPIC_API_KEY = saved;
    }
  });
});
