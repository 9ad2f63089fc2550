import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { RunStore } from '../../src/run/run-store.js';
import { buildReportData } from '../../src/display/report/report-data.js';
import { loadRunFolder } from '../../src/display/run-folder.js';
import {
  applyEvent,
  countStatuses,
  createRunState,
  foldEvents,
  getInstance,
  instanceUsage,
  runUsage,
} from '../../src/run/run-fold.js';
import { KEYS, writeSyntheticRun } from '../display/fixtures/synthetic-run.js';

const tmp = () => mkdtempSync(join(tmpdir(), 'run-state-'));

describe('run state fold', () => {
  it('folds a fan-out with a retry, a final failure and a skip into per-instance statuses and attempts', () => {
    const { events } = writeSyntheticRun(tmp());
    const s = foldEvents(events);
    expect(s.status).toBe('failed');
    expect([...s.tasks.get('apply')!.keys]).toEqual([KEYS.a, KEYS.b, KEYS.c]);
    const status = (task: string, key: string) => getInstance(s, task, key)?.status;
    expect(status('plan', KEYS.plan)).toBe('done');
    expect(status('apply', KEYS.a)).toBe('done');
    expect(status('apply', KEYS.b)).toBe('done');
    expect(status('apply', KEYS.c)).toBe('failed');
    expect(status('review', KEYS.review)).toBe('skipped');
    const b = getInstance(s, 'apply', KEYS.b)!;
    expect(b.attempts.map((a) => [a.attempt, a.outcome, a.failure])).toEqual([
      [1, 'retry', 'overloaded'],
      [2, 'done', undefined],
    ]);
    expect(getInstance(s, 'apply', KEYS.c)!.failure).toBe('timeout');
    expect(getInstance(s, 'review', KEYS.review)!.attempts).toHaveLength(0);
    expect(countStatuses(s)).toMatchObject({ total: 5, done: 3, failed: 1, skipped: 1, running: 0, queued: 0 });
  });

  it('sums usage over attempts: the retried attempt counts, the final usage replaces the live estimate', () => {
    const { events } = writeSyntheticRun(tmp());
    const s = foldEvents(events);
    const b = getInstance(s, 'apply', KEYS.b)!;
    // attempt 1 reported 300 tokens on instance_failed; attempt 2 reported 3,900 on instance_done.
    expect(instanceUsage(b).totalTokens).toBe(300 + 3_900);
    // repo-c failed without usage: what its one assistant message reported is kept.
    expect(instanceUsage(getInstance(s, 'apply', KEYS.c)!).totalTokens).toBe(1_540);
    const total = [...s.instances.values()].reduce((n, i) => n + instanceUsage(i).totalTokens, 0);
    expect(runUsage(s).totalTokens).toBe(total);
  });

  it('tracks a running instance live: tool in progress, turns, tokens from assistant messages, permit waits', () => {
    const s = createRunState();
    let ts = 1_000;
    const base = { v: 1 as const, runId: 'r', task: 't', key: 't', attempt: 1 };
    const ev = (e: Record<string, unknown>) => applyEvent(s, { ...base, ts: ts++, ...e } as never);
    ev({ type: 'instance_start' });
    ev({ type: 'permit_wait', model: 'm', reason: 'rpm' });
    expect(getInstance(s, 't', 't')!.status).toBe('waiting');
    ev({ type: 'permit_grant', model: 'm', waitedMs: 1 });
    expect(getInstance(s, 't', 't')!.status).toBe('running');
    ev({
      type: 'agent_event',
      event: { type: 'tool_execution_start', toolCallId: 'c1', toolName: 'bash', args: { command: 'npm  test' } },
    });
    expect([...getInstance(s, 't', 't')!.runningTools.values()]).toEqual(['bash npm test']);
    ev({
      type: 'agent_event',
      event: { type: 'tool_execution_end', toolCallId: 'c1', toolName: 'bash', result: {}, isError: false },
    });
    ev({
      type: 'agent_event',
      event: {
        type: 'message_end',
        message: {
          role: 'assistant',
          usage: { input: 10, output: 5, cacheRead: 0, cacheWrite: 0, totalTokens: 15, cost: { total: 0.5 } },
        },
      },
    });
    ev({ type: 'agent_event', event: { type: 'turn_end' } });
    const inst = getInstance(s, 't', 't')!;
    expect(inst.runningTools.size).toBe(0);
    expect(instanceUsage(inst)).toMatchObject({ totalTokens: 15, cost: 0.5, turns: 1 });
    expect(inst.attempts[0]!.waits).toEqual([{ start: 1_001, end: 1_002, reason: 'rpm' }]);
  });

  it('an interrupted run (no run_end) ends its open bars at the last event, marked interrupted', () => {
    const runs = tmp();
    const store = RunStore.create(runs, 'cut');
    store.append({
      type: 'run_start',
      recipe: 'r.yaml',
      name: 'r',
      recipeHash: 'h',
      inputs: {},
      plan: [{ task: 't', keys: ['t'], needs: [], dynamic: false }],
    });
    store.append({ type: 'instance_start', task: 't', key: 't', attempt: 1 });
    store.append({ type: 'agent_event', task: 't', key: 't', attempt: 1, event: { type: 'turn_start' } });
    const data = buildReportData(loadRunFolder(store.dir));
    expect(data.status).toBe('interrupted');
    expect(data.rows[0]!.bars).toHaveLength(1);
    expect(data.rows[0]!.bars[0]!.outcome).toBe('interrupted');
  });
});

