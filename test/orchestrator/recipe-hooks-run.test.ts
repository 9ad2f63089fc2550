// Command hooks in orchestrated runs, offline (scripted model) on real worker threads: the
// recipe's hooks:, an agent file's hooks: (Claude Code frontmatter) and the user's settings file
// reach every instance; a repository's own .claude/settings.json runs only with
// trust_repo_config: true; SubagentStop fires when an instance's agent is done with Claude
// Code's stdin fields; every hook run is in run.jsonl and in report.html.
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { buildHtmlReport } from '../../src/display/html-report.js';
import { loadRunFolder } from '../../src/display/run-folder.js';
import { runRecipeFile } from '../../src/orchestrator/run-recipe.js';
import type { RunEvent } from '../../src/run/run-events.js';
import { cleanupTempDirs, events, ofType, tempProject } from './helpers/run-fixtures.js';

afterAll(() => cleanupTempDirs());

type HookRun = { key: string; hookEvent: string; outcome: string; command: string; message?: string };
function hookRuns(log: RunEvent[]): HookRun[] {
  return ofType(log, 'agent_event')
    .filter((e) => e.event.type === 'hook_run')
    .map((e) => ({ key: e.key, ...(e.event as unknown as Omit<HookRun, 'key'>) }));
}

const settings = (hooks: unknown) => JSON.stringify({ hooks });

/**
 * Runs recipe.yaml of a temp project made of `files`, offline, with the user's Claude settings in
 * <project>/claude-home (CLAUDE_CONFIG_DIR) and an orchestrate home of its own.
 */
async function runWithHooks(files: Record<string, string>) {
  const dir = tempProject(files);
  const r = await runRecipeFile(
    join(dir, 'recipe.yaml'),
    {
      cwd: dir,
      env: {
        ...process.env,
        ANTHROPIC_API_KEY: '',
        CLAUDE_CONFIG_DIR: join(dir, 'claude-home'),
        ORCHESTRATE_HOME: join(dir, 'orchestrate-home'),
      },
    },
    { runsDir: join(dir, 'runs') },
  );
  if (!r.ok) throw new Error(JSON.stringify(r));
  return { dir, outcome: r.outcome };
}
const BLOCK_RM = `grep -q 'rm -rf' && { echo 'rm -rf is not allowed in this project' >&2; exit 2; }; exit 0`;

