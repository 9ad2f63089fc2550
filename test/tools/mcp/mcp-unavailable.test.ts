// An MCP server an agent names that cannot start, or stops for good, fails that agent's instance
// with class mcp_unavailable and the cause (its stderr, the refused connection, the unanswered
// initialize), where it used to end `succeeded` with the model told only `Tool "mcp__x__y" not
// found`. An `optional: true` server is a warning instead, and the agent goes on without it.
import { mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { runCli } from '../../cli/run-cli.js';
import { STDIO_FIXTURE, results, stdioServer, textOf, useMcpAgents } from './helpers.js';
import { allFiles, dirs, env, removeDirs } from './run-setup.js';

afterEach(removeDirs);
const mcp = useMcpAgents();

/** A port nothing listens on: taken from the system, then released. */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  const port = (server.address() as { port: number }).port;
  await new Promise<void>((done) => server.close(() => done()));
  return port;
}

interface InstanceJson {
  key: string;
  status: string;
  failure?: string;
  error?: string;
  warnings?: string[];
}

/** The folder of the one run made in `dir`. */
function runDirIn(dir: string): string {
  const log = allFiles(join(dir, '.orchestrate')).find((f) => f.endsWith('/run.jsonl'));
  expect(log, 'a run folder').toBeDefined();
  return dirname(log!);
}

async function showJson(dir: string): Promise<{ status: string; instances: InstanceJson[] }> {
  const shown = await runCli(['show', runDirIn(dir), '--json'], { cwd: dir, env: env(dir) });
  expect(shown.code, shown.stderr).toBe(0);
  return JSON.parse(shown.stdout) as { status: string; instances: InstanceJson[] };
}

function recipeDir(lines: string[]): string {
  const dir = mkdtempSync(join(tmpdir(), 'mcp-unavailable-'));
  dirs.push(dir);
  mkdirSync(join(dir, 'home'));
  writeFileSync(join(dir, 'recipe.yaml'), lines.join('\n'));
  writeFileSync(join(dir, 'done.yaml'), 'turns:\n  - text: done\n');
  return dir;
}

/** An agent that names `server` and the task that runs it. */
function agentAndTask(server: string): { agent: string[]; task: string[] } {
  return {
    agent: [`  uses-${server}:`, `    mcp_servers: [${server}]`, '    tools: [read]'],
    task: [`  - id: ${server}`, `    agent: uses-${server}`, '    prompt: go'],
  };
}

