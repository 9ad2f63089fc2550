// An AgentSession on the scripted model with the real bash/edit/write/read tools and command hooks
// run as real processes in the command sandbox (bubblewrap), for the hook tests of
// test/runtime/ and test/security/. Temp folders are removed by cleanupHookDirs().
import { mkdtempSync, realpathSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { scriptedModel } from '../../../src/ai/models.js';
import { createScriptedProvider, type ScriptedTurn } from '../../../src/ai/scripted.js';
import type { Context } from '../../../src/ai/types.js';
import type { AgentSession } from '../../../src/runtime/agent-session.js';
import { parseHooksConfig } from '../../../src/runtime/command-hooks.js';
import { createAgentSession } from '../../../src/runtime/create-agent-session.js';
import type { HookRunEvent } from '../../../src/runtime/hook-session.js';
import type { AgentSessionEvent } from '../../../src/runtime/session-events.js';

const dirs: string[] = [];
export function tempDir(): string {
  const d = realpathSync(mkdtempSync(join(tmpdir(), 'orch-hooks-')));
  dirs.push(d);
  return d;
}
export function cleanupHookDirs(): void {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
}

export interface Harness {
  session: AgentSession;
  cwd: string;
  hookRuns: HookRunEvent[];
  calls: Context[];
  notices: string[];
}

export async function harness(turns: ScriptedTurn[], hooks: unknown, cwd = tempDir()): Promise<Harness> {
  const provider = createScriptedProvider(turns);
  const notices: string[] = [];
  const session = await createAgentSession({
    cwd,
    inMemory: true,
    tools: ['bash', 'edit', 'write', 'read'],
    systemPrompt: 'You are a test agent.',
    defaultSkills: false,
    contextFiles: false,
    model: scriptedModel(),
    streamFn: provider,
    summaries: 'extractive',
    notify: (m) => notices.push(m),
    toolOptions: { bash: { sandbox: { mode: 'workspace' } } },
    commandHooks: parseHooksConfig(hooks, 'test settings'),
  });
  const hookRuns: HookRunEvent[] = [];
  session.subscribe((e: AgentSessionEvent) => {
    if (e.type === 'hook_run') hookRuns.push(e);
  });
  return { session, cwd, hookRuns, calls: provider.calls, notices };
}

export function toolResultTexts(ctx: Context): string[] {
  return ctx.messages
    .filter((m) => m.role === 'toolResult')
    .map((m) => m.content.map((b) => (b.type === 'text' ? b.text : '')).join(''));
}

export function userTexts(ctx: Context): string[] {
  return ctx.messages
    .filter((m) => m.role === 'user')
    .map((m) =>
      typeof m.content === 'string' ? m.content : m.content.map((b) => (b.type === 'text' ? b.text : '')).join('\n'),
    );
}
