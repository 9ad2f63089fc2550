// Command hooks in Claude Code's format, end to end: an AgentSession on the scripted model with the
// real bash/edit tools, hooks run as real processes in the command sandbox (bubblewrap).
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { parseHooksConfig, type HooksConfig } from '../../src/runtime/command-hooks.js';
import { PromptBlockedError } from '../../src/runtime/hook-session.js';
import { cleanupHookDirs, harness, tempDir, toolResultTexts, userTexts } from './helpers/hook-harness.js';

afterEach(cleanupHookDirs);

// A guard written the way Claude Code users write them: read the JSON, refuse rm -rf with exit 2.
const BLOCK_RM = `input=$(cat); case "$input" in *'rm -rf'*) echo "rm -rf is not allowed here; delete single files" >&2; exit 2;; esac; exit 0`;

describe('PreToolUse', () => {
  it('exit 2 blocks rm -rf: the file survives and the model reads the reason in the tool result', async () => {
    const h = await harness([{ tools: [{ name: 'bash', args: { command: 'rm -rf keep' } }] }, { text: 'ok' }], {
      PreToolUse: [{ matcher: 'Bash', hooks: [{ type: 'command', command: BLOCK_RM }] }],
    });
    mkdirSync(join(h.cwd, 'keep'));
    writeFileSync(join(h.cwd, 'keep', 'file.txt'), 'precious');
    await h.session.prompt('clean up');
    expect(readFileSync(join(h.cwd, 'keep', 'file.txt'), 'utf8')).toBe('precious');
    const results = toolResultTexts(h.calls[1]!);
    expect(results[0]).toContain('rm -rf is not allowed here; delete single files');
    const result = h.calls[1]!.messages.find((m) => m.role === 'toolResult');
    expect(result?.role === 'toolResult' && result.isError).toBe(true);
    expect(h.hookRuns).toMatchObject([
      {
        hookEvent: 'PreToolUse',
        toolName: 'bash',
        exitCode: 2,
        blocked: true,
        outcome: 'blocked',
        source: 'test settings',
      },
    ]);
    await h.session.dispose();
  });

  it('runs only where the matcher selects the tool, and lets an allowed command through', async () => {
    const h = await harness(
      [
        {
          tools: [
            { name: 'bash', args: { command: 'echo made > made.txt' } },
            { name: 'read', args: { path: 'made.txt' } },
          ],
        },
        { text: 'ok' },
      ],
      { PreToolUse: [{ matcher: 'bash|Edit', hooks: [{ type: 'command', command: BLOCK_RM }] }] },
    );
    await h.session.prompt('make a file');
    expect(readFileSync(join(h.cwd, 'made.txt'), 'utf8')).toBe('made\n');
    expect(h.hookRuns.map((r) => [r.toolName, r.outcome])).toEqual([['bash', 'passed']]);
    await h.session.dispose();
  });

  it('a JSON deny on exit 0 blocks with its reason; the hook sees the session JSON on stdin', async () => {
    const h = await harness([{ tools: [{ name: 'bash', args: { command: 'echo hi > out.txt' } }] }, { text: 'ok' }], {
      PreToolUse: [
        {
          matcher: '*',
          hooks: [
            {
              type: 'command',
              command: `cat > "$CLAUDE_PROJECT_DIR/stdin.json"; echo '{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"deny","permissionDecisionReason":"no writes today"}}'`,
            },
          ],
        },
      ],
    });
    await h.session.prompt('write');
    expect(existsSync(join(h.cwd, 'out.txt'))).toBe(false);
    expect(toolResultTexts(h.calls[1]!)[0]).toContain('no writes today');
    const stdin = JSON.parse(readFileSync(join(h.cwd, 'stdin.json'), 'utf8'));
    expect(stdin).toMatchObject({
      hook_event_name: 'PreToolUse',
      tool_name: 'Bash',
      tool_input: { command: 'echo hi > out.txt' },
      cwd: h.cwd,
      session_id: h.session.sessionId,
    });
    expect(typeof stdin.tool_use_id).toBe('string');
    await h.session.dispose();
  });

  it('exit 1 only warns: the tool runs and the warning is reported', async () => {
    const h = await harness([{ tools: [{ name: 'bash', args: { command: 'echo ran > ran.txt' } }] }, { text: 'ok' }], {
      PreToolUse: [{ hooks: [{ type: 'command', command: 'echo "lint config missing" >&2; exit 1' }] }],
    });
    await h.session.prompt('go');
    expect(readFileSync(join(h.cwd, 'ran.txt'), 'utf8')).toBe('ran\n');
    expect(h.hookRuns).toMatchObject([{ exitCode: 1, blocked: false, outcome: 'warning' }]);
    expect(h.notices.some((n) => n.includes('exited with 1: lint config missing'))).toBe(true);
    expect(toolResultTexts(h.calls[1]!)[0]).not.toContain('lint config missing');
    await h.session.dispose();
  });

  it('a hanging hook is killed at its timeout and the agent goes on', async () => {
    const cwd = tempDir();
    execFileSync('mkfifo', [join(cwd, 'never')]);
    // Opening a fifo nobody writes blocks forever.
    const h = await harness(
      [{ tools: [{ name: 'bash', args: { command: 'echo after > after.txt' } }] }, { text: 'ok' }],
      {
        PreToolUse: [
          {
            matcher: 'bash',
            hooks: [{ type: 'command', command: 'read line < "$CLAUDE_PROJECT_DIR/never"', timeout: 1 }],
          },
        ],
      },
      cwd,
    );
    await h.session.prompt('go');
    expect(readFileSync(join(cwd, 'after.txt'), 'utf8')).toBe('after\n');
    expect(h.hookRuns).toMatchObject([{ timedOut: true, exitCode: null, blocked: false, outcome: 'warning' }]);
    expect(h.hookRuns[0]!.durationMs).toBeGreaterThanOrEqual(1000);
    expect(h.notices.some((n) => n.includes('did not finish within 1 s and was killed'))).toBe(true);
    expect(h.calls).toHaveLength(2);
    await h.session.dispose();
  });
});