describe('command hooks in a recipe run', () => {
  it('recipe, agent-file and user hooks run in every instance; a repository hook only with trust_repo_config; SubagentStop gets its fields', async () => {
    const { dir, outcome } = await runWithHooks({
      // The user's side (CLAUDE_CONFIG_DIR): a PostToolUse hook that leaves a mark in the workspace.
      'claude-home/settings.json': settings({
        PostToolUse: [{ matcher: 'Bash', hooks: [{ type: 'command', command: 'echo user >> user-hook.log' }] }],
      }),
      // Two repositories whose own settings would block every tool call.
      'trusted/.claude/settings.json': settings({
        PreToolUse: [{ hooks: [{ type: 'command', command: "echo 'repo hook ran' >&2; exit 2" }] }],
      }),
      'trusted/keep/file.txt': 'keep me\n',
      'foreign/.claude/settings.json': settings({
        PreToolUse: [{ hooks: [{ type: 'command', command: "echo 'repo hook ran' >&2; exit 2" }] }],
      }),
      'foreign/keep/file.txt': 'keep me\n',
      '.claude/agents/cleaner.md': `---
name: cleaner
description: Cleans up build output. Use when: the build folder grows.
tools: Bash, Read, Write, TaskList
disallowedTools: Write
maxTurns: 6
hooks:
  SubagentStop:
    - hooks:
        - type: command
          command: cat > subagent-stop.json
---

You clean up build output and nothing else.
`,
      'recipe.yaml': `name: hooks
provider: scripted
script: script.yaml
hooks:
  PreToolUse:
    - matcher: Bash
      hooks:
        - type: command
          command: "${BLOCK_RM}"
          timeout: 20
agents:
  cleaner: { system_file: .claude/agents/cleaner.md }
tasks:
  - id: foreign
    agent: cleaner
    cwd: foreign
    prompt: Clean up the build output.
  - id: trusted
    agent: cleaner
    cwd: trusted
    trust_repo_config: true
    prompt: Clean up the build output.
`,
      'script.yaml': `turns:
  - tools: [{ name: bash, args: { command: "rm -rf keep" } }]
  - text: I was not allowed to remove keep/, so I left it.
`,
    });
    expect(outcome.status).toBe('succeeded');
    const log = events(outcome.dir);
    const runs = hookRuns(log);

    // The recipe's PreToolUse hook blocked rm -rf in both repositories: the files survive and the
    // model read the reason.
    for (const repo of ['foreign', 'trusted'])
      expect(readFileSync(join(dir, repo, 'keep/file.txt'), 'utf8')).toBe('keep me\n');
    const bashResults = ofType(log, 'agent_event').filter(
      (e) => e.event.type === 'tool_execution_end' && e.event.toolName === 'bash',
    );
    expect(bashResults).toHaveLength(2);
    for (const b of bashResults) expect(JSON.stringify(b.event)).toContain('rm -rf is not allowed in this project');

    // The foreign repository's own hook never ran; the trusted one's did (after the recipe's).
    const repoHook = runs.filter((h) => h.message === 'repo hook ran');
    expect(repoHook.map((h) => h.key)).toEqual(['trusted']);
    expect(runs.filter((h) => h.key === 'foreign' && h.hookEvent === 'PreToolUse')).toHaveLength(1);

    // A blocked call never ran, so the user's PostToolUse hook did not run after it (as in Claude Code).
    expect(runs.filter((h) => h.hookEvent === 'PostToolUse')).toHaveLength(0);

    // SubagentStop from the agent file, with Claude Code's fields on stdin, in each workspace.
    for (const repo of ['foreign', 'trusted']) {
      const input = JSON.parse(readFileSync(join(dir, repo, 'subagent-stop.json'), 'utf8')) as Record<string, unknown>;
      expect(input).toMatchObject({
        hook_event_name: 'SubagentStop',
        agent_id: repo,
        agent_type: 'cleaner',
        stop_hook_active: false,
        cwd: join(dir, repo),
        last_assistant_message: 'I was not allowed to remove keep/, so I left it.',
      });
      expect(typeof input.session_id).toBe('string');
      expect(String(input.transcript_path)).toContain('sessions');
    }
    expect(runs.filter((h) => h.hookEvent === 'SubagentStop').map((h) => h.outcome)).toEqual(['passed', 'passed']);

    // The report lists every hook run.
    const html = buildHtmlReport(loadRunFolder(outcome.dir));
    expect(html).toContain('<h2>Hooks');
    expect(html).toContain('rm -rf is not allowed in this project');
    expect(html).toContain('SubagentStop');
  }, 60_000);

  it('a SubagentStop hook that exits 2 sends the agent back to work once with its reason', async () => {
    const { dir, outcome } = await runWithHooks({
      'work/README.md': 'hello\n',
      'recipe.yaml': `name: again
provider: scripted
script: script.yaml
hooks:
  SubagentStop:
    - hooks:
        - type: command
          command: "cat >> stops.jsonl; echo >> stops.jsonl; test -f checked || { touch checked; echo 'run the tests before you stop' >&2; exit 2; }"
tasks:
  - id: fix
    cwd: work
    prompt: Fix the bug.
`,
      'script.yaml': `turns:
  - text: Fixed.
  - text: Tests pass now.
`,
    });
    expect(outcome.status).toBe('succeeded');
    const log = events(outcome.dir);
    expect(hookRuns(log).map((h) => `${h.hookEvent} ${h.outcome}`)).toEqual([
      'SubagentStop blocked',
      'SubagentStop passed',
    ]);
    const stops = readFileSync(join(dir, 'work', 'stops.jsonl'), 'utf8')
      .split('\n')
      .filter((l) => l.trim() !== '')
      .map((l) => JSON.parse(l) as { stop_hook_active: boolean; last_assistant_message: string });
    expect(stops.map((s) => [s.stop_hook_active, s.last_assistant_message])).toEqual([
      [false, 'Fixed.'],
      [true, 'Tests pass now.'],
    ]);
    // The agent read the hook's reason as its next prompt.
    const prompts = ofType(log, 'agent_event').filter(
      (e) => e.event.type === 'message_start' && JSON.stringify(e.event).includes('SubagentStop hook feedback'),
    );
    expect(prompts).toHaveLength(1);
    expect(JSON.stringify(prompts[0]!.event)).toContain('run the tests before you stop');
  }, 60_000);

  it("a PostToolUse hook from the user's settings file runs after an allowed call, in the workspace", async () => {
    const { dir, outcome } = await runWithHooks({
      'claude-home/settings.json': settings({
        PostToolUse: [
          { matcher: 'Bash', hooks: [{ type: 'command', command: 'echo from-user-settings >> user-hook.log' }] },
        ],
      }),
      'work/README.md': 'hello\n',
      'agent.md': `---
name: lister
description: Lists files.
tools: Bash, Read, Write
disallowedTools: Write
---

You list files.
`,
      'recipe.yaml': `name: post
provider: scripted
script: script.yaml
agents:
  lister: { system_file: agent.md }
tasks:
  - id: list
    agent: lister
    cwd: work
    prompt: List the files.
`,
      'script.yaml': `turns:
  - tools: [{ name: bash, args: { command: "ls" } }]
  - text: listed
`,
    });
    expect(outcome.status).toBe('succeeded');
    expect(readFileSync(join(dir, 'work', 'user-hook.log'), 'utf8')).toBe('from-user-settings\n');
    const runs = hookRuns(events(outcome.dir));
    expect(runs.map((h) => `${h.hookEvent} ${h.outcome}`)).toEqual(['PostToolUse passed']);
    expect(existsSync(join(dir, 'work', 'subagent-stop.json'))).toBe(false);
  }, 60_000);
});
