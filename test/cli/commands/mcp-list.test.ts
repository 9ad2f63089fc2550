// `orchestrate mcp list [recipe]`: the servers a recipe's agents get, started for real to list
// their tools under the names agents see; a server that cannot start is said so (exit 1). The
// dry run names each agent's servers and files, and with --list-mcp lists the tools it would get.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { runCli } from '../run-cli.js';
import { until } from '../../tools/mcp/helpers.js';
import { CALLS, env, processesWith, removeDirs, setup } from '../../tools/mcp/run-setup.js';

afterEach(removeDirs);

describe('orchestrate mcp list', () => {
  it('lists each server of a recipe, the agents that get it, and its tools; --json; the dry run names servers; a server that does not start', async () => {
    const s = setup(CALLS);
    const recipe = join(s.dir, 'recipe.yaml');
    const r = await runCli(['mcp', 'list', recipe], { cwd: s.dir, env: env(s.dir) });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toMatch(/^alpha {2}stdio {2}\S+node\S* \S+stdio-server\.mjs alpha/m);
    expect(r.stdout).toMatch(/defined in recipe\.yaml; agents: helper/);
    expect(r.stdout).toMatch(/defined in helper\.md; agents: helper/);
    expect(r.stdout).toMatch(/^ {4}mcp__alpha__echo {2}Echoes the text back/m);
    expect(r.stdout).toMatch(/^ {4}mcp__plain__slow /m);

    const json = await runCli(['mcp', 'list', recipe, '--json', '--no-start'], { cwd: s.dir, env: env(s.dir) });
    const parsed = JSON.parse(json.stdout) as { servers: { name: string; started?: boolean; tools?: unknown[] }[] };
    expect(parsed.servers.map((x) => x.name).sort()).toEqual(['alpha', 'plain']);
    expect(parsed.servers.every((x) => x.started === undefined && x.tools === undefined)).toBe(true);

    // The dry run names each agent's servers and their files, and says it did not start them.
    const dry = await runCli(['run', recipe, '--dry-run'], { cwd: s.dir, env: env(s.dir) });
    expect(dry.code, dry.stderr).toBe(0);
    expect(dry.stdout).toContain('MCP: agent helper gets alpha (recipe.yaml), plain (helper.md)');
    expect(dry.stdout).toContain(
      'MCP servers were not started, so their tools are not listed: --list-mcp starts them (or orchestrate mcp list recipe.yaml)',
    );
    expect(processesWith(s.marker)).toEqual([]);
    // --list-mcp starts them and lists the tools this agent may use (its mcp__ tools pick), then ends them.
    const listed = await runCli(['run', recipe, '--dry-run', '--list-mcp'], { cwd: s.dir, env: env(s.dir) });
    expect(listed.code, listed.stderr).toBe(0);
    expect(listed.stdout).toMatch(/^ {4}alpha: mcp__alpha__echo, mcp__alpha__env, mcp__alpha__slow$/m);
    expect(listed.stdout).toMatch(/^ {4}plain: mcp__plain__echo, mcp__plain__add, .*mcp__plain__slow/m);
    expect(listed.stdout).not.toContain('were not started');
    const listedJson = await runCli(['run', recipe, '--dry-run', '--list-mcp', '--json'], {
      cwd: s.dir,
      env: env(s.dir),
    });
    const report = JSON.parse(listedJson.stdout) as {
      mcp: { agents: { name: string; servers: { server: string; source: string; tools: string[] }[] }[] };
    };
    expect(report.mcp.agents[0]!.servers[0]).toMatchObject({ server: 'alpha', source: 'recipe.yaml' });
    await until(() => processesWith(s.marker).length === 0, 'listed servers to end');
    const misuse = await runCli(['run', recipe, '--list-mcp'], { cwd: s.dir, env: env(s.dir) });
    expect(misuse.code).toBe(2);
    expect(misuse.stderr).toContain('add --dry-run');

    // A .mcp.json in the current folder, listed without a recipe: a server that exits at start.
    writeFileSync(
      join(s.dir, '.mcp.json'),
      JSON.stringify({
        mcpServers: {
          broken: { command: process.execPath, args: ['-e', 'process.exit(5)'], sandbox: 'none', startup_timeout: 20 },
        },
      }),
    );
    // (An unconfined server of the folder's own .mcp.json starts only when the folder is trusted.)
    const broken = await runCli(['mcp', 'list', '--trust-repo-config'], { cwd: s.dir, env: env(s.dir) });
    expect(broken.code).toBe(1);
    expect(broken.stdout).toMatch(/^broken {2}stdio/m);
    expect(broken.stdout).toMatch(/does not start: MCP server "broken" could not be started: /);
  }, 60_000);

  it('a broken .mcp.json is a usage error naming the file (it was "No MCP servers configured", exit 0); an entry with an unset ${VAR} shows what it runs', async () => {
    const s = setup(CALLS);
    const file = join(s.dir, '.mcp.json');
    writeFileSync(file, '{ "mcpServers": { "a": { "command": "x" } }');
    const bad = await runCli(['mcp', 'list'], { cwd: s.dir, env: env(s.dir) });
    expect(bad.code).toBe(2);
    expect(bad.stdout).toBe('');
    expect(bad.stderr).toMatch(new RegExp(`^orchestrate mcp list: ${file}: not valid JSON: `));
    writeFileSync(file, JSON.stringify({ mcpServers: { a: { command: 5 } } }));
    const shape = await runCli(['mcp', 'list', '--no-start'], { cwd: s.dir, env: env(s.dir) });
    expect(shape.code).toBe(2);
    expect(shape.stderr).toContain(`${file}: mcpServers.a: an MCP server is {command, args, env, cwd} (stdio)`);

    writeFileSync(file, JSON.stringify({ mcpServers: { b: { command: 'db-mcp', args: ['${MCP_LIST_UNSET_VAR}'] } } }));
    const unset = await runCli(['mcp', 'list', '--no-start'], { cwd: s.dir, env: env(s.dir) });
    expect(unset.code).toBe(1);
    expect(unset.stdout.split('\n')[0]).toBe('b  stdio  db-mcp ${MCP_LIST_UNSET_VAR}');
    expect(unset.stdout).toContain(
      'does not start: MCP server "b": environment variable MCP_LIST_UNSET_VAR is not set',
    );
  }, 60_000);
});
