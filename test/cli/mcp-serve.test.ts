// `orchestrate mcp serve` driven by the real MCP SDK client over stdio (issue 27): a whole offline
// run on the scripted model (validate, dry run, start, events by cursor, steer, cancel one
// instance, status, resume), a run that outlives the server that started it, and a run_recipe
// that waits with a 2 s request timeout and finishes after more than 3 s because progress
// notifications keep resetting that timeout. Agents are held in a bash call that waits for a file
// the test creates, so every step waits on an event, never on a guess about speed.
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { getDefaultEnvironment, StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { NOISY_EVENT_TYPES } from '../../src/cli/mcp-server/defaults.js';
import { ORCHESTRATE_TOOLS } from '../../src/cli/mcp-server/tools.js';
import { readRunLog } from '../../src/run/run-store.js';
import type { RunEvent } from '../../src/run/run-events.js';

const ROOT = join(import.meta.dirname, '..', '..');
/** tsx by absolute URL: the server runs in the project folder, where a bare `tsx` would not resolve. */
const TSX = import.meta.resolve('tsx');
const CLIENT_NAME = 'mcp-serve-test';

const dir = mkdtempSync(join(tmpdir(), 'orch-mcp-serve-'));
const release = (name: string) => join(dir, `release-${name}`);
const servers: Served[] = [];
const pids: number[] = [];

afterAll(async () => {
  for (const name of ['slow', 'hold']) writeFileSync(release(name), 'x');
  for (const s of servers) await s.client.close().catch(() => undefined);
  // Runs are processes of their own: none may outlive the test.
  for (const pid of pids) {
    try {
      process.kill(-pid, 'SIGKILL');
    } catch {
      // ended already
    }
  }
  rmSync(dir, { recursive: true, force: true });
});

const wait = (f: string) => JSON.stringify(`while [ ! -f '${f}' ]; do sleep 0.05; done; echo released`);

beforeAll(() => {
  writeFileSync(
    join(dir, 'recipe.yaml'),
    `name: mcp-serve
provider: scripted
script: script.yaml
concurrency: 3
agents:
  w: { tools: [bash] }
tasks:
  - id: slow
    agent: w
    prompt: "SLOW task"
    on_failure: continue
  - id: quick
    agent: w
    prompt: "QUICK task"
  - id: after
    needs: [slow]
    agent: w
    prompt: "AFTER task"
`,
  );
  writeFileSync(
    join(dir, 'hold.yaml'),
    `name: mcp-hold
provider: scripted
script: script.yaml
agents:
  w: { tools: [bash] }
tasks:
  - id: hold
    agent: w
    prompt: "HOLD task"
`,
  );
  writeFileSync(
    join(dir, 'script.yaml'),
    `conversations:
  - match: "SLOW"
    turns:
      - tools: [{ name: bash, args: { command: ${wait(release('slow'))} } }]
      - text: "slow finished"
  - match: "HOLD"
    turns:
      - tools: [{ name: bash, args: { command: ${wait(release('hold'))} } }]
      - text: "hold finished"
  - match: "QUICK"
    turns:
      - text: "quick finished"
  - match: "AFTER"
    turns:
      - text: "after finished"
`,
  );
  writeFileSync(join(dir, 'broken.yaml'), 'name: broken\ntasks:\n  - id: a\n    prompt: x\n    needs: [nope]\n');
});

interface Served {
  client: Client;
  transport: StdioClientTransport;
  stderr: () => string;
  /** Errors the client saw on the wire (a stray line on the server's stdout would be one). */
  wireErrors: Error[];
}

/** `orchestrate mcp serve` in the project folder, connected to an SDK client. */
async function serve(extra: string[] = []): Promise<Served> {
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: ['--import', TSX, join(ROOT, 'src/cli/main.ts'), 'mcp', 'serve', ...extra],
    cwd: dir,
    env: { ...getDefaultEnvironment(), NO_COLOR: '1' },
    stderr: 'pipe',
  });
  let stderr = '';
  transport.stderr?.on('data', (d: Buffer) => (stderr += d.toString('utf8')));
  const client = new Client({ name: CLIENT_NAME, version: '1.0.0' });
  const wireErrors: Error[] = [];
  client.onerror = (e) => wireErrors.push(e);
  // A cold start of the CLI under tsx on a loaded 2-core machine takes seconds.
  await client.connect(transport, { timeout: 120_000 });
  const served = { client, transport, stderr: () => stderr, wireErrors };
  servers.push(served);
  return served;
}

