// Approval gates constructed alone (issue 29): what a gate does with an instance the walk would
// queue, what an answer applies to or why it is refused, timeouts with an injected clock, a
// stop, and a resume's gate records. No run, no thread, no socket: the hands record what happens.
import { afterAll, afterEach, describe, expect, it, vi } from 'vitest';
import {
  ApprovalGates,
  boardOfFold,
  decideApproval,
  type GateBoard,
} from '../../../src/orchestrator/control/approval-gates.js';
import { applyApprovalEvent } from '../../../src/run/approval-record.js';
import type { RunEvent, RunEventInput } from '../../../src/run/run-events.js';
import { foldEvents } from '../../../src/run/run-fold.js';
import type { InstanceState, TaskState } from '../../../src/run/run-state.js';
import { cleanupTempDirs } from '../helpers/run-fixtures.js';
import { testRun } from '../helpers/run-state-fixtures.js';

afterAll(() => cleanupTempDirs());
afterEach(() => vi.useRealTimers());

const RECIPE = `name: gates
model: claude-haiku-4-5
agents:
  w: {}
tasks:
  - id: build
    agent: w
    prompt: go
  - id: publish
    needs: [build]
    for_each: [a, b]
    agent: w
    prompt: "\${{ item }}"
    approve: { prompt: "Publish?", timeout: 10m, on_timeout: approve }
  - id: deploy
    needs: [build]
    agent: w
    prompt: go
    approve: {}
`;

function gates(restored?: ReturnType<typeof foldEvents>) {
  const run = testRun(RECIPE);
  let now = 1_000_000;
  const log: RunEventInput[] = [];
  const queued: string[] = [];
  const settled: string[] = [];
  const g = new ApprovalGates(
    {
      runId: 'r1',
      tasks: run.tasks,
      record: (e) => {
        log.push(e);
        // The lifecycle part of the coordinator's record: a skip ends the instance.
        if (e.type === 'instance_skipped') run.instances.get(e.key)!.status = 'skipped';
      },
      queue: (_t, inst) => queued.push(inst.id),
      settle: (t) => settled.push(t.task.id),
      now: () => now,
    },
    restored,
  );
  const arrive = (task: string, id: string): { held: boolean; inst: InstanceState; t: TaskState } => {
    const inst = run.add(task, id, 'pending');
    const t = run.tasks.get(task)!;
    return { held: g.holds(t, inst), inst, t };
  };
  return { run, g, log, queued, settled, arrive, tick: (ms: number) => (now += ms), now: () => now };
}

describe('a gate on arrival', () => {
  it('lets a task without approve: through, holds a gated one and logs the request with an absolute deadline', () => {
    const { arrive, log, g } = gates();
    expect(arrive('build', 'build').held).toBe(false);
    expect(arrive('publish', 'publish.a').held).toBe(true);
    expect(arrive('deploy', 'deploy').held).toBe(true);
    expect(log).toEqual([
      {
        type: 'approval_requested',
        task: 'publish',
        key: 'publish.a',
        prompt: 'Publish?',
        deadline: 1_000_000 + 600_000,
        onTimeout: 'approve',
      },
      {
        type: 'approval_requested',
        task: 'deploy',
        key: 'deploy',
        prompt: 'Approve task deploy?',
        onTimeout: 'reject',
      },
    ]);
    expect(g.waitingCount).toBe(2);
    g.pause();
  });
});