describe('a dead MCP server fails the agent that names it: mcp_unavailable, with the cause', () => {
  it('a missing binary, a missing module, no answer to initialize and a refused connection each fail their instance', async () => {
    const port = await closedPort();
    const names = ['nobinary', 'nomodule', 'silent', 'refused', 'leaky'];
    const parts = names.map(agentAndTask);
    const dir = recipeDir([
      'name: dead-servers',
      'provider: scripted',
      'script: done.yaml',
      `concurrency: ${names.length}`,
      'mcp_servers:',
      '  nobinary:',
      '    command: sh',
      '    args: [-c, no-such-mcp-server-binary]',
      '  nomodule:',
      `    command: ${JSON.stringify(process.execPath)}`,
      // A token in its arguments must not reach the failure text (nor the run log).
      '    args: [./no-such-server.mjs, --token, "${MCP_TEST_TOKEN}"]',
      // Its stderr echoes the token its env gives it: the failure shows the variable's name instead.
      '  leaky:',
      '    command: sh',
      `    args: [-c, 'echo "token $LEAKY_TOKEN refused" >&2; exit 1']`,
      '    env: { LEAKY_TOKEN: "${MCP_TEST_TOKEN}" }',
      '  silent:',
      `    command: ${JSON.stringify(process.execPath)}`,
      '    args: [-e, "setInterval(() => {}, 1000)"]',
      '    initialize_timeout: 1s',
      '  refused:',
      '    type: http',
      `    url: http://127.0.0.1:${port}/mcp`,
      // Started with the agent, before its first model call: the same failure, by another path.
      '    startup: eager',
      'agents:',
      ...parts.flatMap((p) => p.agent),
      'tasks:',
      ...parts.flatMap((p) => p.task),
      '',
    ]);
    // The recipe's checks and the worker threads expand ${VAR}s from this process's environment.
    const token = 'tok-do-not-log-4711';
    process.env.MCP_TEST_TOKEN = token;
    const run = await runCli(['run', join(dir, 'recipe.yaml')], { cwd: dir, env: env(dir) }).finally(() => {
      delete process.env.MCP_TEST_TOKEN;
    });
    expect(run.code, run.stdout + run.stderr).not.toBe(2);
    expect(run.code).not.toBe(0);
    const shown = await showJson(dir);
    expect(shown.status).toBe('failed');
    expect(readFileSync(join(runDirIn(dir), 'run.jsonl'), 'utf8')).not.toContain(token);
    expect(run.stdout + run.stderr).not.toContain(token);
    const by = new Map(shown.instances.map((i) => [i.key, i]));
    for (const name of names)
      expect(by.get(name), name).toMatchObject({ status: 'failed', failure: 'mcp_unavailable' });
    expect(by.get('nobinary')!.error).toBe(
      'MCP server "nobinary" could not be started: sh: 1: no-such-mcp-server-binary: not found (its command `sh` exited with code 127 before it answered initialize)',
    );
    expect(by.get('nomodule')!.error).toMatch(
      /^MCP server "nomodule" could not be started: Error: Cannot find module '.*no-such-server\.mjs' \| .*\(its command `\S+node` exited with code 1 before it answered initialize\)$/,
    );
    expect(by.get('leaky')!.error).toBe(
      'MCP server "leaky" could not be started: token [REDACTED:MCP_TEST_TOKEN] refused (its command `sh` exited with code 1 before it answered initialize)',
    );
    expect(by.get('silent')!.error).toBe(
      'MCP server "silent" could not be started: no answer to initialize in 1 s (initialize_timeout); is it an MCP server speaking on stdin/stdout?',
    );
    expect(by.get('refused')!.error).toBe(
      `MCP server "refused" could not be started: connection refused at http://127.0.0.1:${port}/mcp (is the server running, on this port?)`,
    );
    // The user sees it without opening anything: each failure and its cause are in the run's output.
    const out = run.stdout + run.stderr;
    expect(out).toContain('mcp_unavailable');
    expect(out).toContain('sh: 1: no-such-mcp-server-binary: not found');
  }, 120_000);

  it("a server that stops for good during the run fails its instance (its own, or the run's shared one); an optional server that cannot start is a warning and the agent goes on", async () => {
    const crash = agentAndTask('crashy');
    const shared = agentAndTask('shared');
    const dir = recipeDir([
      'name: dying-server',
      'provider: scripted',
      'script: done.yaml',
      'concurrency: 3',
      'mcp_servers:',
      '  crashy:',
      `    command: ${JSON.stringify(process.execPath)}`,
      `    args: [${JSON.stringify(STDIO_FIXTURE)}, crashy]`,
      // One server for the run, hosted by the coordinator: its agents hear from there that it is gone.
      '  shared:',
      `    command: ${JSON.stringify(process.execPath)}`,
      `    args: [${JSON.stringify(STDIO_FIXTURE)}, shared]`,
      '    scope: run',
      '  gone:',
      '    command: sh',
      '    args: [-c, "echo the gone server is not installed >&2; exit 3"]',
      '    optional: true',
      'agents:',
      ...crash.agent,
      '    script: crash.yaml',
      ...shared.agent,
      '    script: crash-shared.yaml',
      '  tolerant:',
      '    mcp_servers: [gone]',
      '    tools: [read]',
      'tasks:',
      ...crash.task,
      ...shared.task,
      '  - id: tolerant',
      '    agent: tolerant',
      '    prompt: go',
      '',
    ]);
    // The server crashes, is started again once, and crashes again: it is gone for good.
    writeFileSync(
      join(dir, 'crash.yaml'),
      [
        'turns:',
        '  - tools: [{ name: mcp__crashy__crash, args: {} }]',
        '  - tools: [{ name: mcp__crashy__crash, args: {} }]',
        '  - text: still here',
        '',
      ].join('\n'),
    );
    writeFileSync(
      join(dir, 'crash-shared.yaml'),
      readFileSync(join(dir, 'crash.yaml'), 'utf8').replaceAll('mcp__crashy__', 'mcp__shared__'),
    );
    const run = await runCli(['run', join(dir, 'recipe.yaml')], { cwd: dir, env: env(dir) });
    expect(run.code).not.toBe(0);
    const shown = await showJson(dir);
    const by = new Map(shown.instances.map((i) => [i.key, i]));
    expect(by.get('shared')).toMatchObject({ status: 'failed', failure: 'mcp_unavailable' });
    expect(by.get('shared')!.error).toMatch(
      /^MCP server "shared" stopped \(exit code 3\) after it had already been restarted once/,
    );
    expect(by.get('crashy')).toMatchObject({ status: 'failed', failure: 'mcp_unavailable' });
    expect(by.get('crashy')!.error).toMatch(
      /^MCP server "crashy" stopped \(exit code 3\) after it had already been restarted once/,
    );
    expect(by.get('tolerant')).toMatchObject({ status: 'done' });
    // One warning line in the run's output, with the cause.
    const warnings = (run.stdout + run.stderr).split('\n').filter((l) => l.includes('MCP server "gone"'));
    expect(warnings).toHaveLength(1);
    const warned =
      /^tolerant: warning: MCP server "gone" could not be started: the gone server is not installed \(its command `sh` exited with code 3 before it answered initialize\); it is optional: the agent goes on without its tools$/;
    expect(warnings[0]).toMatch(warned);
    // The same line in show, show --json and the report.
    const line = warnings[0]!.replace(/^tolerant: /, '');
    expect(by.get('tolerant')!.warnings).toEqual([line]);
    const text = await runCli(['show', runDirIn(dir)], { cwd: dir, env: env(dir) });
    expect(text.stdout.split('\n')).toContain(`    ${line}`);
    const report = await runCli(['report', runDirIn(dir)], { cwd: dir, env: env(dir) });
    expect(report.code, report.stderr).toBe(0);
    const html = readFileSync(report.stdout.trim(), 'utf8');
    expect(html).toContain('could not be started: the gone server is not installed');
  }, 120_000);

  it('retries: {on: [mcp_unavailable]} tries again a server that was down, and the second attempt gets its tools', async () => {
    const dir = recipeDir([]);
    const flag = join(dir, 'second-start');
    const script = `if [ -e "$1" ]; then exec "$2" "$3" late; fi; touch "$1"; echo not up yet >&2; exit 1`;
    writeFileSync(
      join(dir, 'recipe.yaml'),
      [
        'name: flaky-server',
        'provider: scripted',
        'script: calls.yaml',
        'mcp_servers:',
        '  late:',
        '    command: sh',
        `    args: [-c, ${JSON.stringify(script)}, sh, ${JSON.stringify(flag)}, ${JSON.stringify(process.execPath)}, ${JSON.stringify(STDIO_FIXTURE)}]`,
        '    sandbox: none',
        'agents:',
        '  uses-late:',
        '    mcp_servers: [late]',
        '    tools: [read, mcp__late__echo]',
        'tasks:',
        '  - id: late',
        '    agent: uses-late',
        '    prompt: go',
        '    retries: { count: 1, backoff: { initial: 10ms }, on: [mcp_unavailable] }',
        '',
      ].join('\n'),
    );
    writeFileSync(
      join(dir, 'calls.yaml'),
      'turns:\n  - tools: [{ name: mcp__late__echo, args: { text: back } }]\n  - text: done\n',
    );
    const run = await runCli(['run', join(dir, 'recipe.yaml')], { cwd: dir, env: env(dir) });
    expect(run.code, run.stdout + run.stderr).toBe(0);
    const [late] = (await showJson(dir)).instances as (InstanceJson & {
      attempts: { outcome: string; failure?: string; error?: string }[];
    })[];
    expect(late!.status).toBe('done');
    expect(late!.attempts[0]).toMatchObject({ outcome: 'retry', failure: 'mcp_unavailable' });
    expect(late!.attempts[0]!.error).toMatch(/^MCP server "late" could not be started: not up yet/);
    const sessions = allFiles(join(dir, '.orchestrate')).filter(
      (f) => f.endsWith('.jsonl') && !f.endsWith('run.jsonl'),
    );
    expect(sessions.map((f) => readFileSync(f, 'utf8')).join('\n')).toContain('late: back');
  }, 120_000);

  it('the model is told which optional server is missing and why, in the system prompt of every prompt', async () => {
    const prompts: string[] = [];
    const notices: string[] = [];
    const session = await mcp.agent(
      [
        stdioServer('alpha'),
        stdioServer('gone', {
          command: 'sh',
          args: ['-c', 'echo gone: cannot open its database >&2; exit 4'],
          optional: true,
        }),
      ],
      [
        (ctx) => {
          prompts.push(ctx.systemPrompt ?? '');
          return { tools: [{ name: 'mcp__alpha__echo', args: { text: 'still works' } }] };
        },
        { text: 'done' },
        (ctx) => {
          prompts.push(ctx.systemPrompt ?? '');
          return { text: 'done again' };
        },
      ],
      { notices },
    );
    await session.prompt('go');
    await session.prompt('once more');
    expect(textOf(results(session)[0]!)).toBe('alpha: still works');
    for (const prompt of prompts) {
      expect(prompt).toContain('These MCP servers are unavailable in this session');
      expect(prompt).toMatch(
        /- "gone" \(tools mcp__gone__\*\): MCP server "gone" could not be started: gone: cannot open its database/,
      );
      // Said once, not once per prompt.
      expect(prompt.split('These MCP servers are unavailable').length).toBe(2);
    }
    expect(prompts).toHaveLength(2);
    expect(notices.filter((n) => n.includes('"gone"'))).toEqual([
      expect.stringMatching(
        /^warning: MCP server "gone" could not be started: gone: cannot open its database \(.*exited with code 4/,
      ),
    ]);
  }, 60_000);
});
