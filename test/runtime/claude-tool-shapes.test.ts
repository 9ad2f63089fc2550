// The tool calls command hooks see (Claude Code's names and input shapes) and how a hook's
// updatedInput maps back onto the product's arguments; matchers by either name.
import { describe, expect, it } from 'vitest';
import { claudeToolCalls, productArgs } from '../../src/runtime/claude-tool-shapes.js';
import { matcherMatches } from '../../src/runtime/command-hooks.js';

const cwd = '/work/project';

describe("Claude Code's shapes", () => {
  it('maps each product tool to its Claude Code name and input, paths absolute', () => {
    expect(claudeToolCalls('bash', { command: 'make', timeout: 30 }, cwd)).toEqual([
      { tool_name: 'Bash', tool_input: { command: 'make', timeout: 30_000 } },
    ]);
    expect(claudeToolCalls('read', { path: 'src/a.ts', offset: 10, limit: 5 }, cwd)).toEqual([
      { tool_name: 'Read', tool_input: { file_path: '/work/project/src/a.ts', offset: 10, limit: 5 } },
    ]);
    expect(claudeToolCalls('write', { path: '/work/project/b.txt', content: 'x' }, cwd)).toEqual([
      { tool_name: 'Write', tool_input: { file_path: '/work/project/b.txt', content: 'x' } },
    ]);
    expect(claudeToolCalls('find', { pattern: '*.ts', path: 'src', limit: 9 }, cwd)).toEqual([
      { tool_name: 'Glob', tool_input: { pattern: '*.ts', path: '/work/project/src' } },
    ]);
    expect(
      claudeToolCalls('grep', { pattern: 'a.b', literal: true, ignoreCase: true, context: 2, limit: 7 }, cwd),
    ).toEqual([
      {
        tool_name: 'Grep',
        tool_input: { pattern: 'a\\.b', output_mode: 'content', '-n': true, '-i': true, '-C': 2, head_limit: 7 },
      },
    ]);
    expect(claudeToolCalls('ls', {}, cwd)).toEqual([{ tool_name: 'LS', tool_input: { path: '/work/project' } }]);
    expect(claudeToolCalls('mcp__github__create_issue', { title: 't' }, cwd)).toEqual([
      { tool_name: 'mcp__github__create_issue', tool_input: { title: 't' } },
    ]);
  });

  it('shows an edit as one Edit per replacement', () => {
    const calls = claudeToolCalls(
      'edit',
      {
        path: 'a.ts',
        edits: [
          { oldText: 'a', newText: 'b' },
          { oldText: 'c', newText: 'd' },
        ],
      },
      cwd,
    );
    expect(calls).toEqual([
      {
        tool_name: 'Edit',
        tool_input: { file_path: '/work/project/a.ts', old_string: 'a', new_string: 'b', replace_all: false },
      },
      {
        tool_name: 'Edit',
        tool_input: { file_path: '/work/project/a.ts', old_string: 'c', new_string: 'd', replace_all: false },
      },
    ]);
  });
});

describe('updatedInput back to our arguments', () => {
  it('keeps what the hook did not change (a relative path stays relative) and converts units', () => {
    const args = { command: 'make', timeout: 30 };
    const [sent] = claudeToolCalls('bash', args, cwd);
    expect(productArgs('bash', args, 0, sent!, { command: 'make -n' })).toEqual({ command: 'make -n', timeout: 30 });
    expect(productArgs('bash', args, 0, sent!, { timeout: 5000 })).toEqual({ command: 'make', timeout: 5 });
    const read = { path: 'src/a.ts' };
    const [r] = claudeToolCalls('read', read, cwd);
    expect(productArgs('read', read, 0, r!, { limit: 3 })).toEqual({ path: 'src/a.ts', limit: 3 });
    expect(productArgs('read', read, 0, r!, { file_path: '/work/project/b.ts' })).toEqual({
      path: '/work/project/b.ts',
    });
  });

  it('a literal grep stays literal unless the hook rewrote its pattern', () => {
    const args = { pattern: 'a.b', literal: true };
    const [sent] = claudeToolCalls('grep', args, cwd);
    expect(productArgs('grep', args, 0, sent!, { '-i': true })).toEqual({
      pattern: 'a.b',
      literal: true,
      ignoreCase: true,
    });
    expect(productArgs('grep', args, 0, sent!, { pattern: 'a.+b' })).toEqual({ pattern: 'a.+b' });
  });
});

describe('matchers', () => {
  it('select a product tool by its Claude Code name or its own; MCP tools by their full name', () => {
    expect(matcherMatches('Edit|Write', 'edit')).toBe(true);
    expect(matcherMatches('Edit|Write', 'write')).toBe(true);
    expect(matcherMatches('MultiEdit', 'edit')).toBe(true);
    expect(matcherMatches('Bash', 'bash')).toBe(true);
    expect(matcherMatches('bash', 'bash')).toBe(true);
    expect(matcherMatches('Bash', 'read')).toBe(false);
    expect(matcherMatches('Glob|Grep|LS', 'find')).toBe(true);
    expect(matcherMatches('mcp__github__.*', 'mcp__github__create_issue')).toBe(true);
    expect(matcherMatches('mcp__github__.*', 'bash')).toBe(false);
  });
});
