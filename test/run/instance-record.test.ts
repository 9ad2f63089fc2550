// The one fold of run.jsonl as every reader uses it: the core that changes an instance's status
// (applyInstanceEvent), what resume reads from a folded log (the first run_start, the last
// run_end, overrides, spend per instance with pair members', reopened retries), and the
// coordinator's instances taken from it (session-start.ts). Logs are built by hand.
import { describe, expect, it } from 'vitest';
import { restoredInstances } from '../../src/orchestrator/execution/session-start.js';
import type { RunEvent } from '../../src/run/run-events.js';
import { applyInstanceEvent, foldEvents, getInstance, recordOf, type InstanceRecord } from '../../src/run/run-fold.js';

const base = { v: 1 as const, ts: 0, runId: 'r' };
const usage = (n: number) => ({ input: n, output: 0, cacheRead: 0, cacheWrite: 0, totalTokens: n, cost: n / 1000 });
const ref = (key: string, attempt = 1) => ({ ...base, task: 't', key, attempt, parent: 't' });
const start: RunEvent = {
  ...base,
  type: 'run_start',
  recipe: 'r.yaml',
  name: 'n',
  recipeHash: 'h',
  inputs: {},
  plan: [{ task: 't', keys: ['t.a', 't.b', 't.c', 't.d'], needs: [], dynamic: false }],
  overrides: { budgetUsd: 1 },
};

describe('applyInstanceEvent', () => {
  it('moves an instance through its lifecycle and keeps one note per failed attempt', () => {
    const rec: InstanceRecord = { status: 'pending', attempt: 0 };
    applyInstanceEvent(rec, { type: 'instance_queued', ...ref('t.a') });
    expect(rec.status).toBe('queued');
    applyInstanceEvent(rec, {
      type: 'instance_start',
      ...ref('t.a'),
      baseTree: 'tree1',
      repoRoot: '/repo',
      worktree: '/wt',
    });
    expect(rec).toMatchObject({
      status: 'running',
      attempt: 1,
      git: { root: '/repo', tree: 'tree1', worktree: '/wt' },
    });
    applyInstanceEvent(rec, {
      type: 'instance_retry',
      ...ref('t.a'),
      failure: 'crashed',
      error: 'exited',
      delayMs: 5,
      uncharged: true,
    });
    applyInstanceEvent(rec, {
      type: 'instance_failed',
      ...ref('t.a', 2),
      failure: 'timeout',
      error: 'slow',
      final: true,
      durationMs: 9,
    });
    applyInstanceEvent(rec, {
      type: 'instance_failed',
      ...ref('t.a', 2),
      failure: 'timeout',
      error: 'slow (not retried)',
      final: true,
      durationMs: 9,
    });
    expect(rec).toMatchObject({ status: 'failed', failure: 'timeout', unchargedAttempts: 1, durationMs: 9 });
    expect(rec.attemptFailures).toEqual([
      { attempt: 1, failure: 'crashed', error: 'exited' },
      { attempt: 2, failure: 'timeout', error: 'slow' },
    ]);
    // A done instance is never queued again.
    applyInstanceEvent(rec, { type: 'instance_done', ...ref('t.a', 3), output: 1, usage: usage(1), durationMs: 10 });
    applyInstanceEvent(rec, { type: 'instance_queued', ...ref('t.a', 4) });
    expect(rec).toMatchObject({ status: 'done', output: 1 });
    expect(rec.failure).toBeUndefined();
  });
});

describe('a folded log, as resume reads it', () => {
  const log: RunEvent[] = [
    start,
    { type: 'instance_start', ...ref('t.a') },
    { type: 'call_usage', ...ref('t.a'), model: 'm', usage: usage(100) },
    {
      type: 'instance_done',
      ...ref('t.a'),
      output: 'A',
      text: 'A',
      summary: '## Goal\nx',
      usage: usage(100),
      durationMs: 5,
    },
    { type: 'instance_start', ...ref('t.b') },
    { type: 'call_usage', ...ref('t.b@worker'), model: 'm', usage: usage(30) },
    { type: 'call_usage', ...ref('t.b@planner'), model: 'm', usage: usage(20) },
    { type: 'instance_start', ...ref('t.c') },
    {
      type: 'instance_failed',
      ...ref('t.c'),
      failure: 'cancelled',
      error: 'cancelled by ana',
      final: true,
      durationMs: 1,
    },
    { ...base, type: 'run_end', status: 'failed', usage: usage(150), durationMs: 10 },
    { ...base, type: 'run_resume', previousStatus: 'failed', overrides: { budgetUsd: 5 } },
    {
      ...base,
      type: 'control',
      action: 'retry',
      instance: 't.c',
      by: 'resume',
      ok: true,
      message: 't.c runs again with this resume',
    },
  ];

  it('knows the run: its start, how it last ended, the overrides in force and every call spent', () => {
    const s = foldEvents(log);
    expect(s.start?.recipe).toBe('r.yaml');
    expect(s.lastEndStatus).toBe('failed');
    expect(s.status).toBe('running');
    expect(s.overrides).toEqual({ budgetUsd: 5 });
    expect(s.spend.totalTokens).toBe(150);
    // A pair's members' calls count for the pair instance.
    expect(getInstance(s, 't', 't.b')!.spend.totalTokens).toBe(50);
    // An accepted retry reopens the cancelled instance.
    expect(getInstance(s, 't', 't.c')).toMatchObject({ status: 'pending' });
  });

  it('gives the coordinator its instances: done ones keep their result, the rest run again', () => {
    const restored = new Map(restoredInstances(foldEvents(log)).map((i) => [i.id, i]));
    // t.d is only named in the plan: it starts afresh.
    expect([...restored.keys()].sort()).toEqual(['t.a', 't.b', 't.c']);
    expect(restored.get('t.a')).toMatchObject({ status: 'done', restored: true, output: 'A', attempt: 1 });
    expect(restored.get('t.a')!.handoff?.goal).toBeDefined();
    expect(restored.get('t.b')).toMatchObject({ status: 'pending', attempt: 1, usage: { totalTokens: 50 } });
    expect(restored.get('t.c')).toMatchObject({ status: 'pending' });
    const cancelled = restoredInstances(foldEvents(log.slice(0, 9)))[2]!;
    expect(cancelled).toMatchObject({
      id: 't.c',
      status: 'cancelled',
      failure: 'cancelled',
      error: 'cancelled by ana',
    });
  });

  it("recordOf copies the record apart from the views' state", () => {
    const inst = getInstance(foldEvents(log), 't', 't.c')!;
    const rec = recordOf(inst);
    expect(rec).not.toHaveProperty('attempts');
    rec.attemptFailures!.push({ attempt: 9, failure: 'error', error: 'x' });
    expect(inst.attemptFailures).toHaveLength(1);
  });
});