const rewrite = (updatedInput: unknown) =>
  `cat > /dev/null; echo '${JSON.stringify({ hookSpecificOutput: { hookEventName: 'PreToolUse', permissionDecision: 'allow', updatedInput } })}'`;

describe('PreToolUse updatedInput', () => {
  it("rewrites a Bash command and a Write's file_path: the product's tools run what the hook answered", async () => {
    const h = await harness(
      [
        {
          tools: [
            { name: 'bash', args: { command: 'echo unsafe > out.txt' } },
            { name: 'write', args: { path: 'draft.txt', content: 'text' } },
          ],
        },
        { text: 'ok' },
      ],
      {
        PreToolUse: [
          { matcher: 'Bash', hooks: [{ type: 'command', command: rewrite({ command: 'echo safe > out.txt' }) }] },
          { matcher: 'Write', hooks: [{ type: 'command', command: rewrite({ file_path: 'review/draft.txt' }) }] },
        ],
      },
    );
    await h.session.prompt('go');
    expect(readFileSync(join(h.cwd, 'out.txt'), 'utf8')).toBe('safe\n');
    expect(existsSync(join(h.cwd, 'draft.txt'))).toBe(false);
    expect(readFileSync(join(h.cwd, 'review', 'draft.txt'), 'utf8')).toBe('text');
    await h.session.dispose();
  });

  it('rewrites one replacement of a multi-replacement edit (new_string), the others stay', async () => {
    const cwd = tempDir();
    writeFileSync(join(cwd, 'a.txt'), 'one\ntwo\n');
    const hook = `input=$(cat); case "$input" in *'"old_string":"two"'*) echo '${JSON.stringify({ hookSpecificOutput: { hookEventName: 'PreToolUse', updatedInput: { new_string: 'TWO (reviewed)' } } })}';; esac; exit 0`;
    const h = await harness(
      [
        {
          tools: [
            {
              name: 'edit',
              args: {
                path: 'a.txt',
                edits: [
                  { oldText: 'one', newText: 'ONE' },
                  { oldText: 'two', newText: 'TWO' },
                ],
              },
            },
          ],
        },
        { text: 'ok' },
      ],
      { PreToolUse: [{ matcher: 'Edit', hooks: [{ type: 'command', command: hook }] }] },
      cwd,
    );
    await h.session.prompt('go');
    expect(readFileSync(join(cwd, 'a.txt'), 'utf8')).toBe('ONE\nTWO (reviewed)\n');
    await h.session.dispose();
  });

  it('a rewrite into invalid arguments fails the call with a clear error; nothing runs', async () => {
    const h = await harness([{ tools: [{ name: 'bash', args: { command: 'echo ran > ran.txt' } }] }, { text: 'ok' }], {
      PreToolUse: [{ matcher: 'Bash', hooks: [{ type: 'command', command: rewrite({ command: 42 }) }] }],
    });
    await h.session.prompt('go');
    expect(existsSync(join(h.cwd, 'ran.txt'))).toBe(false);
    expect(toolResultTexts(h.calls[1]!)[0]).toContain('A hook rewrote the arguments of "bash" into invalid ones');
    await h.session.dispose();
  });
});

