// The DAG walk and admission, constructed alone: which task starts or is skipped, when a task has
// settled, how a run ends, and whether an instance may start (budget reservations through
// Admission, concurrency and write scopes through the Scheduler it plugs into). No run, no threads.
import { afterAll, describe, expect, it } from 'vitest';
import { Admission } from '../../../src/orchestrator/schedule/admission.js';
import { BudgetLedger } from '../../../src/orchestrator/schedule/budget.js';
import type { StopReason } from '../../../src/orchestrator/control/control-decisions.js';
import { Scheduler, type SchedulableInstance } from '../../../src/orchestrator/schedule/scheduler.js';
import { pastMaxFailed, readyTasks, runEndStatus, taskOutcome } from '../../../src/orchestrator/schedule/task-walk.js';
import { cleanupTempDirs } from '../helpers/run-fixtures.js';
import { testRun } from '../helpers/run-state-fixtures.js';

afterAll(() => cleanupTempDirs());

const DAG = `name: dag
model: claude-haiku-4-5
tasks:
  - id: a
    prompt: go
  - id: b
    needs: [a]
    prompt: go
    on_failure: continue
  - id: c
    needs: [b]
    prompt: go
  - id: fan
    for_each: [x, y, z]
    prompt: "\${{ item }}"
    max_failed: 1
`;

const steps = (run: ReturnType<typeof testRun>, stopping?: StopReason) =>
  [...readyTasks(run.tasks, () => stopping)].map((s) =>
    'skip' in s ? `${s.t.task.id}: skip (${s.skip})` : `${s.t.task.id}: start`,
  );

describe('the DAG walk', () => {
  it('starts the tasks whose needs have settled, in plan order, and skips the ones a failure blocks', () => {
    const run = testRun(DAG);
    expect(steps(run)).toEqual(['a: start', 'fan: start']);
    run.tasks.get('a')!.status = 'done';
    expect(steps(run)).toEqual(['b: start', 'fan: start']);
    // b failed with on_failure: continue: c still runs.
    run.tasks.get('b')!.status = 'failed';
    expect(steps(run)).toEqual(['c: start', 'fan: start']);
    // a failed with on_failure: fail (the default): b is skipped, naming why.
    run.tasks.get('a')!.status = 'failed';
    run.tasks.get('b')!.status = 'waiting';
    expect(steps(run)).toEqual(['b: skip (a failed)', 'fan: start']);
    expect(steps(run, 'budget')).toEqual([
      'b: skip (not started: the run is stopping (budget))',
      'fan: skip (not started: the run is stopping (budget))',
    ]);
  });

  it('decides one task at a time, so a task that settles while the walk goes on frees the next', () => {
    const run = testRun(DAG);
    const seen: string[] = [];
    for (const s of readyTasks(run.tasks, () => undefined)) {
      seen.push(s.t.task.id);
      s.t.status = 'done'; // settles at once (its instances were done before a resume)
    }
    expect(seen).toEqual(['a', 'b', 'c', 'fan']);
  });

  it('settles a task once every instance ended: failed past max_failed, done within it', () => {
    const run = testRun(DAG);
    const t = run.tasks.get('fan')!;
    run.add('fan', 'fan.x', 'done');
    const y = run.add('fan', 'fan.y', 'failed');
    const z = run.add('fan', 'fan.z', 'running');
    expect(taskOutcome(t)).toBeUndefined();
    z.status = 'done';
    expect(taskOutcome(t)).toBe('done');
    expect(pastMaxFailed(t)).toBeUndefined();
    z.status = 'cancelled'; // a user's cancel counts like a failure
    expect(taskOutcome(t)).toBe('failed');
    expect(pastMaxFailed(t)).toBe('cancelled: fan has 2 failed instances (max_failed 1)');
    y.status = 'skipped';
    expect(taskOutcome(t)).toBe('done');
  });

  it('ends a run by what stopped it, else by whether anything failed', () => {
    const run = testRun(DAG);
    run.add('a', 'a', 'done');
    expect(runEndStatus(run.tasks, run.instances.values(), undefined, false)).toBe('succeeded');
    expect(runEndStatus(run.tasks, run.instances.values(), 'budget', false)).toBe('budget_exhausted');
    expect(runEndStatus(run.tasks, run.instances.values(), 'interrupted', false)).toBe('interrupted');
    expect(runEndStatus(run.tasks, run.instances.values(), undefined, true)).toBe('failed');
    // A user's cancel alone leaves the run partial (also when the cancel stopped new work: fail-fast).
    run.add('fan', 'fan.x', 'cancelled');
    expect(runEndStatus(run.tasks, run.instances.values(), undefined, false)).toBe('partial');
    expect(runEndStatus(run.tasks, run.instances.values(), 'fail-fast', false)).toBe('partial');
    // An instance that failed on its own makes it failed, cancels or not.
    run.add('fan', 'fan.y', 'failed');
    expect(runEndStatus(run.tasks, run.instances.values(), 'fail-fast', false)).toBe('failed');
    expect(runEndStatus(run.tasks, run.instances.values(), 'interrupted', false)).toBe('interrupted');
  });
});

