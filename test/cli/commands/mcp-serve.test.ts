// `orchestrate mcp serve` driven by the real MCP SDK client over stdio (issue 27): a whole offline
// run on the scripted model (validate, dry run, start, events by cursor, steer, cancel one
// instance, status, resume), started by one server and driven by a second after the first has
// gone (a run is a process of its own). Agents are held in a bash call that waits for a file the
// test creates, so every step waits on an event, never on a guess about speed.
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { NOISY_EVENT_TYPES } from '../../../src/service/mcp-server-defaults.js';
import { ORCHESTRATE_TOOLS } from '../../../src/mcp/tools.js';
import type { RunEvent } from '../../../src/run/run-events.js';
import { readRunLog } from '../../../src/run/run-store.js';
import { call, CLIENT_NAME, McpProject, type Served, type ToolResult, textOf } from '../mcp-serve-fixture.js';

const project = new McpProject();
afterAll(() => project.cleanup());

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
    const first = await project.serve();
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
    expect(data.runDir).toBe(project.runDirOf(data.runId));
    project.pids.push(data.pid);
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
    second = await project.serve();
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
    expect(textOf(cancel)).toMatch(/^cancelled slow: its agent stopped/);
    // Once cancel has answered, run_status says cancelled (issue 38: it said running).
    const atOnce = (await call(second, 'run_status', { run: runId })).structuredContent as {
      instances: { key: string; status: string }[];
    };
    expect(atOnce.instances.find((i) => i.key === 'slow')?.status).toBe('cancelled');

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
    expect(s.status).toBe('partial'); // an instance ended cancelled, none failed
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
      new RegExp(`^run ${runId} is not running \\(finished partial at .*\\); nothing to cancel$`),
    );
    const listed = await call(second, 'list_runs', {});
    expect((listed.structuredContent as { runs: { runId: string }[] }).runs.map((r) => r.runId)).toEqual([runId]);
  }, 300_000);

  it('resume with dry_run says what a resume would run and starts nothing', async () => {
    const logBefore = readFileSync(join(runDir, 'run.jsonl'));
    const r = await call(second, 'resume', { run: runId, retry: ['slow'], dry_run: true });
    expect(r.isError, textOf(r)).toBeFalsy();
    const preview = r.structuredContent as {
      dryRun: boolean;
      runId: string;
      kept: { key: string; status: string }[];
      runs: { key: string; was: string }[];
    };
    expect(preview).toMatchObject({ dryRun: true, runId });
    expect(preview.runs.map((i) => i.key)).toEqual(['slow']);
    expect(preview.kept.map((i) => i.key).sort()).toEqual(['after', 'quick']);
    expect(textOf(r)).toContain('slow');
    // Nothing was written: the log is byte for byte the same (a launched resume would have written run_resume first).
    expect(readFileSync(join(runDir, 'run.jsonl')).equals(logBefore)).toBe(true);
    // Without retry it says how to reopen the cancelled one in this tool's words (it said --retry KEY).
    const without = await call(second, 'resume', { run: runId, dry_run: true });
    expect(textOf(without)).toContain('stay cancelled (retry: [KEY] runs one again): slow');
  });

  it('resume with retry (and reload_recipe) runs the cancelled instance again and waits for the end', async () => {
    writeFileSync(project.release('slow'), 'go');
    const progress: string[] = [];
    const r = (await second.client.callTool(
      { name: 'resume', arguments: { run: runId, retry: ['slow'], reload_recipe: true, wait: true } },
      undefined,
      {
        timeout: 120_000,
        onprogress: (p) => void progress.push(p.message ?? ''),
      },
    )) as ToolResult;
    expect(r.isError, textOf(r)).toBeFalsy();
    expect(textOf(r)).toMatch(
      new RegExp(`^Inputs: recipe reloaded by resume --reload-recipe \\(pid \\d+.*\\)\\.\nrun ${runId}: succeeded`),
    );
    expect(
      (r.structuredContent as { instances: { key: string; status: string }[] }).instances.find((i) => i.key === 'slow')
        ?.status,
    ).toBe('done');
    expect(progress.length).toBeGreaterThan(0);
    expect(existsSync(join(runDir, 'mcp-launch.log'))).toBe(true);
    // reload_recipe: the recipe as it is now, captured again, and the log says who asked.
    const resumed = runLog(runDir).filter((e) => e.type === 'run_resume');
    expect(resumed.at(-1)).toMatchObject({
      inputs: { source: 'reloaded', reloadedBy: expect.stringMatching(/^resume --reload-recipe \(pid \d+/) },
    });
    const again = await call(second, 'resume', { run: runId });
    expect(again.isError).toBe(true);
    expect(textOf(again)).toContain('already succeeded');
  }, 300_000);
});
