// Repositories' own MCP configuration: a batch over repositories that each carry a .mcp.json
// starts none of their servers, unless the task opts in with `trust_repo_config: true`; then
// each instance's agent gets the servers of the repository it works in. A name only a
// repository defines is a validate warning, not an error, under the opt-in.
import { existsSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { runCli } from '../../cli/run-cli.js';
import { STDIO_FIXTURE, until } from './helpers.js';
import { allFiles, dirs, env, processesWith, removeDirs } from './run-setup.js';

afterEach(removeDirs);

/** Two repositories with a .mcp.json each (server "repo", the stdio fixture), and a recipe over them. */
function batch(task: string[], agent: string[]): { dir: string; marker: string; pidFiles: string[] } {
  const dir = mkdtempSync(join(tmpdir(), 'mcp-repos-'));
  dirs.push(dir);
  mkdirSync(join(dir, 'home'));
  const marker = `mcp-repo-${process.pid}-${Math.random().toString(36).slice(2)}`;
  // In the repository: a sandboxed server may write only there.
  const pidFiles = ['a', 'b'].map((name) => join(dir, 'repos', name, 'server.pid'));
  for (const name of ['a', 'b']) {
    mkdirSync(join(dir, 'repos', name), { recursive: true });
    writeFileSync(
      join(dir, 'repos', name, '.mcp.json'),
      JSON.stringify({
        mcpServers: {
          repo: {
            command: process.execPath,
            args: [STDIO_FIXTURE, `repo-${name}`, marker],
            env: { MCP_FIXTURE_PID_FILE: join(dir, 'repos', name, 'server.pid') },
          },
        },
      }),
    );
  }
  writeFileSync(
    join(dir, 'recipe.yaml'),
    [
      'name: repo-trust',
      'provider: scripted',
      'script: script.yaml',
      'concurrency: 1',
      'agents:',
      '  fixer:',
      '    system: You fix.',
      ...agent.map((l) => `    ${l}`),
      'tasks:',
      '  - id: fix',
      '    agent: fixer',
      '    for_each: { glob: "repos/*" }',
      '    cwd: "${{ item }}"',
      '    prompt: fix',
      ...task.map((l) => `    ${l}`),
      '',
    ].join('\n'),
  );
  writeFileSync(
    join(dir, 'script.yaml'),
    'turns:\n  - tools:\n      - { name: mcp__repo__echo, args: { text: hi } }\n  - text: done\n',
  );
  return { dir, marker, pidFiles };
}

function sessionsText(dir: string): string {
  return allFiles(join(dir, '.orchestrate'))
    .filter((f) => f.endsWith('.jsonl'))
    .map((f) => readFileSync(f, 'utf8'))
    .join('\n');
}

describe('trust_repo_config', () => {
  it('without it, a batch over repositories that carry a .mcp.json starts none of their servers', async () => {
    const b = batch([], []);
    const run = await runCli(['run', join(b.dir, 'recipe.yaml')], { cwd: b.dir, env: env(b.dir) });
    expect(run.code, run.stderr).toBe(0);
    expect(b.pidFiles.filter(existsSync)).toEqual([]);
    const text = sessionsText(b.dir);
    expect(text).not.toContain('repo-a: hi');
    expect(text).toMatch(/mcp__repo__echo/); // the call was made and answered as an unknown tool
    expect(processesWith(b.marker)).toEqual([]);
  }, 90_000);

  it('with it, each agent gets the servers of the repository it works in; a repository-only name is a warning', async () => {
    const b = batch(['trust_repo_config: true'], ['tools: [read, mcp__repo__echo]']);
    const recipe = join(b.dir, 'recipe.yaml');
    const validated = await runCli(['validate', recipe], { cwd: b.dir, env: env(b.dir) });
    expect(validated.code, validated.stdout + validated.stderr).toBe(0);
    expect(validated.stdout + validated.stderr).toMatch(
      /recipe\.yaml:\d+:\d+: warning: agent "fixer" tool "mcp__repo__echo" names MCP server "repo", which is not defined on your side; .*trust_repo_config/,
    );
    const run = await runCli(['run', recipe], { cwd: b.dir, env: env(b.dir) });
    expect(run.code, run.stderr).toBe(0);
    const text = sessionsText(b.dir);
    expect(text).toContain('repo-a: hi');
    expect(text).toContain('repo-b: hi');
    for (const f of b.pidFiles) expect(readFileSync(f, 'utf8').trim().split('\n')).toHaveLength(1);
    await until(() => processesWith(b.marker).length === 0, 'repository servers to end after the run');
  }, 90_000);
});
