import { appendFileSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { RunEventSchema } from '../../src/run/run-events.js';
import { listRuns, readRunLog, resolveRunDir, RunStore } from '../../src/run/run-store.js';

const tmp = () => mkdtempSync(join(tmpdir(), 'runstore-'));

describe('RunStore', () => {
  it('appends stamped events that parse with the exported schema', () => {
    const runs = tmp();
    const store = RunStore.create(runs, 'r1');
    store.append({ type: 'run_start', recipe: 'x.yaml', name: 'x', recipeHash: 'h', inputs: {}, plan: [] });
    store.append({ type: 'instance_queued', task: 't', key: 't', attempt: 1 });
    const lines = readFileSync(store.logFile, 'utf8').trim().split('\n');
    expect(lines).toHaveLength(2);
    for (const l of lines) expect(RunEventSchema.safeParse(JSON.parse(l)).success).toBe(true);
    expect(JSON.parse(lines[1]!)).toMatchObject({ v: 1, runId: 'r1', task: 't', attempt: 1 });
  });

  it('skips a torn last line and the next append starts on a fresh line', () => {
    const runs = tmp();
    const store = RunStore.create(runs, 'r2');
    store.append({ type: 'run_start', recipe: 'x.yaml', name: 'x', recipeHash: 'h', inputs: {}, plan: [] });
    appendFileSync(store.logFile, '{"v":1,"ts":1,"runId":"r2","type":"instance_qu');
    const reopened = RunStore.open(store.dir);
    expect(reopened.read().events).toHaveLength(1);
    expect(reopened.read().skipped).toEqual([{ line: 2, reason: 'torn last line' }]);
    reopened.append({ type: 'instance_queued', task: 't', key: 't', attempt: 1 });
    const { events, skipped } = readRunLog(reopened.logFile);
    expect(events.map((e) => e.type)).toEqual(['run_start', 'instance_queued']);
    expect(skipped).toHaveLength(1);
  });

  it("writes state events before append returns, and the agents' display events by the end of the turn, in order", async () => {
    const store = RunStore.create(tmp(), 'r4');
    const lines = () =>
      readFileSync(store.logFile, 'utf8')
        .trim()
        .split('\n')
        .map((l) => (JSON.parse(l) as { type: string }).type);
    store.append({ type: 'run_start', recipe: 'x.yaml', name: 'x', recipeHash: 'h', inputs: {}, plan: [] });
    store.append({ type: 'agent_event', task: 't', key: 't', attempt: 1, event: { type: 'turn_start' } });
    expect(lines()).toEqual(['run_start']); // the display event waits for the end of the turn
    // A state event takes every waiting display event with it, before itself.
    store.append({ type: 'instance_start', task: 't', key: 't', attempt: 1 });
    expect(lines()).toEqual(['run_start', 'agent_event', 'instance_start']);
    store.append({ type: 'agent_event', task: 't', key: 't', attempt: 1, event: { type: 'turn_end' } });
    await new Promise((r) => setImmediate(r));
    expect(lines()).toEqual(['run_start', 'agent_event', 'instance_start', 'agent_event']);
  });

  it('a deferred write that fails is reported through onWriteError', async () => {
    const store = RunStore.create(tmp(), 'r5');
    const errors: string[] = [];
    store.onWriteError = (e) => errors.push(e.message);
    store.append({ type: 'run_start', recipe: 'x.yaml', name: 'x', recipeHash: 'h', inputs: {}, plan: [] });
    Object.defineProperty(store, 'logFile', { get: () => store.dir });
    store.append({ type: 'agent_event', task: 't', key: 't', attempt: 1, event: { type: 'turn_start' } });
    expect(errors).toEqual([]);
    await new Promise((r) => setImmediate(r));
    expect(errors).toEqual([expect.stringMatching(/EISDIR/)]);
  });

  it('a log that cannot be written records the error instead of throwing', async () => {
    const runs = tmp();
    const store = RunStore.create(runs, 'r3');
    store.append({ type: 'run_start', recipe: 'x.yaml', name: 'x', recipeHash: 'h', inputs: {}, plan: [] });
    // The log is opened once per event-loop turn: the next turn opens it again.
    await new Promise<void>((resolve) => setImmediate(resolve));
    // Point the log at a folder: opening it for appending fails with EISDIR.
    Object.defineProperty(store, 'logFile', { get: () => store.dir });
    expect(() => store.append({ type: 'instance_queued', task: 't', key: 't', attempt: 1 })).not.toThrow();
    expect(store.writeError?.message).toMatch(/EISDIR/);
  });

  it('lists runs newest first with status and cost, and resolves ids, prefixes and paths', () => {
    const runs = tmp();
    const a = RunStore.create(runs, '20260101-000000-aaaa');
    a.append({ type: 'run_start', recipe: 'a.yaml', name: 'a', recipeHash: 'h', inputs: {}, plan: [] });
    a.append({
      type: 'instance_done',
      task: 't',
      key: 't',
      attempt: 1,
      output: 'ok',
      durationMs: 1,
      usage: { input: 1, output: 1, cacheRead: 0, cacheWrite: 0, totalTokens: 2, cost: 0.25 },
    });
    a.append({
      type: 'run_end',
      status: 'succeeded',
      durationMs: 5,
      usage: { input: 1, output: 1, cacheRead: 0, cacheWrite: 0, totalTokens: 2, cost: 0.25 },
    });
    const b = RunStore.create(runs, '20260102-000000-bbbb');
    b.append({ type: 'run_start', recipe: 'b.yaml', name: 'b', recipeHash: 'h', inputs: {}, plan: [] });
    const list = listRuns(runs);
    expect(list.map((r) => [r.name, r.status])).toEqual([
      ['b', 'interrupted'],
      ['a', 'succeeded'],
    ]);
    expect(list.find((r) => r.name === 'a')?.cost).toBeCloseTo(0.25);
    expect(resolveRunDir(runs, '20260101')).toBe(a.dir);
    expect(resolveRunDir(runs, b.dir)).toBe(b.dir);
    expect(resolveRunDir(runs, 'nope')).toBeUndefined();
  });
});

describe('listRuns cost', () => {
  it('sums call_usage (every permitted call, aborted ones too) when the log has it', () => {
    const runs = tmp();
    const s = RunStore.create(runs, 'r-cost');
    s.append({ type: 'run_start', recipe: 'a.yaml', name: 'a', recipeHash: 'h', inputs: {}, plan: [] });
    const u = (cost: number) => ({ input: 1, output: 1, cacheRead: 0, cacheWrite: 0, totalTokens: 2, cost });
    s.append({ type: 'call_usage', task: 't', key: 't', attempt: 1, model: 'm', usage: u(0.1) });
    s.append({ type: 'call_usage', task: 't', key: 't', attempt: 2, model: 'm', usage: u(0.2) });
    // The instance total only covers its last attempt: the run's cost must not come from it.
    s.append({ type: 'instance_done', task: 't', key: 't', attempt: 2, output: 'ok', durationMs: 1, usage: u(0.2) });
    expect(listRuns(runs)[0]!.cost).toBeCloseTo(0.3);
  });
});
