// Attack (issue #37 item 8): safety hooks written from Claude Code's documentation were silently
// disabled. Hooks received the product's tool names and inputs (`bash`, `path`, `edits[].oldText`),
// so a guard that starts with `if tool_name != "Bash": exit 0` let `rm -rf` through, and a guard on
// `.tool_input.file_path` (absolute in Claude Code) or `.tool_input.old_string` never matched. The
// guards below are written the way Claude Code's hooks documentation writes them; the agent uses
// the product's own tools; hooks run as real processes in the command sandbox.
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { cleanupHookDirs, harness, tempDir, toolResultTexts } from '../runtime/helpers/hook-harness.js';

afterEach(cleanupHookDirs);

/** `jq -r .field` for the flat string fields these guards read (sh and sed: nothing to install). */
const field = (name: string) => `$(printf '%s' "$input" | sed -n 's/.*"${name}":"\\([^"]*\\)".*/\\1/p')`;

// PreToolUse, matcher "" (every tool): the guard itself picks the Bash calls, by tool_name.
const BASH_GUARD = [
  'input=$(cat)',
  `tool=${field('tool_name')}`,
  '[ "$tool" != "Bash" ] && exit 0',
  `cmd=${field('command')}`,
  `case "$cmd" in *'rm -rf'*) echo "Blocked: rm -rf is not allowed" >&2; exit 2;; esac`,
  'exit 0',
].join('\n');

// PreToolUse, matcher "Edit|Write": refuse the protected file, named by its absolute path.
const FILE_GUARD = [
  'input=$(cat)',
  `tool=${field('tool_name')}`,
  'case "$tool" in Edit|Write) ;; *) exit 0;; esac',
  `file=${field('file_path')}`,
  'if [ "$file" = "$CLAUDE_PROJECT_DIR/config/prod.env" ]; then echo "Blocked: $file is protected" >&2; exit 2; fi',
  'exit 0',
].join('\n');

// PreToolUse, matcher "Edit": refuse an edit that removes the license header (reads old_string).
const OLD_STRING_GUARD = [
  'input=$(cat)',
  `old=${field('old_string')}`,
  `case "$old" in *'SPDX-License-Identifier'*) echo "Blocked: keep the license header" >&2; exit 2;; esac`,
  'exit 0',
].join('\n');

const hook = (matcher: string, command: string) => ({ matcher, hooks: [{ type: 'command', command }] });

describe('a PreToolUse guard written per Claude Code docs', () => {
  it('blocks rm -rf through the product bash tool (tool_name is "Bash", the command in tool_input.command)', async () => {
    const h = await harness([{ tools: [{ name: 'bash', args: { command: 'rm -rf data' } }] }, { text: 'ok' }], {
      PreToolUse: [hook('', BASH_GUARD)],
    });
    mkdirSync(join(h.cwd, 'data'));
    writeFileSync(join(h.cwd, 'data', 'keep.txt'), 'precious');
    await h.session.prompt('clean up');
    expect(readFileSync(join(h.cwd, 'data', 'keep.txt'), 'utf8')).toBe('precious');
    expect(toolResultTexts(h.calls[1]!)[0]).toContain('Blocked: rm -rf is not allowed');
    expect(h.hookRuns).toMatchObject([{ toolName: 'bash', exitCode: 2, outcome: 'blocked' }]);
    await h.session.dispose();
  });

  it('an Edit|Write guard on file_path blocks both tools on the protected file, by its absolute path', async () => {
    const cwd = tempDir();
    mkdirSync(join(cwd, 'config'));
    writeFileSync(join(cwd, 'config', 'prod.env'), 'DB=prod\n');
    writeFileSync(join(cwd, 'notes.txt'), 'draft\n');
    const h = await harness(
      [
        {
          tools: [
            { name: 'edit', args: { path: 'config/prod.env', edits: [{ oldText: 'DB=prod', newText: 'DB=evil' }] } },
            { name: 'write', args: { path: './config/../config/prod.env', content: 'DB=evil\n' } },
            { name: 'edit', args: { path: 'notes.txt', edits: [{ oldText: 'draft', newText: 'final' }] } },
          ],
        },
        { text: 'ok' },
      ],
      { PreToolUse: [hook('Edit|Write', FILE_GUARD)] },
      cwd,
    );
    await h.session.prompt('change the config');
    expect(readFileSync(join(cwd, 'config', 'prod.env'), 'utf8')).toBe('DB=prod\n');
    // Files the guard does not protect are edited as usual.
    expect(readFileSync(join(cwd, 'notes.txt'), 'utf8')).toBe('final\n');
    const results = toolResultTexts(h.calls[1]!);
    expect(results[0]).toContain(`Blocked: ${cwd}/config/prod.env is protected`);
    expect(results[1]).toContain(`Blocked: ${cwd}/config/prod.env is protected`);
    expect(h.hookRuns.map((r) => [r.toolName, r.outcome])).toEqual([
      ['edit', 'blocked'],
      ['write', 'blocked'],
      ['edit', 'passed'],
    ]);
    await h.session.dispose();
  });

  it('an Edit guard on old_string sees every replacement of a multi-replacement edit; one block stops it all', async () => {
    const cwd = tempDir();
    const original = '// SPDX-License-Identifier: MIT\nconst a = 1;\n';
    writeFileSync(join(cwd, 'a.ts'), original);
    const h = await harness(
      [
        {
          tools: [
            {
              name: 'edit',
              args: {
                path: 'a.ts',
                edits: [
                  { oldText: 'const a = 1;', newText: 'const a = 2;' },
                  { oldText: '// SPDX-License-Identifier: MIT\n', newText: '' },
                ],
              },
            },
          ],
        },
        { text: 'ok' },
      ],
      { PreToolUse: [hook('Edit', OLD_STRING_GUARD)] },
      cwd,
    );
    await h.session.prompt('tidy');
    expect(readFileSync(join(cwd, 'a.ts'), 'utf8')).toBe(original);
    expect(toolResultTexts(h.calls[1]!)[0]).toContain('Blocked: keep the license header');
    expect(h.hookRuns.map((r) => r.outcome)).toEqual(['passed', 'blocked']);
    await h.session.dispose();
  });
});