describe('PostToolUse', () => {
  it('a formatter rewrites the edited file (the workspace is writable inside the sandbox)', async () => {
    const cwd = tempDir();
    writeFileSync(join(cwd, 'code.txt'), 'let x = 1\n');
    // The formatter takes tool_input.file_path from the JSON, as Claude Code hooks do.
    const formatter = `f=$(sed -n 's/.*"file_path":"\\([^"]*\\)".*/\\1/p'); sed -i 's/let /const /' "$f"`;
    const h = await harness(
      [{ tools: [{ name: 'edit', args: { path: 'code.txt', oldText: 'x = 1', newText: 'x = 2' } }] }, { text: 'ok' }],
      { PostToolUse: [{ matcher: 'Edit|Write', hooks: [{ type: 'command', command: formatter }] }] },
      cwd,
    );
    await h.session.prompt('edit');
    expect(readFileSync(join(cwd, 'code.txt'), 'utf8')).toBe('const x = 2\n');
    expect(h.hookRuns).toMatchObject([{ hookEvent: 'PostToolUse', toolName: 'edit', exitCode: 0, outcome: 'passed' }]);
    await h.session.dispose();
  });

  it('runs in the sandbox: the workspace is writable, a folder outside it is not', async () => {
    const outside = tempDir();
    const h = await harness([{ tools: [{ name: 'bash', args: { command: 'true' } }] }, { text: 'ok' }], {
      PostToolUse: [
        { hooks: [{ type: 'command', command: `touch inside.txt; touch "${outside}/escaped.txt"; exit 0` }] },
      ],
    });
    await h.session.prompt('go');
    expect(existsSync(join(h.cwd, 'inside.txt'))).toBe(true);
    expect(existsSync(join(outside, 'escaped.txt'))).toBe(false);
    await h.session.dispose();
  });

  it('exit 2 adds the reason to the tool result', async () => {
    const h = await harness([{ tools: [{ name: 'bash', args: { command: 'echo built' } }] }, { text: 'ok' }], {
      PostToolUse: [
        { matcher: 'bash', hooks: [{ type: 'command', command: 'echo "tests fail now: fix test_a" >&2; exit 2' }] },
      ],
    });
    await h.session.prompt('build');
    const text = toolResultTexts(h.calls[1]!)[0]!;
    expect(text).toContain('built');
    expect(text).toContain('PostToolUse hook: tests fail now: fix test_a');
    await h.session.dispose();
  });
});

describe('Stop', () => {
  it('exit 2 makes the agent continue once with the message; stop_hook_active is true on the next stop', async () => {
    const hook = `input=$(cat); case "$input" in *'"stop_hook_active":true'*) exit 0;; esac; echo "run the tests before stopping" >&2; exit 2`;
    const h = await harness([{ text: 'done' }, { text: 'tests pass' }], {
      Stop: [{ hooks: [{ type: 'command', command: hook }] }],
    });
    await h.session.prompt('work');
    expect(h.calls).toHaveLength(2);
    expect(userTexts(h.calls[1]!).at(-1)).toBe('Stop hook feedback:\nrun the tests before stopping');
    expect(h.hookRuns.map((r) => [r.hookEvent, r.exitCode, r.blocked])).toEqual([
      ['Stop', 2, true],
      ['Stop', 0, false],
    ]);
    expect(h.session.lastAssistantText()).toBe('tests pass');
    await h.session.dispose();
  });

  it('a Stop hook that always blocks sends the agent back only once per prompt', async () => {
    const h = await harness([{ text: 'one' }, { text: 'two' }, { text: 'three' }], {
      Stop: [{ hooks: [{ type: 'command', command: 'echo never done >&2; exit 2' }] }],
    });
    await h.session.prompt('work');
    expect(h.calls).toHaveLength(2);
    expect(h.hookRuns).toHaveLength(2);
    expect(h.notices.some((n) => n.includes('blocked the stop again'))).toBe(true);
    await h.session.dispose();
  });
});

