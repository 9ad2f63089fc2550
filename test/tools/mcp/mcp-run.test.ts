// MCP servers in recipe runs: a recipe's mcp_servers and a Claude Code agent file with
// mcpServers and mcp__ tools validate, the agents get those tools in worker threads, a
// `scope: run` server is started once for a fan-out over several threads, bad entries are file:line:col problems,
// and no server process is left after the run.
import { mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { runCli } from '../../cli/run-cli.js';
import { until } from './helpers.js';
import { allFiles, CALLS, dirs, env, processesWith, removeDirs, setup } from './run-setup.js';

afterEach(removeDirs);

describe('MCP servers in recipe runs', () => {
  it('a Claude Code agent file with mcpServers and mcp__ tools validates, and its agents get and call those tools (one server each: scope agent)', async () => {
    const s = setup(CALLS, { items: 2 });
    const recipe = join(s.dir, 'recipe.yaml');
    const validated = await runCli(['validate', recipe], { cwd: s.dir, env: env(s.dir) });
    expect(validated.stderr + validated.stdout).not.toMatch(/error/i);
    expect(validated.code).toBe(0);
    const run = await runCli(['run', recipe], { cwd: s.dir, env: env(s.dir) });
    expect(run.code, run.stderr).toBe(0);
    const sessions = allFiles(join(s.dir, '.orchestrate')).filter((f) => f.endsWith('.jsonl'));
    const text = sessions.map((f) => readFileSync(f, 'utf8')).join('\n');
    expect(text).toContain('alpha: hi');
    expect(text).toContain('GREETING=hello');
    expect(text).toContain('plain: there');
    // scope: agent: one server per agent.
    expect(readFileSync(s.pidFile, 'utf8').trim().split('\n')).toHaveLength(2);
    await until(() => processesWith(s.marker).length === 0, 'servers to end after the run');
  }, 90_000);

  it('scope: run is one server per run, shared by agents on different threads (hosted by the coordinator)', async () => {
    const s = setup(CALLS, { scope: 'run', items: 4 });
    const run = await runCli(['run', join(s.dir, 'recipe.yaml'), '--concurrency', '2', '--agents-per-thread', '1'], {
      cwd: s.dir,
      env: env(s.dir),
    });
    expect(run.code, run.stderr).toBe(0);
    const sessions = allFiles(join(s.dir, '.orchestrate')).filter(
      (f) => f.endsWith('.jsonl') && !f.endsWith('run.jsonl'),
    );
    const answered = sessions.filter((f) => readFileSync(f, 'utf8').includes('plain: there'));
    expect(answered).toHaveLength(4);
    expect(readFileSync(s.pidFile, 'utf8').trim().split('\n')).toHaveLength(1);
    await until(() => processesWith(s.marker).length === 0, 'servers to end after the run');
  }, 90_000);

  it('an unknown server, a bad URL and a missing ${VAR} are validate errors with file:line:col', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'mcp-bad-'));
    dirs.push(dir);
    mkdirSync(join(dir, 'home'));
    writeFileSync(
      join(dir, 'recipe.yaml'),
      [
        'name: bad-mcp',
        'mcp_servers:',
        '  web:',
        '    type: http',
        '    url: "not a url"',
        '  gh:',
        '    type: http',
        '    url: https://api.example.com/mcp',
        '    headers: { Authorization: "Bearer ${MCP_TEST_SURELY_UNSET_TOKEN}" }',
        'agents:',
        '  a:',
        '    mcp_servers: [web, gh, nope]',
        '    tools: [read, mcp__github__create_issue]',
        'tasks:',
        '  - id: t',
        '    agent: a',
        '    prompt: go',
        '',
      ].join('\n'),
    );
    const r = await runCli(['validate', join(dir, 'recipe.yaml')], { cwd: dir, env: env(dir) });
    expect(r.code).not.toBe(0);
    const out = r.stdout + r.stderr;
    expect(out).toMatch(/recipe\.yaml:5:\d+: .*"not a url" is not an http\(s\) URL/);
    expect(out).toMatch(/recipe\.yaml:9:\d+: .*environment variable MCP_TEST_SURELY_UNSET_TOKEN is not set/);
    expect(out).toMatch(/recipe\.yaml:12:\d+: agent "a" names MCP server "nope", which is not defined/);
    expect(out).toMatch(
      /recipe\.yaml:13:\d+: agent "a" tool "mcp__github__create_issue" names MCP server "github", which is not defined/,
    );
  });
});
