// run_recipe / resume with `wait: true` (run-waiter.ts, then run_status's view of the folder):
// the wait ends at the session's run_end, and what it then reports is the run's end, also in the
// window where the coordinator has written run_end but still holds the run's lease (it lets go
// just after). Issue 38: once in 18 tries the wait returned `running` with every instance done,
// because the status read the lease before the log. The test holds the lease itself, as the
// coordinator does in that window, so the window is open for as long as the test needs.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import type { LaunchedRun } from '../../src/service/run-launcher.js';
import { runStatus } from '../../src/service/show-run.js';
import { ProgressSender, progressText, waitForRun } from '../../src/mcp/run-waiter.js';
import type { ToolCall } from '../../src/mcp/tool-table.js';
import { zeroUsage } from '../../src/run/run-events.js';
import { applyEvent, createRunState } from '../../src/run/run-fold.js';
import { readRunLog } from '../../src/run/run-store.js';
import { FileRunLease } from '../../src/run/run-lease.js';
import { RunStore } from '../../src/run/run-store.js';

const made: string[] = [];
afterAll(() => {
  for (const d of made) rmSync(d, { recursive: true, force: true });
});

/** The run process as the launcher knows it: still running (it holds the lease). */
function launched(store: RunStore): LaunchedRun {
  return {
    runDir: store.dir,
    runId: store.runId,
    pid: process.pid,
    exited: new Promise<number | null>(() => undefined),
    hasExited: () => false,
    exitCode: () => undefined,
  };
}

/** A request without a progress token: the waiter sends no notifications (ProgressSender reads only _meta). */
const noProgress = new ProgressSender({ _meta: undefined } as unknown as ToolCall);

/** One wait pass: an aborted signal makes the waiter read the log once and say whether it ended. */
function lookOnce(run: LaunchedRun, sinceTs: number) {
  const ac = new AbortController();
  ac.abort();
  return waitForRun(run, sinceTs, noProgress, 1000, ac.signal);
}

describe('wait: true and the end of a run', () => {
  it('ends only at run_end, and reports the run_end status while the coordinator still holds the lease', async () => {
    const runsDir = mkdtempSync(join(tmpdir(), 'orch-waiter-'));
    made.push(runsDir);
    const sinceTs = Date.now();
    const store = RunStore.create(runsDir, 'r-wait');
    const lease = new FileRunLease(store.dir);
    expect(lease.acquireSync().ok).toBe(true);
    try {
      store.append({
        type: 'run_start',
        recipe: 'recipe.yaml',
        name: 'wait',
        recipeHash: 'h',
        inputs: {},
        plan: [{ task: 'a', keys: ['a'], needs: [], dynamic: false }],
      });
      const ref = { task: 'a', key: 'a', attempt: 1, parent: 'a' };
      store.append({ type: 'instance_queued', ...ref });
      store.append({ type: 'instance_start', ...ref });
      store.append({ type: 'instance_done', ...ref, output: 'ok', usage: zeroUsage(), durationMs: 5 });
      store.flush();
      const run = launched(store);

      // Every instance is done, run_end is not written yet: the wait goes on, the run is running.
      expect(await lookOnce(run, sinceTs)).toBe('cancelled');
      expect(runStatus(store.dir)).toMatchObject({ status: 'running', counts: { done: 1, running: 0 } });

      // The coordinator writes run_end and has not let go of the lease yet: the window of the bug.
      store.append({ type: 'run_end', status: 'succeeded', usage: zeroUsage(), durationMs: 10 });
      store.flush();
      const never = new AbortController();
      expect(await waitForRun(run, sinceTs, noProgress, 1000, never.signal)).toBe('ended');
      const status = runStatus(store.dir);
      expect(status).toMatchObject({ status: 'succeeded', instances: [{ key: 'a', status: 'done' }] });
      expect(status).not.toHaveProperty('coordinator');
    } finally {
      lease.releaseSync();
    }
    expect(runStatus(store.dir)).toMatchObject({ status: 'succeeded' });
  });

  it('a resumed run whose log ends with the previous session’s run_end is running until its own', async () => {
    const runsDir = mkdtempSync(join(tmpdir(), 'orch-waiter-'));
    made.push(runsDir);
    const store = RunStore.create(runsDir, 'r-resume');
    store.append({ type: 'run_start', recipe: 'recipe.yaml', name: 'wait', recipeHash: 'h', inputs: {}, plan: [] });
    store.append({ type: 'run_end', status: 'partial', usage: zeroUsage(), durationMs: 10 });
    const lease = new FileRunLease(store.dir);
    expect(lease.acquireSync().ok).toBe(true);
    try {
      const sinceTs = Date.now();
      store.append({ type: 'run_resume', previousStatus: 'partial' });
      store.flush();
      expect(await lookOnce(launched(store), sinceTs)).toBe('cancelled');
      expect(runStatus(store.dir)).toMatchObject({ status: 'running' });
    } finally {
      lease.releaseSync();
    }
    // Nobody holds it and this session wrote no run_end: it was interrupted.
    expect(runStatus(store.dir)).toMatchObject({ status: 'interrupted' });
  });

  it('progress names an instance at its approval gate as waiting for approval, not running (it said "running: review")', () => {
    const runsDir = mkdtempSync(join(tmpdir(), 'orch-waiter-'));
    made.push(runsDir);
    const store = RunStore.create(runsDir, 'r-gate');
    store.append({
      type: 'run_start',
      recipe: 'recipe.yaml',
      name: 'gate',
      recipeHash: 'h',
      inputs: {},
      plan: [
        { task: 'build', keys: ['build'], needs: [], dynamic: false },
        { task: 'review', keys: ['review'], needs: [], dynamic: false },
      ],
    });
    const build = { task: 'build', key: 'build', attempt: 1, parent: 'build' };
    store.append({ type: 'instance_queued', ...build });
    store.append({ type: 'instance_start', ...build });
    store.append({ type: 'approval_requested', task: 'review', key: 'review', prompt: 'ok?', onTimeout: 'reject' });
    store.flush();
    const state = createRunState();
    for (const e of readRunLog(join(store.dir, 'run.jsonl')).events) applyEvent(state, e);
    expect(progressText(state)).toBe(
      'run r-gate: 0/2 instances finished; running: build; waiting for approval: review (the approve or reject tool answers)',
    );
  });
});
