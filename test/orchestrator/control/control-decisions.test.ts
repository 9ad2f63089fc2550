// Control decisions, constructed alone: what cancel, steer, retry and cancel_run do (or why they
// are refused) for each state an instance can be in. No run, no socket.
import { afterAll, describe, expect, it } from 'vitest';
import {
  controlTarget,
  decideControl,
  decideResumeRetry,
  endedRunError,
  type ControlView,
  type StopReason,
} from '../../../src/orchestrator/control/control-decisions.js';
import type { InstanceStatus } from '../../../src/run/run-state.js';
import { cleanupTempDirs } from '../helpers/run-fixtures.js';
import { testRun } from '../helpers/run-state-fixtures.js';

afterAll(() => cleanupTempDirs());

const RECIPE = `name: ctl
model: claude-haiku-4-5
agents:
  w: {}
  p: {}
tasks:
  - id: fan
    for_each: [a, b]
    agent: w
    prompt: "\${{ item }}"
  - id: pair
    pair: { planner: p, worker: w }
    prompt: go
  - id: sh
    run: sleep 5
  - id: later
    needs: [fan]
    agent: w
    prompt: go
`;

function view(over: { stopping?: StopReason; running?: string[]; cancelled?: Record<string, string> } = {}) {
  const run = testRun(RECIPE);
  const v: ControlView = {
    runId: 'r1',
    stopping: over.stopping,
    instances: run.instances,
    tasks: run.tasks,
    runningAgents: over.running ?? [],
    cancelledBy: (id) => over.cancelled?.[id],
  };
  return { run, v };
}

describe('cancel', () => {
  it('stops a running instance (an agent keeps its session; a run: step its command)', () => {
    const { run, v } = view();
    run.add('fan', 'fan.a', 'running');
    run.add('sh', 'sh', 'running');
    expect(decideControl(v, { action: 'cancel', instance: 'fan.a' }, 'ana')).toEqual({
      ok: true,
      message:
        'cancelling fan.a: its agent is asked to stop; it ends cancelled with its session kept, and the run goes on',
      effect: { kind: 'cancel_running', id: 'fan.a', by: 'ana' },
    });
    expect(decideControl(v, { action: 'cancel', instance: 'sh' }, 'ana')).toMatchObject({
      ok: true,
      message: expect.stringMatching(/its command is stopped/),
    });
  });

  it('ends a queued or retrying instance at once; refuses what ended or is already being cancelled', () => {
    const { run, v } = view({ cancelled: { 'fan.b': 'bo' } });
    run.add('fan', 'fan.a', 'queued');
    run.add('fan', 'fan.b', 'running');
    expect(decideControl(v, { action: 'cancel', instance: 'fan.a' }, 'ana')).toEqual({
      ok: true,
      message: 'cancelled fan.a (not started); the run goes on',
      effect: { kind: 'cancel_waiting', id: 'fan.a', by: 'ana' },
    });
    expect(decideControl(v, { action: 'cancel', instance: 'fan.b' }, 'ana')).toEqual({
      ok: false,
      error: 'fan.b is already being cancelled (by bo)',
    });
    for (const status of ['done', 'failed', 'cancelled', 'skipped'] as InstanceStatus[]) {
      run.instances.get('fan.a')!.status = status;
      expect(decideControl(v, { action: 'cancel', instance: 'fan.a' }, 'ana')).toEqual({
        ok: false,
        error: `fan.a has already ended (${status}); nothing to cancel`,
      });
    }
    run.instances.get('fan.a')!.status = 'retrying';
    expect(decideControl(v, { action: 'cancel', instance: 'fan.a' }, 'ana')).toMatchObject({
      ok: true,
      message: 'cancelled fan.a (waiting to retry); the run goes on',
    });
    run.instances.get('fan.a')!.status = 'interrupted';
    expect(decideControl(v, { action: 'cancel', instance: 'fan.a' }, 'ana')).toEqual({
      ok: false,
      error: 'fan.a is stopping with the run (interrupted); nothing to cancel',
    });
  });
});

