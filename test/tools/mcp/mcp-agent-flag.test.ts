// `orchestrate agent --mcp-config FILE`: a single agent (the real CLI in a child process, the
// scripted provider) uses the tools of the servers a .mcp.json-shaped file names, with --tools
// picking among them; a missing file or an unset ${VAR} is a usage error naming the file and server.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mcpConfigFromFiles } from '../../../src/cli/agent-mcp-config.js';
import { AgentSessionConfigError } from '../../../src/runtime/create-agent-session.js';
import { runAgentCli } from '../../runtime/helpers/agent-cli.js';
import { STDIO_FIXTURE, until } from './helpers.js';
import { processesWith } from './run-setup.js';

const dir = mkdtempSync(join(tmpdir(), 'mcp-agent-flag-'));
const marker = `mcp-agent-flag-${process.pid}-${Math.random().toString(36).slice(2)}`;
beforeAll(() => {
  writeFileSync(
    join(dir, 'servers.json'),
    JSON.stringify({
      mcpServers: {
        alpha: { command: process.execPath, args: [STDIO_FIXTURE, 'alpha', marker], env: { GREETING: 'hey' } },
      },
    }),
  );
  writeFileSync(
    join(dir, 'unset.json'),
    JSON.stringify({
      mcpServers: {
        web: {
          type: 'http',
          url: 'https://example.com/mcp',
          headers: { Authorization: 'Bearer ${MCP_SURELY_UNSET_VAR}' },
        },
      },
    }),
  );
  writeFileSync(
    join(dir, 'calls.yaml'),
    [
      '- tools:',
      '    - { name: mcp__alpha__echo, args: { text: hi } }',
      '    - { name: mcp__alpha__env, args: { name: GREETING } }',
      '    - { name: mcp__alpha__add, args: { a: 1, b: 2 } }',
      '- text: "all done"',
      '',
    ].join('\n'),
  );
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const env = () => ({ ORCHESTRATE_HOME: join(dir, 'home'), ANTHROPIC_API_KEY: undefined });
const base = ['--script', join(dir, 'calls.yaml'), '--cwd', dir, '--no-session', '--mode', 'json'];

describe('orchestrate agent --mcp-config', () => {
  it("the agent calls the file's servers' tools; --tools mcp__alpha__echo,mcp__alpha__env leaves add out", async () => {
    const r = await runAgentCli(
      [...base, '--mcp-config', join(dir, 'servers.json'), '--tools', 'read,mcp__alpha__echo,mcp__alpha__env', 'go'],
      { env: env(), timeoutMs: 40_000 },
    );
    expect(r.code, r.stderr).toBe(0);
    const ends = r.stdout
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { type: string; toolName?: string; isError?: boolean; result?: unknown })
      .filter((e) => e.type === 'tool_execution_end');
    const byTool = new Map(ends.map((e) => [e.toolName, e]));
    expect(JSON.stringify(byTool.get('mcp__alpha__echo')?.result)).toContain('alpha: hi');
    expect(JSON.stringify(byTool.get('mcp__alpha__env')?.result)).toContain('GREETING=hey');
    expect(byTool.get('mcp__alpha__add')?.isError).toBe(true);
    await until(() => processesWith(marker).length === 0, 'the server to end with the agent');
  }, 60_000);

  it('a missing file and an unset ${VAR} are configuration errors (exit 2) naming the file and the server', () => {
    expect(() => mcpConfigFromFiles(['nope.json'], dir, {})).toThrow(/--mcp-config nope\.json: no such file/);
    expect(() => mcpConfigFromFiles(['unset.json'], dir, {})).toThrow(
      /--mcp-config unset\.json: mcpServers\.web\.headers\.Authorization: .*MCP_SURELY_UNSET_VAR is not set/,
    );
    expect(() => mcpConfigFromFiles(['unset.json'], dir, {})).toThrow(AgentSessionConfigError);
    const ok = mcpConfigFromFiles(['servers.json'], dir, {});
    expect(ok?.mcp.servers.map((x) => [x.name, x.env])).toEqual([['alpha', { GREETING: 'hey' }]]);
  });
});