describe('answers', () => {
  it('approve without --instance answers every waiting instance of the task; they are queued', () => {
    const { arrive, g, log, queued } = gates();
    arrive('publish', 'publish.a');
    arrive('publish', 'publish.b');
    expect(g.answer({ action: 'approve', task: 'publish', note: 'ok', via: 'view' }, 'ana')).toEqual({
      ok: true,
      message: 'approved publish.a, publish.b: queued now',
    });
    expect(queued).toEqual(['publish.a', 'publish.b']);
    expect(log.filter((e) => e.type === 'approval_given')).toEqual([
      expect.objectContaining({ key: 'publish.a', decision: 'approved', by: 'ana', via: 'view', note: 'ok' }),
      expect.objectContaining({ key: 'publish.b', decision: 'approved', by: 'ana', via: 'view', note: 'ok' }),
    ]);
    expect(g.waitingCount).toBe(0);
    expect(g.answer({ action: 'reject', task: 'publish', instance: 'publish.a' }, 'bo')).toEqual({
      ok: false,
      error: expect.stringMatching(/^publish\.a was already approved by ana via view at .*: ok; nothing to reject$/),
    });
  });

  it('reject --instance skips that instance alone (and settles its task); the other still waits', () => {
    const { arrive, g, log, queued, settled, run } = gates();
    arrive('publish', 'publish.a');
    arrive('publish', 'publish.b');
    expect(g.answer({ action: 'reject', task: 'publish', instance: 'publish.b' }, 'ana')).toMatchObject({ ok: true });
    expect(queued).toEqual([]);
    expect(settled).toEqual(['publish']);
    expect(run.instances.get('publish.b')!.status).toBe('skipped');
    expect(log.at(-1)).toMatchObject({ type: 'instance_skipped', key: 'publish.b' });
    expect((log.at(-1) as { reason: string }).reason).toMatch(/^not approved: rejected by ana via cli at /);
    expect(g.waitingCount).toBe(1);
    g.pause();
  });

  it('refuses with the reason: unknown task (did you mean), no gate, not reached yet, unknown instance, ended', () => {
    const { arrive, g, run } = gates();
    expect(g.answer({ action: 'approve', task: 'publsh' }, 'a')).toEqual({
      ok: false,
      error: 'run r1 has no task "publsh"; did you mean "publish"?',
    });
    expect(g.answer({ action: 'approve', task: 'build' }, 'a')).toEqual({
      ok: false,
      error: 'task build has no approval gate (approve:); gated tasks: publish, deploy',
    });
    expect(g.answer({ action: 'approve', task: 'deploy' }, 'a')).toEqual({
      ok: false,
      error:
        'task deploy has not reached its approval gate yet (it waits for build); answer once `orchestrate watch r1` shows it waiting',
    });
    arrive('publish', 'publish.a');
    expect(g.answer({ action: 'approve', task: 'publish', instance: 'publish.x' }, 'a')).toEqual({
      ok: false,
      error: 'task publish has no instance "publish.x" at its gate; did you mean "publish.a"?',
    });
    // Cancelled by a user while it waited: nothing to answer, and no event.
    run.instances.get('publish.a')!.status = 'cancelled';
    expect(g.answer({ action: 'approve', task: 'publish' }, 'a')).toEqual({
      ok: false,
      error: 'publish.a has already ended (cancelled); nothing to approve',
    });
    g.pause();
  });
});