type ToolResult = CallToolResult & { structuredContent?: Record<string, unknown> };

async function call(s: Served, name: string, args: Record<string, unknown>): Promise<ToolResult> {
  return (await s.client.callTool({ name, arguments: args }, undefined, { timeout: 120_000 })) as ToolResult;
}

const textOf = (r: ToolResult): string => r.content.map((c) => (c.type === 'text' ? c.text : '')).join('');

/** Pages through run_events from `cursor` until `done` holds for what was read; returns the events and the cursor. */
async function eventsUntil(
  s: Served,
  runId: string,
  cursor: string,
  done: (seen: RunEvent[]) => boolean,
  extra: Record<string, unknown> = {},
): Promise<{ events: RunEvent[]; cursor: string }> {
  const seen: RunEvent[] = [];
  const end = Date.now() + 120_000;
  for (;;) {
    const r = await call(s, 'run_events', { run: runId, cursor, ...extra });
    expect(r.isError, textOf(r)).toBeFalsy();
    const page = r.structuredContent as { events: RunEvent[]; next_cursor: string; more: boolean };
    expect(Number(page.next_cursor)).toBeGreaterThanOrEqual(Number(cursor));
    seen.push(...page.events);
    cursor = page.next_cursor;
    if (done(seen)) return { events: seen, cursor };
    if (Date.now() > end)
      throw new Error(
        `run_events never showed what was waited for; seen: ${seen.map((e) => e.type).join(' ')}\nserver stderr: ${s.stderr()}`,
      );
    if (!page.more) await new Promise((r) => setTimeout(r, 50));
  }
}

const runLog = (runDir: string): RunEvent[] => readRunLog(join(runDir, 'run.jsonl')).events;
const isToolStart = (key: string) => (e: RunEvent) =>
  e.type === 'agent_event' && e.key === key && e.event.type === 'tool_execution_start';

