import { mkdtempSync, mkdirSync, readFileSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import type { AgentTool } from '../../src/agent/types.js';
import { createScriptedProvider } from '../../src/ai/scripted.js';
import { scriptedModel } from '../../src/ai/models.js';
import {
  AgentSessionConfigError,
  createAgentSession,
  defaultSessionDir,
  mostRecentSession,
  textOrFile,
} from '../../src/runtime/create-agent-session.js';

const dirs: string[] = [];
function tempDir(): string {
  const d = mkdtempSync(join(tmpdir(), 'orch-create-'));
  dirs.push(d);
  return d;
}
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

const quiet = { notify: () => {}, defaultSkills: false, contextFiles: false } as const;

describe('createAgentSession configuration errors', () => {
  it('names ANTHROPIC_API_KEY and the scripted provider when no key is set', async () => {
    const saved = process.env.ANTHROPIC_API_KEY;
    delete process.env.ANTHROPIC_API_KEY;
    try {
      const err = await createAgentSession({ ...quiet, cwd: tempDir(), inMemory: true }).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(AgentSessionConfigError);
      expect((err as Error).message).toContain('ANTHROPIC_API_KEY');
      expect((err as Error).message).toContain('--provider scripted --script FILE');
    } finally {
      if (saved !== undefined) process.env.ANTHROPIC_API_KEY = saved;
    }
  });

  it('lists the valid tools for an unknown tool name', async () => {
    await expect(
      createAgentSession({
        ...quiet,
        cwd: tempDir(),
        inMemory: true,
        provider: 'scripted',
        script: [],
        tools: ['read', 'sed'],
      }),
    ).rejects.toThrow('Unknown tool "sed". Valid tools: read, bash, edit, write, grep, find, ls.');
  });

  it('reports an unknown model, a missing script and a missing session to continue', async () => {
    const cwd = tempDir();
    await expect(createAgentSession({ ...quiet, cwd, inMemory: true, apiKey: 'k', model: 'gpt-nope' })).rejects.toThrow(
      /Unknown model "gpt-nope"/,
    );
    await expect(createAgentSession({ ...quiet, cwd, inMemory: true, provider: 'scripted' })).rejects.toThrow(
      /needs a script/,
    );
    await expect(
      createAgentSession({
        ...quiet,
        cwd,
        provider: 'scripted',
        script: [],
        sessionFile: 'gone.jsonl',
        continue: true,
      }),
    ).rejects.toThrow(/session file .*gone\.jsonl does not exist/);
    await expect(
      createAgentSession({
        ...quiet,
        cwd,
        provider: 'scripted',
        script: [],
        sessionDir: join(cwd, 'none'),
        continue: true,
      }),
    ).rejects.toThrow(/no session in/);
  });

  it('a bad script file is a config error with file:line:col', async () => {
    const cwd = tempDir();
    writeFileSync(join(cwd, 's.yaml'), '- txt: hello\n');
    await expect(
      createAgentSession({ ...quiet, cwd, inMemory: true, provider: 'scripted', script: 's.yaml' }),
    ).rejects.toThrow(/s\.yaml:1:3/);
  });
});

describe('createAgentSession storage', () => {
  it('continue reopens the most recent session of the folder with its model and history', async () => {
    const cwd = tempDir();
    const sessionDir = join(cwd, 'sessions');
    const first = await createAgentSession({
      ...quiet,
      cwd,
      sessionDir,
      provider: 'scripted',
      model: 'claude-haiku-4-5',
      script: [{ text: 'first reply' }, { text: 'second reply' }],
      thinkingLevel: 'low',
    });
    await first.prompt('hello');
    await first.dispose();
    expect(mostRecentSession(sessionDir)).toBe(first.sessionFile);

    const provider = createScriptedProvider([{ text: 'first reply' }, { text: 'second reply' }]);
    // defaultModel (ORCHESTRATE_MODEL in the CLI) does not override the continued session's model.
    const again = await createAgentSession({
      ...quiet,
      cwd,
      sessionDir,
      continue: true,
      streamFn: provider,
      provider: 'scripted',
      defaultModel: 'claude-opus-4-6',
    });
    expect(again.sessionFile).toBe(first.sessionFile);
    expect(again.model.id).toBe('claude-haiku-4-5');
    expect(again.thinkingLevel).toBe('low');
    await again.prompt('and again');
    expect(again.lastAssistantText()).toBe('second reply');
    const sent = provider.calls[0]!.messages.map((m) => m.role);
    expect(sent).toEqual(['user', 'assistant', 'user']);
    await again.dispose();
    // One header, entries of both runs, no model change appended on reopen.
    const lines = readFileSync(first.sessionFile!, 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { type: string });
    expect(lines.filter((l) => l.type === 'session')).toHaveLength(1);
    expect(lines.filter((l) => l.type === 'model_change')).toHaveLength(1);
    expect(lines.filter((l) => l.type === 'message')).toHaveLength(4);
  });

  it('picks the newest file by modification time', () => {
    const dir = tempDir();
    writeFileSync(join(dir, 'a.jsonl'), '');
    writeFileSync(join(dir, 'b.jsonl'), '');
    writeFileSync(join(dir, 'c.txt'), '');
    utimesSync(join(dir, 'a.jsonl'), new Date(), new Date(Date.now() + 10_000));
    expect(mostRecentSession(dir)).toBe(join(dir, 'a.jsonl'));
  });

  it('a new session uses defaultModel when no model is given', async () => {
    const s = await createAgentSession({
      ...quiet,
      cwd: tempDir(),
      inMemory: true,
      provider: 'scripted',
      script: [],
      defaultModel: 'claude-opus-4-6',
    });
    expect(s.model.id).toBe('claude-opus-4-6');
  });

  it('new sessions go to <home>/sessions/--<cwd>--', async () => {
    const home = tempDir();
    const cwd = join(home, 'project');
    mkdirSync(cwd);
    const s = await createAgentSession({ ...quiet, cwd, home, provider: 'scripted', script: [{ text: 'hi' }] });
    await s.prompt('x');
    expect(s.sessionFile!.startsWith(defaultSessionDir(cwd, home))).toBe(true);
    expect(defaultSessionDir('/a/b', '/h')).toBe('/h/sessions/--a-b--');
    await s.dispose();
  });
});

describe('createAgentSession prompt and tools', () => {
  it('runs a custom zod tool with hooks from the SDK options', async () => {
    const calls: string[] = [];
    const add: AgentTool<z.ZodObject<{ a: z.ZodNumber; b: z.ZodNumber }>, { sum: number }> = {
      name: 'add',
      description: 'Adds two numbers',
      parameters: z.object({ a: z.number(), b: z.number() }),
      execute: async (_id, p) => ({
        content: [{ type: 'text', text: String(p.a + p.b) }],
        details: { sum: p.a + p.b },
      }),
    };
    const provider = createScriptedProvider([
      { tools: [{ name: 'add', args: { a: '2', b: 3 } }] },
      { text: 'The sum is 5.' },
    ]);
    const s = await createAgentSession({
      ...quiet,
      cwd: tempDir(),
      inMemory: true,
      model: scriptedModel(),
      streamFn: provider,
      tools: [],
      customTools: [add],
      hooks: {
        beforeToolCall: (ctx) => void calls.push(`before ${ctx.toolCall.name}`),
        afterToolCall: (ctx) => void calls.push(`after ${JSON.stringify(ctx.result.details)}`),
        onEvent: (e) => void (e.type === 'agent_end' && calls.push('end')),
      },
    });
    await s.prompt('add 2 and 3');
    expect(s.lastAssistantText()).toBe('The sum is 5.');
    expect(calls).toEqual(['before add', 'after {"sum":5}', 'end']);
    expect(provider.calls[0]!.tools!.map((t) => t.name)).toEqual(['add']);
  });

  it('builds the system prompt from skills and context files, and expands /skill: prompts', async () => {
    const cwd = tempDir();
    writeFileSync(join(cwd, 'AGENTS.md'), 'Always run the linter.\n');
    const skills = join(cwd, 'skills', 'deploy');
    mkdirSync(skills, { recursive: true });
    writeFileSync(
      join(skills, 'SKILL.md'),
      '---\nname: deploy\ndescription: How to deploy the app\n---\nRun make deploy.\n',
    );
    const provider = createScriptedProvider([{ text: 'ok' }]);
    const s = await createAgentSession({
      notify: () => {},
      cwd,
      inMemory: true,
      model: scriptedModel(),
      streamFn: provider,
      skillsDirs: ['skills'],
      tools: ['read'],
      home: join(cwd, 'home'),
    });
    expect(s.systemPrompt).toContain('Always run the linter.');
    expect(s.systemPrompt).toContain('<name>deploy</name>');
    await s.prompt('/skill:deploy now');
    const sent = provider.calls[0]!.messages[0]!;
    expect(JSON.stringify(sent)).toContain('Run make deploy.');
    expect(JSON.stringify(sent)).toContain('now');
  });

  it('textOrFile reads a file when the value names one', () => {
    const cwd = tempDir();
    writeFileSync(join(cwd, 'sys.md'), 'from file');
    expect(textOrFile('sys.md', cwd)).toBe('from file');
    expect(textOrFile('You are terse.', cwd)).toBe('You are terse.');
  });
});