describe('timeouts, stops and resume', () => {
  it('the deadline answers with on_timeout (approve: queued), logged as the timeout', () => {
    vi.useFakeTimers();
    const { arrive, log, queued, tick } = gates();
    arrive('publish', 'publish.a');
    tick(600_000);
    vi.advanceTimersByTime(600_000);
    expect(queued).toEqual(['publish.a']);
    expect(log.at(-1)).toMatchObject({ type: 'approval_given', decision: 'approved', by: 'timeout', via: 'timeout' });
  });

  it('a timer that fires before the clock reaches the deadline waits again instead of answering early', () => {
    vi.useFakeTimers();
    const { arrive, log, queued, tick, g } = gates();
    arrive('publish', 'publish.a');
    tick(100_000); // the clock lags the timer
    vi.advanceTimersByTime(600_000);
    expect(queued).toEqual([]);
    expect(log.filter((e) => e.type === 'approval_given')).toEqual([]);
    tick(500_000);
    vi.advanceTimersByTime(600_000);
    expect(queued).toEqual(['publish.a']);
    g.pause();
  });

  it('a stop skips the waiting instances (their gates stay waiting in the log) and no timeout answers after', () => {
    vi.useFakeTimers();
    const { arrive, log, g, queued, tick } = gates();
    arrive('publish', 'publish.a');
    g.stop('budget exhausted');
    expect(log.at(-1)).toMatchObject({
      type: 'instance_skipped',
      key: 'publish.a',
      reason: 'not started: budget exhausted',
    });
    tick(600_000);
    vi.advanceTimersByTime(600_000);
    expect(queued).toEqual([]);
    expect(log.some((e) => e.type === 'approval_given')).toBe(false);
  });

  it('a resume obeys the log: approved goes, rejected is skipped, waiting asks again with the same deadline', () => {
    const at = (type: string, fields: Record<string, unknown>, ts: number) =>
      ({ v: 1, ts, runId: 'r1', type, ...fields }) as unknown as RunEvent;
    const fold = foldEvents([
      at('run_start', { recipe: 'r.yaml', name: 'gates', recipeHash: 'x', inputs: {}, plan: [] }, 1),
      at(
        'approval_requested',
        { task: 'publish', key: 'publish.a', prompt: 'Publish?', deadline: 5_000, onTimeout: 'approve' },
        2,
      ),
      at(
        'approval_requested',
        { task: 'publish', key: 'publish.b', prompt: 'Publish?', deadline: 5_000, onTimeout: 'approve' },
        2,
      ),
      at('approval_requested', { task: 'deploy', key: 'deploy', prompt: 'Deploy?', onTimeout: 'reject' }, 2),
      at('approval_given', { task: 'publish', key: 'publish.a', decision: 'approved', by: 'ana', via: 'cli' }, 3),
      at(
        'approval_given',
        { task: 'deploy', key: 'deploy', decision: 'rejected', by: 'bo', via: 'cli', offline: true },
        3,
      ),
    ]);
    expect(boardOfFold('r1', fold).gates.map((x) => [x.key, x.approval.state])).toEqual([
      ['publish.a', 'approved'],
      ['publish.b', 'waiting'],
      ['deploy', 'rejected'],
    ]);
    const { arrive, log, g } = gates(fold);
    expect(arrive('publish', 'publish.a').held).toBe(false);
    expect(arrive('deploy', 'deploy').held).toBe(true);
    expect(log.at(-1)).toMatchObject({ type: 'instance_skipped', key: 'deploy' });
    expect((log.at(-1) as { reason: string }).reason).toMatch(/^not approved: rejected by bo via cli \(offline\) at /);
    expect(arrive('publish', 'publish.b').held).toBe(true);
    expect(log.at(-1)).toEqual({
      type: 'approval_requested',
      task: 'publish',
      key: 'publish.b',
      prompt: 'Publish?',
      deadline: 5_000,
      onTimeout: 'approve',
    });
    g.pause();
  });
});

describe('decideApproval and the record', () => {
  it('a repeated request keeps the first request time; an answer records who, how, when and the note', () => {
    let rec = applyApprovalEvent(undefined, {
      type: 'approval_requested',
      task: 't',
      key: 't',
      prompt: 'p',
      onTimeout: 'reject',
      ts: 10,
    });
    rec = applyApprovalEvent(rec, {
      type: 'approval_requested',
      task: 't',
      key: 't',
      prompt: 'p',
      onTimeout: 'reject',
      ts: 20,
    });
    expect(rec).toEqual({ state: 'waiting', prompt: 'p', requestedAt: 10, onTimeout: 'reject' });
    rec = applyApprovalEvent(rec, {
      type: 'approval_given',
      task: 't',
      key: 't',
      decision: 'rejected',
      by: 'ana',
      via: 'mcp',
      note: 'n',
      ts: 30,
    });
    expect(rec).toEqual({
      state: 'rejected',
      prompt: 'p',
      requestedAt: 10,
      onTimeout: 'reject',
      by: 'ana',
      at: 30,
      via: 'mcp',
      note: 'n',
    });
  });

  it('an instance that ended some other way is not answerable', () => {
    const board: GateBoard = {
      runId: 'r',
      tasks: new Map([['t', { needs: [], gated: true }]]),
      gates: [
        {
          task: 't',
          key: 't',
          approval: { state: 'waiting', prompt: 'p', requestedAt: 1, onTimeout: 'reject' },
          ended: 'skipped',
        },
      ],
    };
    expect(decideApproval(board, { action: 'approve', task: 't' })).toEqual({
      ok: false,
      error: 't has already ended (skipped); nothing to approve',
    });
  });
});