describe('steer', () => {
  it('delivers to a running agent; a pair through its worker unless a member is named', () => {
    const { run, v } = view({ running: ['fan.a', 'pair@worker', 'pair@planner'] });
    run.add('fan', 'fan.a', 'running');
    run.add('pair', 'pair', 'running');
    expect(decideControl(v, { action: 'steer', instance: 'fan.a', text: 'hurry' }, 'ana')).toEqual({
      ok: true,
      message: 'delivered to fan.a: the agent reads it after its current step',
      effect: { kind: 'steer', target: 'fan.a', text: 'hurry' },
    });
    expect(decideControl(v, { action: 'steer', instance: 'pair', text: 'x' }, 'ana')).toMatchObject({
      effect: { target: 'pair@worker' },
    });
    expect(decideControl(v, { action: 'steer', instance: 'pair@planner', text: 'x' }, 'ana')).toMatchObject({
      effect: { target: 'pair@planner' },
    });
  });

  it('refuses a step that is no agent, an instance not running, and an agent between attempts', () => {
    const { run, v } = view();
    run.add('sh', 'sh', 'running');
    run.add('fan', 'fan.a', 'running');
    run.add('fan', 'fan.b', 'done');
    expect(decideControl(v, { action: 'steer', instance: 'sh', text: 'x' }, 'ana')).toEqual({
      ok: false,
      error: 'sh is a run: step, not an agent; it cannot be steered',
    });
    expect(decideControl(v, { action: 'steer', instance: 'fan.b', text: 'x' }, 'ana')).toEqual({
      ok: false,
      error: 'fan.b is not running (done); only a running agent can be steered',
    });
    expect(decideControl(v, { action: 'steer', instance: 'fan.a', text: 'x' }, 'ana')).toMatchObject({
      ok: false,
      error: expect.stringMatching(/^fan.a has no running agent right now/),
    });
  });
});

describe('retry', () => {
  it('runs a failed or cancelled instance again, unless the run stops or it never resolved', () => {
    const { run, v } = view();
    run.add('fan', 'fan.a', 'failed', { attempt: 2, resolved: { cwd: '/x' } as never });
    run.add('fan', 'fan.b', 'failed', { error: 'bad expression' });
    expect(decideControl(v, { action: 'retry', instance: 'fan.a' }, 'ana')).toEqual({
      ok: true,
      message: 'retrying fan.a: attempt 3 continues from its session',
      effect: { kind: 'retry', id: 'fan.a' },
    });
    expect(decideControl(v, { action: 'retry', instance: 'fan.b' }, 'ana')).toMatchObject({
      ok: false,
      error: expect.stringMatching(/^fan.b failed before it could start \(bad expression\)/),
    });
    expect(decideControl({ ...v, stopping: 'budget' }, { action: 'retry', instance: 'fan.a' }, 'ana')).toMatchObject({
      ok: false,
      error: expect.stringMatching(/^run r1 is stopping \(budget\)/),
    });
    run.instances.get('fan.a')!.status = 'running';
    expect(decideControl(v, { action: 'retry', instance: 'fan.a' }, 'ana')).toEqual({
      ok: false,
      error: 'fan.a is running; only a failed or cancelled instance can be retried',
    });
  });

  it('on resume: only a cancelled instance of the log, with a did-you-mean for a typo', () => {
    const { run } = view();
    run.add('fan', 'fan.a', 'cancelled');
    run.add('fan', 'fan.b', 'done');
    expect(decideResumeRetry('r1', run.instances, 'fan.a')).toEqual({
      ok: true,
      id: 'fan.a',
      message: 'fan.a runs again with this resume',
    });
    expect(decideResumeRetry('r1', run.instances, 'fan.b')).toEqual({
      ok: false,
      error: 'fan.b is done; nothing to retry',
    });
    expect(decideResumeRetry('r1', run.instances, 'fan.c')).toMatchObject({
      ok: false,
      error: expect.stringMatching(/has no instance "fan.c" in its log; did you mean "fan.[ab]"\?/),
    });
  });
});

describe('targets and the whole run', () => {
  it('names a waiting task, suggests a near key, and maps a pair member to its pair', () => {
    const { run, v } = view();
    run.add('fan', 'fan.a', 'running');
    run.add('pair', 'pair', 'running');
    expect(controlTarget(v, 'pair@worker')).toMatchObject({ inst: { id: 'pair' } });
    expect(controlTarget(v, 'later')).toEqual({
      error: 'task later has not started yet (it waits for fan); its instances are not known until it does',
    });
    expect(controlTarget(v, 'fan.x')).toEqual({ error: 'run r1 has no instance "fan.x"; did you mean "fan.a"?' });
    expect(controlTarget(view().v, 'nope')).toEqual({
      error: 'run r1 has no instance "nope"; no instance has started yet',
    });
  });

  it('cancel_run interrupts once; an ended run says how to go on', () => {
    const { v } = view();
    expect(decideControl(v, { action: 'cancel_run' }, 'ana')).toMatchObject({
      ok: true,
      effect: { kind: 'interrupt' },
      message: expect.stringMatching(/orchestrate resume r1$/),
    });
    expect(decideControl({ ...v, stopping: 'interrupted' }, { action: 'cancel_run' }, 'ana')).toEqual({
      ok: false,
      error: 'run r1 is already being interrupted',
    });
    expect(endedRunError('r1', { action: 'retry', instance: 'fan.a' })).toBe(
      'run r1 has ended; failed instances run again with: orchestrate resume r1 (a cancelled one: orchestrate resume r1 --retry fan.a)',
    );
    expect(endedRunError('r1', { action: 'cancel', instance: 'fan.a' })).toBe('run r1 has ended');
  });
});
