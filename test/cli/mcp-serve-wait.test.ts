// `orchestrate mcp serve` over stdio, a tool that waits for a run: run_recipe with wait: true and a
// 2 s request timeout finishes a run that takes more than 3 s, because the server's progress
// notifications keep resetting the client's timeout (the held agent is let go only after 3 s, by
// the test's progress callback: the length comes from an event, not a sleep); and a run whose
// process is killed meanwhile comes back as a tool error that says so and how to continue.
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readRunLease } from '../../src/run/run-lease.js';
import { McpProject, type Served, type ToolResult, textOf } from './mcp-serve-fixture.js';

const project = new McpProject();
afterAll(() => project.cleanup());

describe('orchestrate mcp serve: waiting for a run', () => {
  let server: Served;
  beforeAll(async () => {
    // Progress at least every 250 ms: a loaded machine may stall the server for a while, and the
    // 2 s timeout must only fail when progress really stops.
    server = await project.serve(['--progress-ms', '250']);
  }, 300_000);

  it('run_recipe with wait outlasts a 2 s request timeout because progress keeps resetting it', async () => {
    const t0 = Date.now();
    const progress: { at: number; message: string }[] = [];
    const r = (await server.client.callTool(
      { name: 'run_recipe', arguments: { recipe: 'hold.yaml', wait: true } },
      undefined,
      {
        timeout: 2_000,
        resetTimeoutOnProgress: true,
        onprogress: (p) => {
          progress.push({ at: Date.now() - t0, message: p.message ?? '' });
          // The held agent is let go only once the call has lasted well past its timeout.
          if (Date.now() - t0 > 3_000 && !existsSync(project.release('hold')))
            writeFileSync(project.release('hold'), 'go');
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
    expect(readFileSync(join(project.runDirOf(s.runId), 'run.jsonl'), 'utf8')).toContain('"run_end"');
    expect(server.wireErrors).toEqual([]);
  }, 300_000);

  it('a run whose process is killed while run_recipe waits is reported as such, with the way to continue it', async () => {
    let killed: number | undefined;
    const r = (await server.client.callTool(
      { name: 'run_recipe', arguments: { recipe: 'crash.yaml', wait: true } },
      undefined,
      {
        timeout: 120_000,
        onprogress: (p) => {
          const m = /^run (\S+): .*running: crash/.exec(p.message ?? '');
          if (!m || killed !== undefined) return;
          killed = readRunLease(project.runDirOf(m[1]!))!.holder.pid;
          project.pids.push(killed);
          process.kill(killed, 'SIGKILL');
        },
      },
    )) as ToolResult;
    expect(killed).toBeDefined();
    expect(r.isError).toBe(true);
    expect(textOf(r)).toMatch(
      /^the process of run \S+ \(pid \d+\) exited with a signal before the run ended; its output is in .*mcp-launch\.log\. run \S+: interrupted; .* The resume tool continues it\.$/,
    );
    // Nothing runs once the process is gone: the instance it cut off is unfinished (it said "1 running").
    expect(textOf(r)).toContain('instances: 0 done, 0 failed, 0 cancelled, 0 skipped, 1 unfinished.');
  }, 300_000);
});
