// What a user sees from `orchestrate validate` and `run` with Claude Code agent files and globs:
// warnings on stderr with exit 0, every problem at file:line:col with exit 2, no stack trace.
import { cpSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { hasStackTrace, runCli } from './run-cli.js';

const AGENTS = resolve(import.meta.dirname, '../fixtures/agent-files');
const dir = mkdtempSync(join(tmpdir(), 'orchestrate-agent-files-cli-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
mkdirSync(join(dir, 'agents'));
for (const f of [
  'prompt-engineer.md',
  'tool-and-model.md',
  'yaml-colon-in-description.md',
  'yaml-multiline-examples.md',
  'code-reviewer.md',
])
  cpSync(join(AGENTS, f), join(dir, 'agents', f));

const recipe = (name: string, agentFile: string, extra: string[] = []) => {
  writeFileSync(
    join(dir, name),
    [
      'name: r',
      'model: claude-sonnet-4-5',
      'agents:',
      `  writer: { system_file: agents/${agentFile} }`,
      'tasks:',
      '  - id: t',
      '    prompt: go',
      ...extra,
      '',
    ].join('\n'),
  );
  return name;
};

describe('validate with agent files and globs', () => {
  it('a file with a Claude Code tool missing here is valid, with a warning at its position', async () => {
    const r = await runCli(['validate', recipe('warn.yaml', 'prompt-engineer.md')], { cwd: dir });
    expect(r.code).toBe(0);
    expect(r.stdout).toBe('warn.yaml: ok (1 task, 1 agent)\n');
    expect(r.stderr).toContain(
      'agents/prompt-engineer.md:4:21: warning: agent "writer" tool "WebFetch" is not available here and is ignored',
    );
  });

  it('a tool and a model that cannot be used are both reported in one pass (warnings, as Claude Code runs such a file)', async () => {
    const r = await runCli(['validate', recipe('two.yaml', 'tool-and-model.md')], { cwd: dir });
    expect(r.code).toBe(0);
    expect(r.stderr).toContain(
      'agents/tool-and-model.md:4:14: warning: agent "writer" tool "Deploy" is not a tool here or in Claude Code and is ignored',
    );
    expect(r.stderr).toContain(
      'agents/tool-and-model.md:5:8: warning: agent file of "writer" names unknown model "claude-3-5-sonnet-20241022"; the agent uses the recipe\'s model instead',
    );
  });

  it('invalid YAML in the frontmatter says where and to quote the value; a one-line value with ": " is read as text', async () => {
    const r = await runCli(['validate', recipe('yaml.yaml', 'yaml-multiline-examples.md')], { cwd: dir });
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(
      /^agents\/yaml-multiline-examples\.md:3:14: frontmatter: invalid YAML: .*\n {2}hint: quote the value of description: write description: '\.\.\.'/m,
    );
    expect(hasStackTrace(r.stderr)).toBe(false);
    const one = await runCli(['validate', recipe('yaml1.yaml', 'yaml-colon-in-description.md')], { cwd: dir });
    expect(one.code).toBe(0);
    expect(one.stderr).toContain(
      'agents/yaml-colon-in-description.md:3:14: warning: agent "writer": frontmatter "description": its value holds ": "',
    );
  });

  it('a writes glob that repeats its cwd (written for the old recipe-relative rule) gets a warning saying how to fix it', async () => {
    const name = recipe('cwd-writes.yaml', 'prompt-engineer.md', [
      '    for_each: [svc/a]',
      '    cwd: ${{ item }}',
      '    writes: ["${{ item }}/src/**", "docs/**"]',
    ]);
    const r = await runCli(['validate', name], { cwd: dir });
    expect(r.code).toBe(0);
    expect(r.stderr).toContain(
      'cwd-writes.yaml:10:14: warning: task "t" writes[0] "${{ item }}/src/**" starts with its cwd, but writes globs are relative to the task\'s cwd',
    );
    expect(r.stderr).toContain('hint: drop the cwd from the glob: "src/**"');
    expect(r.stderr).not.toContain('writes[1]');
  });

  it('a malformed glob fails validate and run before any model call, without a stack trace', async () => {
    const name = recipe('glob.yaml', 'prompt-engineer.md', [
      '    for_each: { glob: "projects/[z-a]*" }',
      '    writes: ["[z-a]/**"]',
    ]);
    for (const argv of [
      ['validate', name],
      ['run', name, '--provider', 'scripted'],
    ]) {
      const r = await runCli(argv, { cwd: dir });
      expect(r.code).toBe(2);
      expect(r.stderr).toContain(
        'glob.yaml:8:23: task "t" for_each.glob: "projects/[z-a]*" is not a valid glob: a character range goes backwards (z-a)',
      );
      expect(r.stderr).toContain('glob.yaml:9:14: task "t" writes[0]: "[z-a]/**" is not a valid glob');
      expect(hasStackTrace(r.stderr)).toBe(false);
    }
  });

  it('a Claude Code agent file runs with its tools: Glob is the find tool, Grep the grep tool (offline, scripted)', async () => {
    const work = join(dir, 'e2e');
    mkdirSync(join(work, 'src'), { recursive: true });
    writeFileSync(join(work, 'src', 'a.ts'), 'export const a = 1;\n');
    writeFileSync(join(work, 'src', 'b.js'), 'module.exports = 2;\n');
    writeFileSync(
      join(work, 'script.yaml'),
      [
        'conversations:',
        '  - match: "Review"',
        '    turns:',
        '      - tools: [{ name: find, args: { pattern: "*.@(ts|js)" } }, { name: grep, args: { pattern: "^export", glob: "**/*.ts" } }]',
        '      - text: "reviewed"',
        '',
      ].join('\n'),
    );
    writeFileSync(
      join(work, 'recipe.yaml'),
      [
        'name: e2e',
        'provider: scripted',
        'script: script.yaml',
        'agents:',
        '  reviewer: { system_file: ../agents/code-reviewer.md }',
        'tasks:',
        '  - id: review',
        '    prompt: Review the code',
        '',
      ].join('\n'),
    );
    const r = await runCli(['run', 'recipe.yaml'], { cwd: work });
    expect(r.code, r.stderr).toBe(0);
    const runs = join(work, '.orchestrate', 'runs');
    const session = readFileSync(join(runs, readdirSync(runs)[0]!, 'sessions', 'review.jsonl'), 'utf8');
    const results = session
      .trim()
      .split('\n')
      .map(
        (l) =>
          JSON.parse(l) as {
            message?: { role: string; toolName?: string; isError?: boolean; content?: { text?: string }[] };
          },
      )
      .filter((e) => e.message?.role === 'toolResult')
      .map((e) => `${e.message!.toolName} ${e.message!.isError ? 'error' : 'ok'}: ${e.message!.content?.[0]?.text}`);
    expect(results).toEqual(['find ok: src/a.ts\nsrc/b.js', 'grep ok: src/a.ts:1: export const a = 1;']);
  });
});