describe('orchestrate mcp serve over stdio', () => {
  let second: Served;
  let runId: string;
  let runDir: string;

  it('lists its tools with their schemas; validates and dry-runs; starts a run that outlives the server', async () => {
    const first = await serve();
    const { tools } = await first.client.listTools();
    expect(tools.map((t) => t.name)).toEqual(ORCHESTRATE_TOOLS.map((t) => t.name));
    for (const name of [
      'validate_recipe',
      'dry_run',
      'run_recipe',
      'run_status',
      'run_events',
      'cancel',
      'steer',
      'resume',
      'show_instance',
    ])
      expect(tools.map((t) => t.name)).toContain(name);
    const runTool = tools.find((t) => t.name === 'run_recipe')!;
    expect(runTool.inputSchema.required).toEqual(['recipe']);
    expect(Object.keys(runTool.inputSchema.properties ?? {})).toEqual(
      expect.arrayContaining(['recipe', 'inputs', 'provider', 'wait', 'run_dir']),
    );

    const valid = await call(first, 'validate_recipe', { recipe: 'recipe.yaml' });
    expect(textOf(valid)).toBe('recipe.yaml: ok (3 tasks, 1 agent)');
    const broken = await call(first, 'validate_recipe', { recipe: 'broken.yaml' });
    expect(textOf(broken)).toMatch(/^broken\.yaml:5:\d+: .*nope/);
    expect(broken.structuredContent).toMatchObject({ ok: false });

    const plan = await call(first, 'dry_run', { recipe: 'recipe.yaml' });
    expect(plan.isError).toBeFalsy();
    expect(textOf(plan)).toContain('Plan: 3 tasks');
    expect(plan.structuredContent).toMatchObject({ dryRun: true, recipe: { name: 'mcp-serve', taskCount: 3 } });
    // A mistake is a tool error with the fix in it, not a crash: the server answers the next call.
    const missing = await call(first, 'run_recipe', { recipe: 'nope.yaml' });
    expect(missing.isError).toBe(true);
    expect(textOf(missing)).toMatch(/nope\.yaml/);
    const badArgs = await call(first, 'run_recipe', { recipe: 'recipe.yaml', concurrency: 0 });
    expect(badArgs.isError).toBe(true);
    expect(textOf(badArgs)).toMatch(/concurrency/);

    const started = await call(first, 'run_recipe', { recipe: 'recipe.yaml' });
    expect(started.isError, textOf(started)).toBeFalsy();
    const data = started.structuredContent as { runId: string; runDir: string; pid: number; status: string };
    expect(data.status).toBe('running');
    expect(data.runDir).toBe(join(dir, '.orchestrate', 'runs', data.runId));
    pids.push(data.pid);
    runId = data.runId;
    runDir = data.runDir;

    // The client goes away (its session ended): the server exits, the run goes on.
    const serverPid = first.transport.pid!;
    await first.client.close();
    expect(() => process.kill(serverPid, 0)).toThrow();
    expect(() => process.kill(data.pid, 0)).not.toThrow();
    expect(first.wireErrors).toEqual([]);
    expect(first.stderr()).toContain(`started run ${runId}`);
  }, 300_000);

  it('a second server follows the run by cursor, steers and cancels one instance; the rest finish', async () => {
    second = await serve(['--progress-ms', '250']);
    // The held agents are inside their bash calls: agent events are asked for by type.
    const { cursor } = await eventsUntil(second, runId, '0', (seen) => seen.some(isToolStart('slow')), {
      types: ['agent_event', 'instance_start'],
    });
    expect(Number(cursor)).toBeGreaterThan(0);

    const typo = await call(second, 'cancel', { run: runId, instance: 'slwo' });
    expect(typo.isError).toBe(true);
    expect(textOf(typo)).toContain('no instance "slwo"; did you mean "slow"?');
    const steer = await call(second, 'steer', {
      run: runId.slice(0, 15),
      instance: 'slow',
      message: 'Also mention PINEAPPLE.',
    });
    expect(textOf(steer)).toMatch(/^delivered to slow/);
    const cancel = await call(second, 'cancel', { run: runId, instance: 'slow' });
    expect(cancel.isError, textOf(cancel)).toBeFalsy();
    expect(textOf(cancel)).toMatch(/^cancelling slow/);

    // Small pages from the start: every event once, in log order, the agents' streams left out.
    const { events } = await eventsUntil(second, runId, '0', (seen) => seen.some((e) => e.type === 'run_end'), {
      limit: 4,
    });
    const expected = runLog(runDir).filter((e) => !NOISY_EVENT_TYPES.includes(e.type));
    expect(events.map((e) => [e.type, e.ts, 'key' in e ? e.key : ''])).toEqual(
      expected.map((e) => [e.type, e.ts, 'key' in e ? e.key : '']),
    );
    const controls = events.filter((e): e is Extract<RunEvent, { type: 'control' }> => e.type === 'control');
    expect(controls.map((e) => [e.action, e.instance, e.ok])).toEqual([
      ['cancel', 'slwo', false],
      ['steer', 'slow', true],
      ['cancel', 'slow', true],
    ]);
    expect(controls[1]!.by).toMatch(new RegExp(`^mcp ${CLIENT_NAME} \\(pid \\d+`));
    expect(controls[1]!.text).toBe('Also mention PINEAPPLE.');

    const status = await call(second, 'run_status', { run: runId });
    const s = status.structuredContent as {
      status: string;
      instances: { key: string; status: string }[];
      counts: Record<string, number>;
    };
    expect(s.status).toBe('failed'); // an instance ended cancelled
    expect(Object.fromEntries(s.instances.map((i) => [i.key, i.status]))).toEqual({
      slow: 'cancelled',
      quick: 'done',
      after: 'done',
    });
    expect(s.counts).toMatchObject({ total: 3, done: 2, cancelled: 1, running: 0 });

    const quick = await call(second, 'show_instance', { run: runId, instance: 'quick' });
    expect(JSON.stringify(quick.structuredContent)).toContain('quick finished');
    const late = await call(second, 'cancel', { run: runId, instance: 'quick' });
    expect(late.isError).toBe(true);
    expect(textOf(late)).toMatch(
      new RegExp(`^run ${runId} is not running \\(finished failed at .*\\); nothing to cancel$`),
    );
    const listed = await call(second, 'list_runs', {});
    expect((listed.structuredContent as { runs: { runId: string }[] }).runs.map((r) => r.runId)).toEqual([runId]);
  }, 300_000);

  it('resume with retry runs the cancelled instance again and waits for the end', async () => {
    writeFileSync(release('slow'), 'go');
    const progress: string[] = [];
    const r = (await second.client.callTool(
      { name: 'resume', arguments: { run: runId, retry: ['slow'], wait: true } },
      undefined,
      {
        timeout: 120_000,
        onprogress: (p) => void progress.push(p.message ?? ''),
      },
    )) as ToolResult;
    expect(r.isError, textOf(r)).toBeFalsy();
    expect(textOf(r)).toMatch(new RegExp(`^run ${runId}: succeeded`));
    expect(
      (r.structuredContent as { instances: { key: string; status: string }[] }).instances.find((i) => i.key === 'slow')
        ?.status,
    ).toBe('done');
    expect(progress.length).toBeGreaterThan(0);
    expect(existsSync(join(runDir, 'mcp-launch.log'))).toBe(true);
    const again = await call(second, 'resume', { run: runId });
    expect(again.isError).toBe(true);
    expect(textOf(again)).toContain('already succeeded');
  }, 300_000);

  it('run_recipe with wait outlasts a 2 s request timeout because progress keeps resetting it', async () => {
    const t0 = Date.now();
    const progress: { at: number; message: string }[] = [];
    const r = (await second.client.callTool(
      { name: 'run_recipe', arguments: { recipe: 'hold.yaml', wait: true } },
      undefined,
      {
        timeout: 2_000,
        resetTimeoutOnProgress: true,
        onprogress: (p) => {
          progress.push({ at: Date.now() - t0, message: p.message ?? '' });
          // The held agent is let go only once the call has lasted well past its timeout.
          if (Date.now() - t0 > 3_000 && !existsSync(release('hold'))) writeFileSync(release('hold'), 'go');
        },
      },
    )) as ToolResult;
    const elapsed = Date.now() - t0;
    expect(r.isError, textOf(r)).toBeFalsy();
    const s = r.structuredContent as { runId: string; status: string; instances: { key: string; status: string }[] };
    expect(s.status).toBe('succeeded');
    expect(s.instances).toMatchObject([{ key: 'hold', status: 'done' }]);
    expect(elapsed).toBeGreaterThan(3_000);
    expect(progress.some((p) => /running: hold/.test(p.message))).toBe(true);
    // No gap between notifications reached the timeout (else the call would have failed).
    const gaps = progress.map((p, i) => p.at - (i ? progress[i - 1]!.at : 0));
    expect(Math.max(...gaps)).toBeLessThan(2_000);
    expect(readFileSync(join(dir, '.orchestrate', 'runs', s.runId, 'run.jsonl'), 'utf8')).toContain('"run_end"');
    expect(second.wireErrors).toEqual([]);
  }, 300_000);
});