describe('UserPromptSubmit and SessionStart', () => {
  it('exit 2 blocks the prompt: nothing is sent to the model', async () => {
    const h = await harness([{ text: 'never' }], {
      UserPromptSubmit: [
        {
          hooks: [
            { type: 'command', command: 'grep -q password && { echo "no secrets in prompts" >&2; exit 2; }; exit 0' },
          ],
        },
      ],
    });
    await expect(h.session.prompt('my password is hunter2')).rejects.toThrow(PromptBlockedError);
    await expect(h.session.prompt('my password is hunter2')).rejects.toThrow(/no secrets in prompts/);
    expect(h.calls).toHaveLength(0);
    await h.session.prompt('hello');
    expect(h.calls).toHaveLength(1);
    await h.session.dispose();
  });

  it('plain stdout adds context; hooks get CLAUDE_PROJECT_DIR and never a provider key', async () => {
    const saved = process.env.ANTHROPIC_API_KEY;
    process.env.ANTHROPIC_API_KEY = 'sk-ant-hook-test-secret';
    try {
      const h = await harness([{ text: 'hi' }], {
        SessionStart: [
          { hooks: [{ type: 'command', command: 'env > "$CLAUDE_PROJECT_DIR/env.txt"; echo "branch: main"' }] },
        ],
        UserPromptSubmit: [{ hooks: [{ type: 'command', command: 'echo "ticket ORC-7"' }] }],
      });
      await h.session.prompt('hello');
      const sent = userTexts(h.calls[0]!).at(-1)!;
      expect(sent).toBe('hello\nHook context:\nbranch: main\nticket ORC-7');
      const env = readFileSync(join(h.cwd, 'env.txt'), 'utf8');
      expect(env).toContain(`CLAUDE_PROJECT_DIR=${h.cwd}`);
      expect(env).not.toContain('sk-ant-hook-test-secret');
      await h.session.dispose();
    } finally {
      if (saved === undefined) delete process.env.ANTHROPIC_API_KEY;
      else process.env.ANTHROPIC_API_KEY = saved;
    }
  });
});

describe('hook config', () => {
  it('names the file and the key of a mistake', () => {
    const bad = (v: unknown) => () => parseHooksConfig(v, '/p/.claude/settings.json');
    expect(bad({ PreToolUse: [{ matcher: 'Bash', hooks: [{ type: 'command' }] }] })).toThrow(
      '/p/.claude/settings.json: hooks.PreToolUse[0].hooks[0].command: must be a non-empty shell command',
    );
    expect(bad({ PreTool: [] })).toThrow('hooks.PreTool: unknown hook event');
    expect(bad({ Stop: [{ hooks: [{ type: 'command', command: 'x', timeout: -1 }] }] })).toThrow(
      'hooks.Stop[0].hooks[0].timeout: must be a positive number',
    );
    expect(bad({ PreToolUse: [{ matcher: '(', hooks: [] }] })).toThrow(
      'hooks.PreToolUse[0].matcher: is not a valid regular expression',
    );
    expect(bad({ PreToolUse: [{ hooks: [{ type: 'command', command: 'x', comand: 'y' }] }] })).toThrow(
      'hooks.PreToolUse[0].hooks[0].comand: unknown key',
    );
    expect(bad({ PreToolUse: [{ hooks: [{ type: 'script', command: 'x' }] }] })).toThrow(
      'hooks.PreToolUse[0].hooks[0].type: must be "command"',
    );
  });

  it("skips Claude Code's other hook types and newer keys with a warning, so a real settings file loads", () => {
    const warnings: string[] = [];
    const config = parseHooksConfig(
      {
        Stop: [
          {
            hooks: [
              { type: 'prompt', prompt: 'Is the task done?' },
              { type: 'command', command: 'npm test', async: true },
            ],
          },
        ],
      },
      '~/.claude/settings.json',
      (w) => warnings.push(w),
    );
    expect(config.Stop?.[0]?.hooks).toEqual([
      { type: 'command', command: 'npm test', source: '~/.claude/settings.json' },
    ]);
    expect(warnings).toEqual([
      'warning: ~/.claude/settings.json: hooks.Stop[0].hooks[0]: hooks of type "prompt" are not run by orchestrate (only "command"); skipped.',
      'warning: ~/.claude/settings.json: hooks.Stop[0].hooks[1].async: not supported by orchestrate; ignored.',
    ]);
  });

  it('drops Claude Code events orchestrate does not fire, with a warning', () => {
    const warnings: string[] = [];
    const config: HooksConfig = parseHooksConfig(
      { Notification: [{ hooks: [{ type: 'command', command: 'x' }] }], Stop: [] },
      'f',
      (w) => warnings.push(w),
    );
    expect(config).toEqual({ Stop: [] });
    expect(warnings[0]).toContain('hooks.Notification: this event is not fired by orchestrate');
  });
});
