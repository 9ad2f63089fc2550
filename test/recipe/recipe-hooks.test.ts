// Claude Code agent-file keys and command hooks in recipes, as validate and load see them: each
// key honoured (maxTurns, disallowedTools, isolation: worktree, hooks) or warned about at its own
// line (skills, permissionMode, ...); a recipe's and an agent's hooks: checked like a settings
// file, with file:line:col; hooks merged in order from the user's settings, the recipe, the file.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { loadRecipe } from '../../src/recipe/load.js';
import { exited, spawnCli } from '../reliability/helpers/reliability-fixtures.js';

const made: string[] = [];
afterAll(() => {
  for (const d of made) rmSync(d, { recursive: true, force: true });
});

function project(files: Record<string, string>): { dir: string; env: Record<string, string> } {
  const dir = mkdtempSync(join(tmpdir(), 'orchestrate-recipe-hooks-'));
  made.push(dir);
  for (const [rel, text] of Object.entries(files)) {
    mkdirSync(dirname(join(dir, rel)), { recursive: true });
    writeFileSync(join(dir, rel), text);
  }
  return { dir, env: { HOME: join(dir, 'home') } };
}

const AGENT = `---
name: builder
description: Builds and tests the project.
tools: Read, Edit, Write, Bash, TaskList, TaskUpdate, SendMessage
disallowedTools: Write, Bash(rm:*)
maxTurns: 12
isolation: worktree
permissionMode: acceptEdits
skills:
  - release-notes
memory: project
color: green
hooks:
  PostToolUse:
    - matcher: "Edit|Write"
      hooks:
        - type: command
          command: npx prettier --write "$CLAUDE_PROJECT_DIR"
  Notification:
    - hooks:
        - type: command
          command: notify-send done
---

You build and test the project.
`;

describe('agent-file keys', () => {
  it('honours maxTurns, disallowedTools, isolation and hooks, and warns about the rest at their lines', () => {
    const { dir, env } = project({
      'agents/builder.md': AGENT,
      'home/.claude/settings.json': JSON.stringify({
        hooks: { Stop: [{ hooks: [{ type: 'command', command: 'echo user-stop' }] }] },
      }),
      'recipe.yaml': `name: k
hooks:
  PreToolUse:
    - matcher: Bash
      hooks: [{ type: command, command: ./guard.sh, timeout: 5 }]
agents:
  builder: { system_file: agents/builder.md }
tasks:
  - id: build
    agent: builder
    prompt: build it
`,
    });
    const r = loadRecipe(join(dir, 'recipe.yaml'), { cwd: dir, env });
    if (!r.ok) throw new Error(r.problems.map((p) => `${p.line}:${p.col} ${p.message}`).join('\n'));
    const a = r.recipe.agents.builder!;
    expect(a.maxTurns).toBe(12);
    expect(a.tools).toEqual(['read', 'edit', 'bash', 'task_list', 'task_update', 'send_message']);
    expect(a.disallowedTools).toEqual(['write']);
    expect(r.recipe.tasks[0]!.isolation).toBe('worktree');
    // User side first, then the recipe's, then the agent file's; each hook names its source.
    expect(a.commandHooks?.Stop?.[0]?.hooks[0]).toMatchObject({
      command: 'echo user-stop',
      source: join(dir, 'home/.claude/settings.json'),
    });
    expect(a.commandHooks?.PreToolUse?.[0]).toMatchObject({
      matcher: 'Bash',
      hooks: [{ command: './guard.sh', timeout: 5 }],
    });
    expect(a.commandHooks?.PostToolUse?.[0]).toMatchObject({ matcher: 'Edit|Write' });
    expect(a.commandHooks?.PostToolUse?.[0]?.hooks[0]?.source).toBe(join(dir, 'agents/builder.md'));
    expect(r.warnings.map((w) => `${w.file}:${w.line}:${w.col} ${w.message}`)).toEqual([
      'agents/builder.md:5:25 agent "builder": disallowedTools Bash(rm:*): a rule that denies part of a tool is not applied; the bash tool stays',
      'agents/builder.md:8:1 agent "builder": permissionMode: has no effect here: agents run unattended and never ask; every tool they have runs inside the command sandbox',
      'agents/builder.md:9:1 agent "builder": skills: names Claude Code skills to preload; they are not loaded from an agent file here',
      'agents/builder.md:11:1 agent "builder": memory: persistent agent memory is not kept here; each instance starts from its prompt and the summaries of the tasks it needs',
      'agents/builder.md:19:3 agent "builder": frontmatter hooks.Notification: this event is not fired by orchestrate; its hooks are ignored (supported: PreToolUse, PostToolUse, UserPromptSubmit, Stop, SubagentStop, SessionStart).',
    ]);
  });

  it("a task without isolation takes the file's; a task that says none keeps none; the recipe's max_turns and tools win", () => {
    const { dir, env } = project({
      'agents/builder.md': AGENT,
      'recipe.yaml': `name: k
agents:
  builder: { system_file: agents/builder.md, max_turns: 3, tools: [read, write] }
tasks:
  - id: a
    agent: builder
    prompt: go
  - id: b
    agent: builder
    isolation: none
    prompt: go
`,
    });
    const r = loadRecipe(join(dir, 'recipe.yaml'), { cwd: dir, env });
    if (!r.ok) throw new Error(r.problems.map((p) => p.message).join('\n'));
    expect(r.recipe.tasks.map((t) => t.isolation)).toEqual(['worktree', 'none']);
    // The recipe's tools: win (the board's are added: two tasks run agents).
    expect(r.recipe.agents.builder?.maxTurns).toBe(3);
    expect(r.recipe.agents.builder?.tools.slice(0, 2)).toEqual(['read', 'write']);
    expect(r.warnings.map((w) => w.message)).toContain(
      'agent "builder": disallowedTools: of the agent file is not applied: the recipe gives this agent\'s tools: itself',
    );
  });
});