describe('planner/worker pairs', () => {
  it('members run with their pair, settle with it, and are not counted or charged twice', () => {
    const base = { v: 1 as const, runId: 'r', task: 'build', attempt: 1, parent: 'build' };
    const u = (t: number) => ({ input: t, output: 0, cacheRead: 0, cacheWrite: 0, totalTokens: t, cost: t / 1000 });
    const s = foldEvents([
      {
        v: 1,
        ts: 1,
        runId: 'r',
        type: 'run_start',
        recipe: 'x.yaml',
        name: 'x',
        recipeHash: 'h',
        inputs: {},
        plan: [{ task: 'build', keys: ['build'], needs: [], dynamic: false }],
      },
      { ...base, ts: 2, type: 'instance_queued', key: 'build' },
      { ...base, ts: 3, type: 'instance_start', key: 'build' },
      { ...base, ts: 4, type: 'agent_event', key: 'build@worker', event: { type: 'agent_start' } },
      { ...base, ts: 5, type: 'call_usage', key: 'build@worker', model: 'm', usage: u(700) },
      { ...base, ts: 6, type: 'agent_event', key: 'build@planner', event: { type: 'agent_start' } },
      { ...base, ts: 7, type: 'call_usage', key: 'build@planner', model: 'm', usage: u(300) },
      { ...base, ts: 8, type: 'instance_done', key: 'build', output: 'ok', durationMs: 6, usage: u(1000) },
    ]);
    expect(getInstance(s, 'build', 'build@worker')?.status).toBe('done');
    expect(getInstance(s, 'build', 'build@planner')?.status).toBe('done');
    expect(countStatuses(s)).toMatchObject({ total: 1, done: 1, queued: 0 });
    expect(runUsage(s).totalTokens).toBe(1000);
  });

  it("a pair counts its members' turns while it runs and at its end; a reply that failed or was aborted is no turn", () => {
    const base = { v: 1 as const, runId: 'r', task: 'build', attempt: 1, parent: 'build' };
    const turn = (ts: number, key: string, stopReason: string) =>
      ({ ...base, ts, type: 'agent_event', key, event: { type: 'turn_end', stopReason } }) as const;
    const s = foldEvents([
      {
        v: 1,
        ts: 1,
        runId: 'r',
        type: 'run_start',
        recipe: 'x.yaml',
        name: 'x',
        recipeHash: 'h',
        inputs: {},
        plan: [{ task: 'build', keys: ['build'], needs: [], dynamic: false }],
      },
      { ...base, ts: 2, type: 'instance_start', key: 'build' },
      turn(3, 'build@worker', 'toolUse'),
      turn(4, 'build@worker', 'error'),
      turn(5, 'build@worker', 'stop'),
      turn(6, 'build@planner', 'aborted'),
      turn(7, 'build@planner', 'stop'),
    ]);
    const pair = getInstance(s, 'build', 'build')!;
    expect(instanceUsage(getInstance(s, 'build', 'build@worker')!).turns).toBe(2);
    expect(instanceUsage(getInstance(s, 'build', 'build@planner')!).turns).toBe(1);
    expect(instanceUsage(pair).turns).toBe(3);
    expect(runUsage(s).turns).toBe(3);
    const zero = { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, totalTokens: 0, cost: 0 };
    applyEvent(s, {
      ...base,
      ts: 8,
      type: 'instance_done',
      key: 'build',
      output: 'ok',
      durationMs: 6,
      usage: { ...zero, turns: 3 },
    });
    expect(instanceUsage(pair).turns).toBe(3);
  });
});
