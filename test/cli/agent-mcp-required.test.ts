// `orchestrate agent --mcp-config servers.json` with a server the agent needs that cannot start
// (a missing binary, no answer to initialize, a refused connection) or stops for good: exit 1
// with the cause on stderr, before any model call (it went on with one notice and exit 0, the
// model missing the tools it was told to use). `"optional": true` keeps the old way: a warning,
// exit 0, and the model is told which server is missing. The real CLI in a child process, the
// scripted provider (its json events show whether a model call happened), real server processes.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { runAgentCli } from '../runtime/helpers/agent-cli.js';
import { STDIO_FIXTURE } from '../tools/mcp/helpers.js';
import { hasStackTrace } from './run-cli.js';

const dir = mkdtempSync(join(tmpdir(), 'agent-mcp-required-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const TOKEN = 'tok-agent-mcp-do-not-print-5521';
const HINT = 'add "optional": true to the entry to go on without its tools';

/** A port nothing listens on: taken from the system, then released. */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  const port = (server.address() as { port: number }).port;
  await new Promise<void>((done) => server.close(() => done()));
  return port;
}

/** Runs the agent in json mode with the servers `servers` and the script `script` (turns). */
async function agent(name: string, servers: Record<string, unknown>, script: string) {
  const config = join(dir, `${name}.json`);
  writeFileSync(config, JSON.stringify({ mcpServers: servers }));
  const turns = join(dir, `${name}.yaml`);
  writeFileSync(turns, script);
  const args = ['--script', turns, '--cwd', dir, '--no-session', '--mode', 'json', '--mcp-config', config, 'go'];
  const env = { ORCHESTRATE_HOME: join(dir, 'home'), ANTHROPIC_API_KEY: undefined, MCP_TEST_TOKEN: TOKEN };
  return runAgentCli(args, { env, timeoutMs: 60_000 });
}

const ANSWER = '- text: "the model answered"\n';

describe('orchestrate agent --mcp-config: a server the agent needs', () => {
  it('that cannot start (missing binary, silent, refused, its stderr echoing a token) is exit 1 with the cause, before any model call', async () => {
    const port = await closedPort();
    const cases: [string, Record<string, unknown>, RegExp][] = [
      [
        'nobinary',
        { command: 'sh', args: ['-c', 'no-such-mcp-server-binary'] },
        /^orchestrate agent: MCP server "nobinary" could not be started: sh: 1: no-such-mcp-server-binary: not found \(its command `sh` exited with code 127 before it answered initialize\)$/m,
      ],
      [
        'silent',
        { command: process.execPath, args: ['-e', 'setInterval(() => {}, 1000)'], initialize_timeout: '1s' },
        /^orchestrate agent: MCP server "silent" could not be started: no answer to initialize in 1 s \(initialize_timeout\); is it an MCP server speaking on stdin\/stdout\?$/m,
      ],
      [
        'refused',
        { type: 'http', url: `http://127.0.0.1:${port}/mcp` },
        new RegExp(
          `^orchestrate agent: MCP server "refused" could not be started: connection refused at http://127\\.0\\.0\\.1:${port}/mcp`,
          'm',
        ),
      ],
      [
        'leaky',
        {
          command: 'sh',
          args: ['-c', 'echo "token $LEAKY_TOKEN refused" >&2; exit 1'],
          env: { LEAKY_TOKEN: '${MCP_TEST_TOKEN}' },
        },
        /^orchestrate agent: MCP server "leaky" could not be started: token \[REDACTED:MCP_TEST_TOKEN\] refused/m,
      ],
    ];
    const runs = await Promise.all(cases.map(([name, server]) => agent(name, { [name]: server }, ANSWER)));
    for (const [i, r] of runs.entries()) {
      const [name, , cause] = cases[i]!;
      expect(r.code, `${name}: ${r.stderr}`).toBe(1);
      expect(r.stderr, name).toMatch(cause);
      expect(r.stderr, name).toContain(HINT);
      expect(r.stderr, name).not.toContain(TOKEN);
      expect(hasStackTrace(r.stderr), name).toBe(false);
      // No model call: the json mode wrote no event at all.
      expect(r.stdout, name).toBe('');
    }
  }, 90_000);

  it('that stops for good during the prompt (crashed twice) stops the agent: exit 1 with the cause', async () => {
    const crashes = '- tools: [{ name: mcp__alpha__crash, args: {} }]\n';
    const r = await agent(
      'crashy',
      { alpha: { command: process.execPath, args: [STDIO_FIXTURE, 'alpha'] } },
      `${crashes}${crashes}${crashes}- text: "went on without the server"\n`,
    );
    expect(r.code, r.stderr).toBe(1);
    expect(r.stderr).toMatch(
      /^orchestrate agent: MCP server "alpha" stopped \(exit code 3\) after it had already been restarted once/m,
    );
    expect(r.stdout).not.toContain('went on without the server');
  }, 60_000);

  it('marked "optional": true is a warning: exit 0, and the model is told which server is missing and why', async () => {
    const script = [
      'conversations:',
      `  - match: 'MCP servers are unavailable in this session[\\s\\S]*"ghost" \\(tools mcp__ghost__\\*\\): MCP server "ghost" could not be started'`,
      '    turns:',
      '      - text: "told about ghost"',
      '  - match: "[\\\\s\\\\S]"',
      '    turns:',
      '      - text: "not told"',
      '',
    ].join('\n');
    const r = await agent(
      'optional',
      { ghost: { command: 'sh', args: ['-c', 'no-such-mcp-server-binary'], optional: true } },
      script,
    );
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toMatch(
      /^warning: MCP server "ghost" could not be started: .*no-such-mcp-server-binary: not found.*; it is optional: the agent goes on without its tools$/m,
    );
    expect(r.stderr).not.toContain(HINT);
    expect(r.stdout).toContain('told about ghost');
    expect(r.stdout).not.toContain('not told');
  }, 60_000);
});