const BUDGETED = `name: budgeted
model: claude-haiku-4-5
budget: { tokens: 10000 }
tasks:
  - id: big
    prompt: go
    budget: { tokens: 6000 }
  - id: small
    for_each: [a, b]
    prompt: "\${{ item }}"
    budget: { tokens: 3000 }
  - id: open
    prompt: go
`;

function admissionOf(yaml: string, stopping: () => StopReason | undefined = () => undefined) {
  const run = testRun(yaml);
  const ledger = new BudgetLedger(run.recipe.budget);
  const admission = new Admission({ recipe: run.recipe, ledger, taskOf: (id) => run.tasks.get(id)!.task, stopping });
  return { run, ledger, admission };
}

const sched = (id: string, task: string, over: Partial<SchedulableInstance> = {}): SchedulableInstance => ({
  id,
  task,
  writes: [],
  order: 0,
  ...over,
});

describe('budget admission', () => {
  it('reserves what running instances may still spend of their slices; refuses only when nothing runs', () => {
    const { admission, ledger } = admissionOf(BUDGETED);
    expect(admission.admit(sched('big', 'big'), [])).toBeUndefined();
    // big may still spend 6000 of 10000: a small one (3000) fits beside it, a second big one does not.
    expect(admission.admit(sched('small.a', 'small'), [sched('big', 'big')])).toBeUndefined();
    expect(admission.admit(sched('big2', 'big'), [sched('big', 'big')])).toEqual({
      wait: expect.stringMatching(/^budget reserved by running instances: run budget of 10000 tokens is spent/),
    });
    // What big already spent counts once: its slice left is 6000 - 5000.
    ledger.charge(['run', 'instance:big'], { usd: 0, tokens: 5000 });
    expect(admission.admit(sched('small.a', 'small'), [sched('big', 'big')])).toBeUndefined();
    ledger.charge(['run'], { usd: 0, tokens: 4500 });
    expect(admission.admit(sched('small.b', 'small'), [])).toEqual({
      refuse: expect.stringMatching(/^run budget of 10000 tokens is spent \(9500 used/),
    });
  });

  it('lets everything in without a run budget, and nothing while the run stops', () => {
    const free = admissionOf(DAG);
    expect(free.admission.admit(sched('a', 'a'), [sched('fan.x', 'fan'), sched('fan.y', 'fan')])).toBeUndefined();
    let stopping: StopReason | undefined;
    const { admission } = admissionOf(BUDGETED, () => stopping);
    stopping = 'fail-fast';
    expect(admission.admit(sched('big', 'big'), [])).toEqual({ wait: 'the run is stopping (fail-fast)' });
  });

  it("estimates a call from the agent's last one, and a first call as a share of the run's tokens", () => {
    const { admission, run } = admissionOf(BUDGETED);
    const open = run.tasks.get('open')!.task;
    // First call: capped to a twentieth of the 10000-token run budget.
    expect(admission.callEstimate('open', open).tokens).toBe(500);
    admission.noteCall('open', 4000);
    expect(admission.callEstimate('open', open).tokens).toBeGreaterThan(4000);
    expect(admission.callEstimate('open', open).usd).toBeGreaterThan(0);
  });

  it('never reserves less for a call than the input its worker measured in the request', () => {
    const { admission, run } = admissionOf(BUDGETED);
    const open = run.tasks.get('open')!.task;
    // A first call of 3000 input tokens (1000 of them cached) is not capped at a twentieth (500).
    const big = admission.callEstimate('open', open, undefined, {
      uncachedInput: 2000,
      cachedInput: 1000,
      maxOutput: 8000,
    });
    expect(big.tokens).toBe(3000);
    // claude-haiku-4-5: $1 per million input tokens, cache reads $0.10.
    expect(big.usd).toBeCloseTo((2000 * 1 + 1000 * 0.1) / 1e6, 12);
    // A small request keeps the usual estimate.
    expect(
      admission.callEstimate('open', open, undefined, { uncachedInput: 10, cachedInput: 0, maxOutput: 8000 }).tokens,
    ).toBe(500);
  });

  it('plugs into the scheduler after concurrency, max_parallel and write scopes', async () => {
    const { admission } = admissionOf(BUDGETED);
    const started: string[] = [];
    const finishers = new Map<string, () => void>();
    const scheduler = new Scheduler({ concurrency: 2, admit: (i, running) => admission.admit(i, running) });
    const submit = (s: SchedulableInstance) =>
      scheduler.submit(s, () => {
        started.push(s.id);
        return new Promise<void>((r) => finishers.set(s.id, r));
      });
    submit(sched('big', 'big', { writes: ['/repo/src/**'] }));
    submit(sched('small.a', 'small', { writes: ['/repo/src/a.ts'] })); // overlaps big's scope: waits
    submit(sched('small.b', 'small', { writes: ['/repo/docs/**'] }));
    submit(sched('open', 'open'));
    await Promise.resolve();
    // concurrency 2: big and small.b (small.a waits for big's write scope).
    expect(started).toEqual(['big', 'small.b']);
    finishers.get('big')!();
    await new Promise((r) => setImmediate(r));
    expect(started).toEqual(['big', 'small.b', 'small.a']);
  });
});