describe('hooks: in a recipe', () => {
  it('a bad hook is an error at its file:line:col, checked like a settings file', () => {
    const { dir, env } = project({
      'recipe.yaml': `name: h
hooks:
  PreToolUse:
    - matcher: "Bash("
      hooks: [{ type: command, command: ./x.sh }]
  PostToolUse:
    - hooks: [{ type: command, command: ./y.sh, timeout: -1 }]
  Stopp:
    - hooks: [{ type: command, command: ./z.sh }]
agents:
  a:
    hooks:
      Stop:
        - hooks: [{ type: shell, command: ./w.sh }]
tasks:
  - id: t
    agent: a
    prompt: go
`,
    });
    const r = loadRecipe(join(dir, 'recipe.yaml'), { cwd: dir, env });
    expect(r.ok).toBe(false);
    if (r.ok) return;
    // The first problem of each hooks object (the check stops at the first, like a settings file).
    expect(r.problems.map((p) => `${p.line}:${p.col} ${p.code} ${p.message}`)).toEqual([
      expect.stringMatching(/^4:16 bad_hooks hooks\.PreToolUse\[0\]\.matcher: is not a valid regular expression/),
      '14:27 bad_hooks agents.a.hooks.Stop[0].hooks[0].type: must be "command" (the only hook type orchestrate runs), got "shell"',
    ]);
  });

  it("a broken settings file on the user's side is an error naming it; a repository's settings are not read", () => {
    const { dir, env } = project({
      'home/.claude/settings.json': '{"hooks": {"PreToolUse": "nope"}}',
      'repo/.claude/settings.json': '{ not json',
      'recipe.yaml': 'name: s\ntasks:\n  - id: t\n    cwd: repo\n    prompt: go\n',
    });
    const r = loadRecipe(join(dir, 'recipe.yaml'), { cwd: dir, env });
    expect(r.ok).toBe(false);
    if (r.ok) return;
    expect(r.problems.map((p) => `${p.file} ${p.message}`)).toEqual([
      `${join(dir, 'home/.claude/settings.json')} settings file with hooks every agent of this recipe would run: ${join(dir, 'home/.claude/settings.json')}: hooks.PreToolUse: must be a list of {matcher, hooks} entries, got string "nope"`,
    ]);
  });
  it('what a settings file holds that is not run (an event, a hook type) is warned at its file:line:col by validate and by a run', async () => {
    const { dir, env } = project({
      'home/.claude/settings.json': `{
  "hooks": {
    "PreCompact": [
      { "hooks": [{ "type": "command", "command": "x" }] }
    ],
    "Stop": [
      { "hooks": [{ "type": "prompt", "prompt": "done?" }] }
    ]
  }
}
`,
      '.claude/settings.json': '{"hooks": {"SessionEnd": [{"hooks": [{"type": "command", "command": "y"}]}]}}',
      'recipe.yaml': 'name: s\ntasks:\n  - id: t\n    prompt: go\n',
    });
    // The real CLI: the user's settings files are found through HOME, as on the user's machine.
    const cliEnv = { ...env, ORCHESTRATE_HOME: join(dir, 'home/.orchestrate') };
    const [validate, run] = await Promise.all([
      exited(spawnCli(['validate', join(dir, 'recipe.yaml')], cliEnv)),
      exited(spawnCli([join(dir, 'recipe.yaml'), '--dry-run'], cliEnv)),
    ]);
    const user = join(dir, 'home/.claude/settings.json');
    const expected = [
      `${join(dir, '.claude/settings.json')}:1:12: warning: settings file every agent of this recipe reads: hooks.SessionEnd: this event is not fired by orchestrate; its hooks are ignored (supported: PreToolUse, PostToolUse, UserPromptSubmit, Stop, SubagentStop, SessionStart).`,
      `${user}:3:5: warning: settings file every agent of this recipe reads: hooks.PreCompact: this event is not fired by orchestrate`,
      `${user}:7:19: warning: settings file every agent of this recipe reads: hooks.Stop[0].hooks[0]: hooks of type "prompt" are not run by orchestrate (only "command"); skipped.`,
    ];
    for (const r of [validate, run]) {
      expect(r.code).toBe(0);
      for (const line of expected) expect(r.stderr).toContain(line);
    }
  }, 60_000);
});
