// Agent files as public Claude Code and pi collections write them (test/fixtures/agent-files),
// each loaded through a real recipe as `system_file:`. A user relies on: TitleCase tool names,
// Glob/LS/MultiEdit, `model: inherit` and aliases working as they are; Claude Code tools missing
// here being warnings (errors only with strict_tools); a missing tools: line meaning every tool;
// every problem of a file in one pass; and a hint to quote a YAML value that breaks the file.
import { mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { getModel } from '../../src/ai/models.js';
import { loadRecipe } from '../../src/recipe/load.js';

const FIXTURES = join(import.meta.dirname, '..', 'fixtures', 'agent-files');
const tmp = mkdtempSync(join(tmpdir(), 'orchestrate-agent-files-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

const ALL = 'read,bash,edit,write,ls,grep,find';
const NO_TOOLS =
  '1:1 warning agent file of "a" has no tools: line, so the agent gets every built-in tool (read, bash, edit, write, ls, grep, find), as in Claude Code';
const ignored = (at: string, tool: string, why: string) =>
  `${at} warning agent "a" tool "${tool}" is not available here and is ignored (${why})`;
const WEB = 'no web tool here; fetch with bash (curl) if the agent has network: true';
const QUOTE =
  "quote the value of description: write description: '...' (double any ' inside), or put the text on indented lines after description: > ; a plain value cannot hold \": \" or start with a quote, `, @, [, { or *";

const notATool = (at: string, tool: string) =>
  `${at} warning agent "a" tool "${tool}" is not a tool here or in Claude Code and is ignored`;
const unknownModel = (at: string, model: string) =>
  `${at} warning agent file of "a" names unknown model "${model}"; the agent uses the recipe's model instead`;
const COLON =
  '3:14 warning agent "a": frontmatter "description": its value holds ": ", which YAML reads as a nested key; it is read as one line of text, as Claude Code does';

type Expected =
  /** Loads: the agent's tools, the model id it resolves to, and the warnings (line:col message). */
  | { tools: string; model: string; warnings?: string[] }
  /** Does not load: every problem (line:col message), and the hint of the first. */
  | { problems: string[]; hint?: string };

// The recipe's model is claude-sonnet-4-5: `inherit` and a file without a model resolve to it.
const EXPECTED: Record<string, Expected> = {
  'backend-architect.md': { tools: ALL, model: 'claude-opus-4-6', warnings: [NO_TOOLS] },
  'block-description.md': { tools: 'read,grep,bash', model: 'claude-opus-4-6' },
  'bom-utf8.md': { tools: 'read,grep,find', model: 'claude-haiku-4-5' },
  'code-reviewer.md': { tools: 'read,grep,find,bash', model: 'claude-sonnet-4-6' },
  'crlf-line-endings.md': { tools: 'read,bash,edit', model: 'claude-haiku-4-5' },
  'data-scientist.md': { tools: 'bash,read,write', model: 'claude-sonnet-4-5' },
  'debugger.md': { tools: 'read,edit,bash,grep,find', model: 'claude-sonnet-4-5' },
  'devops-engineer.md': { tools: 'bash,read,write,edit,ls,grep', model: 'claude-sonnet-4-5' },
  'docs-writer.md': { tools: 'read,write,edit,find', model: 'claude-sonnet-4-5' },
  'duplicate-tools.md': { tools: 'read,edit,bash,find,ls', model: 'claude-sonnet-4-5' },
  'empty-tools.md': { tools: ALL, model: 'claude-sonnet-4-5', warnings: [NO_TOOLS] },
  'extra-keys.md': { tools: 'read,edit,bash', model: 'claude-sonnet-4-6' },
  'flow-list-tools.md': { tools: 'read,edit,bash,grep', model: 'claude-sonnet-4-6' },
  'frontend-developer.md': { tools: 'read,write,edit,bash,find', model: 'claude-sonnet-4-6' },
  'git-only-bash.md': {
    tools: 'bash,read',
    model: 'claude-haiku-4-5',
    warnings: [
      `4:8 warning agent "a" tool Bash(git diff:*): the (git diff:*) limit is not applied; limit bash commands with the agent's bash: { allow: [...] } in the recipe`,
      `4:26 warning agent "a" tool Bash(git log:*): the (git log:*) limit is not applied; limit bash commands with the agent's bash: { allow: [...] } in the recipe`,
    ],
  },
  'github-triager.md': {
    tools: 'read,grep',
    model: 'claude-haiku-4-5',
    warnings: [
      ignored('4:20', 'mcp__github__list_issues', 'MCP server "github" is not defined'),
      ignored('4:46', 'mcp__github__add_labels', 'MCP server "github" is not defined'),
    ],
  },
  'lowercase-mixed.md': {
    tools: 'bash,read',
    model: 'claude-sonnet-4-5',
    warnings: [ignored('4:20', 'webfetch', WEB)],
  },
  'model-capitalized.md': { tools: 'read,write', model: 'claude-sonnet-4-6' },
  'model-inherit-only.md': { tools: ALL, model: 'claude-sonnet-4-5', warnings: [NO_TOOLS] },
  'no-frontmatter.md': { tools: ALL, model: 'claude-sonnet-4-5', warnings: [NO_TOOLS] },
  'notebook-analyst.md': {
    tools: 'read,bash',
    model: 'claude-sonnet-4-6',
    warnings: [ignored('4:14', 'NotebookEdit', 'no notebook tool here; edit and write change .ipynb files as JSON')],
  },
  'performance-engineer.md': { tools: 'read,grep,find,bash', model: 'claude-sonnet-4-5' },
  'pi-planner.md': { tools: 'read,grep,find,ls', model: 'claude-sonnet-4-5' },
  'pi-scout.md': { tools: 'read,grep,find,ls,bash', model: 'claude-haiku-4-5' },
  'prompt-engineer.md': { tools: 'read,write', model: 'claude-opus-4-6', warnings: [ignored('4:21', 'WebFetch', WEB)] },
  'quoted-examples.md': { tools: 'read,edit,grep,find,bash', model: 'claude-sonnet-4-6' },
  'refactorer.md': { tools: 'read,edit,grep,find', model: 'claude-sonnet-4-6' },
  'security-auditor.md': { tools: 'read,grep,find', model: 'claude-opus-4-6' },
  'single-quoted.md': { tools: 'read,grep,find', model: 'claude-haiku-4-5' },
  'sql-expert.md': { tools: 'read,write,edit,bash', model: 'claude-sonnet-4-6' },
  'task-orchestrator.md': {
    // TodoWrite is the agent's own items on the run's task board.
    tools: 'read,grep,find,task_create,task_update,task_list',
    model: 'claude-opus-4-6',
    warnings: [
      ignored('4:8', 'Task', 'sub-agents are recipe tasks here (needs:, for_each:), not a tool'),
      `4:32 warning agent "a" tool TodoWrite: the agent's to-do items are items on the run's task board (task_create, task_update, task_list): every agent of the run sees them, and the agent sets owner to its own instance id to keep them apart`,
    ],
  },
  // Claude Code team and hooks files (written for these tests in the style of public collections).
  'team-lead-claude.md': {
    tools: 'read,find,grep,bash,task_create,task_list,task_get,task_update,send_message',
    model: 'claude-opus-4-6',
    warnings: [
      ignored('4:32', 'Agent', 'sub-agents are recipe tasks here (needs:, for_each:), not a tool'),
      ignored(
        '4:39',
        'TeamCreate',
        'the recipe is the team here: its agents: and tasks: (the board and send_message are on)',
      ),
    ],
  },
  'formatter-hooks.md': { tools: 'read,edit,bash,grep', model: 'claude-sonnet-4-5' },
  'plan-reviewer.md': {
    tools: 'read,grep,find,task_create,task_update,task_list',
    model: 'claude-sonnet-4-6',
    warnings: [
      `4:26 warning agent "a" tool TodoWrite: the agent's to-do items are items on the run's task board (task_create, task_update, task_list): every agent of the run sees them, and the agent sets owner to its own instance id to keep them apart`,
      '6:1 warning agent "a": permissionMode: has no effect here: agents run unattended and never ask; every tool they have runs inside the command sandbox',
      '8:1 warning agent "a": skills: names Claude Code skills to preload; they are not loaded from an agent file here',
      '10:1 warning agent "a": memory: persistent agent memory is not kept here; each instance starts from its prompt and the summaries of the tasks it needs',
      '11:1 warning agent "a": effort: is not read from an agent file here',
    ],
  },
  'test-runner.md': { tools: 'bash,read,edit', model: 'claude-haiku-4-5' },
  'web-researcher.md': {
    tools: 'read,write',
    model: 'claude-sonnet-4-6',
    warnings: [ignored('4:8', 'WebSearch', 'no web search tool here'), ignored('4:19', 'WebFetch', WEB)],
  },

  'strict-web.md': {
    problems: [
      `4:14 agent "a" uses tool "WebFetch", which is not available here (${WEB})`,
      '4:24 agent "a" uses tool "WebSearch", which is not available here (no web search tool here)',
    ],
    hint: 'remove it from the agent file, or drop strict_tools so it is ignored with a warning',
  },
  // Claude Code ignores a tool name it has no tool for and runs a file whatever its model says:
  // both load here, with a warning each (strict_tools makes the tool an error).
  'unknown-tool.md': { tools: 'read,find', model: 'claude-haiku-4-5', warnings: [notATool('4:14', 'Serach')] },
  'unknown-model.md': { tools: 'read,grep', model: 'claude-sonnet-4-5', warnings: [unknownModel('5:8', 'gpt-4o')] },
  'tool-and-model.md': {
    tools: 'read,bash',
    model: 'claude-sonnet-4-5',
    warnings: [notATool('4:14', 'Deploy'), unknownModel('5:8', 'claude-3-5-sonnet-20241022')],
  },

  'yaml-at-sign.md': {
    problems: ['3:14 frontmatter: invalid YAML: Plain value cannot start with reserved character @'],
    hint: QUOTE,
  },
  'yaml-backtick.md': {
    problems: ['3:14 frontmatter: invalid YAML: Plain value cannot start with reserved character `'],
    hint: QUOTE,
  },
  'yaml-bracket-start.md': { problems: ['3:21 frontmatter: invalid YAML: Unexpected scalar at node end'], hint: QUOTE },
  // One line with ": " inside: Claude Code reads it as text, so do we (with a warning); a value
  // continued on further lines stays an error (Claude Code fails on it too).
  'yaml-colon-in-description.md': { tools: 'read,write,edit', model: 'claude-haiku-4-5', warnings: [COLON] },
  'yaml-examples-inline.md': { tools: 'read,grep,find', model: 'claude-sonnet-4-6', warnings: [COLON] },
  'yaml-multiline-examples.md': {
    problems: ['3:14 frontmatter: invalid YAML: Nested mappings are not allowed in compact mappings'],
    hint: QUOTE,
  },
  'yaml-quote-then-text.md': {
    problems: ['3:25 frontmatter: invalid YAML: Unexpected scalar at node end'],
    hint: QUOTE,
  },
  'yaml-tab-indent.md': {
    problems: [
      '5:1 frontmatter: invalid YAML: Tabs are not allowed as indentation',
      '6:1 frontmatter: invalid YAML: Tabs are not allowed as indentation',
    ],
    hint: 'indent with spaces, not tabs',
  },
};

function load(file: string) {
  const recipe = join(tmp, `${file}.yaml`);
  writeFileSync(
    recipe,
    [
      'name: corpus',
      'model: claude-sonnet-4-5',
      'agents:',
      `  a: { system_file: ${JSON.stringify(join(FIXTURES, file))} }`,
      'tasks:',
      '  - id: t',
      '    prompt: go',
      '',
    ].join('\n'),
  );
  return loadRecipe(recipe, { cwd: FIXTURES, env: {} });
}

describe('agent files from public collections load as they are', () => {
  it('the corpus has at least 40 files and every one has an expected outcome', () => {
    const files = readdirSync(FIXTURES)
      .filter((f) => f.endsWith('.md'))
      .sort();
    expect(files.length).toBeGreaterThanOrEqual(40);
    expect(files).toEqual(Object.keys(EXPECTED).sort());
  });

  it.each(Object.entries(EXPECTED))('%s', (file, expected) => {
    const r = load(file);
    if ('problems' in expected) {
      expect(r.ok, 'expected the recipe to be invalid').toBe(false);
      if (r.ok) return;
      expect(r.problems.every((p) => p.file === file)).toBe(true); // positions point into the agent file
      expect(
        r.problems.map((p) => `${p.line}:${p.col} ${p.severity === 'warning' ? 'warning ' : ''}${p.message}`),
      ).toEqual(expected.problems);
      if (expected.hint !== undefined) expect(r.problems[0]!.hint).toBe(expected.hint);
      return;
    }
    if (!r.ok)
      throw new Error(
        `expected ${file} to load, got:\n${r.problems.map((p) => `${p.line}:${p.col} ${p.message}`).join('\n')}`,
      );
    const agent = r.recipe.agents.a!;
    expect(agent.tools.join(',')).toBe(expected.tools);
    expect(getModel(agent.model)?.id).toBe(expected.model);
    expect(r.warnings.map((w) => `${w.line}:${w.col} warning ${w.message}`)).toEqual(expected.warnings ?? []);
    expect(r.warnings.every((w) => w.file === file)).toBe(true);
    expect(agent.system?.length).toBeGreaterThan(20);
  });

  it('formatter-hooks.md: its hooks, maxTurns and disallowedTools reach the agent', () => {
    const r = load('formatter-hooks.md');
    if (!r.ok) throw new Error(r.problems.map((p) => p.message).join('\n'));
    const a = r.recipe.agents.a!;
    expect(a.maxTurns).toBe(25);
    expect(a.disallowedTools).toEqual(['write']);
    expect(a.commandHooks?.PreToolUse?.[0]).toMatchObject({ matcher: 'Bash', hooks: [{ timeout: 10 }] });
    expect(a.commandHooks?.PostToolUse?.[0]?.matcher).toBe('Edit|MultiEdit');
  });

  it('the recipe can still choose: its own tools and model win over the file', () => {
    const recipe = join(tmp, 'override.yaml');
    writeFileSync(
      recipe,
      [
        'name: o',
        'agents:',
        `  a: { system_file: ${JSON.stringify(join(FIXTURES, 'tool-and-model.md'))}, tools: [read], model: claude-haiku-4-5 }`,
        'tasks:',
        '  - id: t',
        '    prompt: go',
        '',
      ].join('\n'),
    );
    const r = loadRecipe(recipe, { cwd: FIXTURES, env: {} });
    expect(r.ok && { tools: r.recipe.agents.a!.tools, model: r.recipe.agents.a!.model, warnings: r.warnings }).toEqual({
      tools: ['read'],
      model: 'claude-haiku-4-5',
      warnings: [],
    });
  });

  it('warnings are reported together with errors when a recipe is invalid', () => {
    const recipe = join(tmp, 'both.yaml');
    writeFileSync(
      recipe,
      [
        'name: b',
        'agents:',
        `  a: { system_file: ${JSON.stringify(join(FIXTURES, 'prompt-engineer.md'))} }`,
        `  b: { system_file: ${JSON.stringify(join(FIXTURES, 'unknown-tool.md'))}, strict_tools: true }`,
        'tasks:',
        '  - id: t',
        '    agent: a',
        '    prompt: go',
        '',
      ].join('\n'),
    );
    const r = loadRecipe(recipe, { cwd: FIXTURES, env: {} });
    expect(r.ok ? [] : r.problems.map((p) => `${p.file} ${p.severity ?? 'error'}`)).toEqual([
      'prompt-engineer.md warning',
      'unknown-tool.md error',
    ]);
  });

  it('strict_tools: true on the recipe agent makes the unavailable tools errors', () => {
    const recipe = join(tmp, 'strict.yaml');
    writeFileSync(
      recipe,
      [
        'name: s',
        'agents:',
        `  a: { system_file: ${JSON.stringify(join(FIXTURES, 'web-researcher.md'))}, strict_tools: true }`,
        'tasks:',
        '  - id: t',
        '    prompt: go',
        '',
      ].join('\n'),
    );
    const r = loadRecipe(recipe, { cwd: FIXTURES, env: {} });
    expect(
      r.ok ? [] : r.problems.map((p) => `${p.file}:${p.line}:${p.col} ${p.severity ?? 'error'} ${p.message}`),
    ).toEqual([
      'web-researcher.md:4:8 error agent "a" uses tool "WebSearch", which is not available here (no web search tool here)',
      `web-researcher.md:4:19 error agent "a" uses tool "WebFetch", which is not available here (${WEB})`,
    ]);
  });
});
