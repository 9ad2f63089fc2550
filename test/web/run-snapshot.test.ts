// What the page is sent, from the one fold: tasks by depth in the DAG, gates (a task's and the
// publish gate) with who answered, and a conversation cut the way `show --instance` cuts it (tool
// arguments at 200 characters, results at 400, with the count of what was left out).
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { loadRunFolder } from '../../src/display/run-folder.js';
import type { Conversation } from '../../src/display/session-conversation.js';
import { conversationView, runSnapshot } from '../../src/web/run-snapshot.js';
import { takeRunLease } from '../../src/run/run-lease.js';
import { listRuns, RunStore } from '../../src/run/run-store.js';
import { KEYS, writeSyntheticRun } from '../display/fixtures/synthetic-run.js';
import { publishedChangeset, writeCampaignChangesets } from '../helpers/campaign.js';
import { T0, writeCampaign } from './fixtures/campaign.js';

const dirs: string[] = [];
const ZERO = { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, totalTokens: 0, cost: 0 };
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

function synthetic() {
  const dir = mkdtempSync(join(tmpdir(), 'run-snapshot-'));
  dirs.push(dir);
  return writeSyntheticRun(join(dir, 'runs')).store;
}

describe('runSnapshot', () => {
  it('lays the tasks out by depth and lists each gate with its state and answer', () => {
    const store = synthetic();
    store.append({
      type: 'approval_requested',
      task: 'review',
      key: KEYS.review,
      prompt: 'Merge?',
      onTimeout: 'reject',
    });
    store.append({
      type: 'approval_requested',
      task: 'apply',
      key: 'apply',
      prompt: 'Push?',
      onTimeout: 'reject',
      gate: 'publish',
    });
    store.append({
      type: 'approval_given',
      task: 'apply',
      key: 'apply',
      decision: 'approved',
      by: 'web (pid 1, user ana)',
      via: 'web',
      gate: 'publish',
    });
    const folder = loadRunFolder(store.dir);
    const snap = runSnapshot(folder.state, store.dir, undefined);
    expect(snap.tasks.map((t) => [t.id, t.level])).toEqual([
      ['plan', 0],
      ['apply', 1],
      ['review', 2],
    ]);
    expect(snap.gates).toEqual([
      expect.objectContaining({
        kind: 'task',
        task: 'review',
        instance: KEYS.review,
        prompt: 'Merge?',
        state: 'waiting',
      }),
      expect.objectContaining({ kind: 'publish', task: 'apply', prompt: 'Push?', state: 'approved', via: 'web' }),
    ]);
    expect(snap.instances.find((i) => i.key === KEYS.review)?.gated).toBe(true);
    expect(snap.counts.total).toBe(5);
    // A retried instance: its first attempt and why, then the one that worked.
    expect(snap.instances.find((i) => i.key === KEYS.b)?.attempts).toEqual([
      expect.objectContaining({ attempt: 1, outcome: 'retry', failure: 'overloaded' }),
      expect.objectContaining({ attempt: 2, outcome: 'done' }),
    ]);
  });
});

describe('runSnapshot of a run that stopped with agents at work', () => {
  /** A run whose coordinator wrote no run_end: a planner at work, an apply task not started yet. */
  function midRun(): RunStore {
    const dir = mkdtempSync(join(tmpdir(), 'run-snapshot-'));
    dirs.push(dir);
    const store = RunStore.create(join(dir, 'runs'), '20260101-120000-live');
    store.append({
      type: 'run_start',
      recipe: 'r.yaml',
      name: 'r',
      recipeHash: 'h',
      inputs: {},
      plan: [
        { task: 'plan', keys: ['plan'], needs: [], dynamic: false },
        { task: 'apply', keys: ['apply'], needs: ['plan'], dynamic: false },
      ],
    });
    store.append({ type: 'instance_queued', task: 'plan', key: 'plan', attempt: 1 });
    store.append({ type: 'instance_start', task: 'plan', key: 'plan', attempt: 1 });
    return store;
  }

  it('while its coordinator holds it, it and its agent are running', () => {
    const store = midRun();
    const taken = takeRunLease(store.dir, store.runId);
    if (!taken.ok) throw new Error(taken.message);
    try {
      const snap = runSnapshot(loadRunFolder(store.dir).state, store.dir, undefined);
      expect(snap.status).toBe('running');
      expect(snap.unfinished).toBeUndefined();
      expect(snap.instances.map((i) => [i.key, i.status, i.stopped])).toEqual([
        ['plan', 'running', undefined],
        ['apply', 'pending', undefined],
      ]);
    } finally {
      void taken.lease.release();
    }
  });

  it('killed (no run_end, nobody holds it): interrupted, as `runs` lists it, and no agent reads as running', () => {
    const store = midRun();
    const state = loadRunFolder(store.dir).state;
    const snap = runSnapshot(state, store.dir, 'no coordinator holds the run');
    // It said "running" with "1 running · 1 queued" while the runs list beside it said interrupted.
    expect(snap.status).toBe('interrupted');
    expect(listRuns(join(store.dir, '..')).map((r) => r.status)).toEqual(['interrupted']);
    expect(snap.unfinished).toBe(2);
    expect(snap.instances.map((i) => [i.key, i.status, i.stopped])).toEqual([
      ['plan', 'running', 'interrupted'],
      ['apply', 'pending', 'never started'],
    ]);
  });

  it("ended by its run_end (interrupted): the agent at work reads interrupted; a gate's wait goes on", () => {
    const store = midRun();
    store.append({ type: 'run_end', status: 'interrupted', usage: { ...ZERO }, durationMs: 5 });
    const snap = runSnapshot(loadRunFolder(store.dir).state, store.dir, 'the run has ended (interrupted)');
    expect(snap.status).toBe('interrupted');
    expect(snap.unfinished).toBe(2);
    expect(snap.instances.map((i) => [i.key, i.stopped])).toEqual([
      ['plan', 'interrupted'],
      ['apply', 'never started'],
    ]);

    // A finished run says nothing is unfinished; an instance waiting at its gate is not "interrupted".
    const gated = synthetic();
    gated.append({ type: 'approval_requested', task: 'review', key: KEYS.review, prompt: 'Go?', onTimeout: 'reject' });
    const after = runSnapshot(loadRunFolder(gated.dir).state, gated.dir, 'the run has ended (failed)');
    expect(after.unfinished).toBe(0);
    expect(after.instances.find((i) => i.key === KEYS.review)).toMatchObject({ gated: true });
    expect(after.instances.every((i) => i.stopped === undefined)).toBe(true);
  });
});

describe('runSnapshot: where the work is', () => {
  it('names the run folder and a patch by its full path (it is in the run folder, not the project)', () => {
    const store = synthetic();
    store.append({
      type: 'instance_done',
      task: 'apply',
      key: KEYS.a,
      attempt: 1,
      parent: 'apply',
      output: null,
      usage: { ...ZERO, turns: 1 },
      durationMs: 5,
      patchFile: 'patches/apply.repo-a.diff',
    });
    const snap = runSnapshot(loadRunFolder(store.dir).state, store.dir, undefined);
    expect(snap.dir).toBe(store.dir);
    // It said "patch patches/apply.repo-a.diff": a path the page never said where to look for.
    expect(snap.instances.find((i) => i.key === KEYS.a)?.landed).toBe(
      `patch ${join(store.dir, 'patches/apply.repo-a.diff')}`,
    );
  });
});

describe('runSnapshot of a campaign', () => {
  it('carries its changesets as last observed and the burndown', () => {
    const store = synthetic();
    writeCampaign(store.dir);
    const snap = runSnapshot(loadRunFolder(store.dir).state, store.dir, undefined);
    expect(snap.changesets).toMatchObject({ total: 2, merged: 1 });
    expect(snap.changesets!.rows.map((r) => [r.key, r.state])).toEqual([
      ['change.repo-a', 'merged'],
      ['change.repo-b', 'open'],
    ]);
    expect(snap.changesets!.burndown.map((p) => p.merged)).toEqual([0, 1]);
    // Both are published: nothing to say about publishing.
    expect(snap.changesets!.publish).toBeUndefined();
  });

  it('changesets not pushed yet: says the command that previews and pushes them, as the run summary does', () => {
    const store = synthetic();
    writeCampaignChangesets(store.dir, T0, [
      { ...publishedChangeset('repo-a', { doneTs: T0 }), state: 'unpublished' },
      { ...publishedChangeset('repo-b', { doneTs: T0 }), state: 'unpublished' },
    ]);
    const snap = runSnapshot(loadRunFolder(store.dir).state, store.dir, undefined);
    // It listed them "unpublished" and left out what to run next.
    expect(snap.changesets?.publish).toBe(
      `orchestrate publish ${store.dir} previews the 2 unpublished changesets; --apply pushes`,
    );
  });
});

describe('conversationView', () => {
  it('cuts tool arguments and results like the terminal and says how much was left out', () => {
    const store = synthetic();
    const inst = [...loadRunFolder(store.dir).state.instances.values()].find((i) => i.key === KEYS.a)!;
    const conv: Conversation = {
      file: 'x.jsonl',
      exists: true,
      warnings: [],
      items: [
        {
          kind: 'assistant',
          ts: '',
          text: 'reading',
          thinking: '',
          toolCalls: [{ id: '1', name: 'write', args: { path: 'a.ts', content: 'y'.repeat(500) } }],
          stopReason: 'toolUse',
        },
        {
          kind: 'toolResult',
          ts: '',
          toolCallId: '1',
          toolName: 'write',
          text: 'z'.repeat(1000),
          isError: false,
          images: 0,
        },
      ],
    };
    const view = conversationView(inst, conv, 'half a repl');
    const [call, result] = view.items;
    expect(call).toMatchObject({ kind: 'assistant', text: 'reading' });
    const args = (call as { toolCalls: { args: string }[] }).toolCalls[0]!.args;
    expect(args).toMatch(/^\{"path":"a.ts","content":"y+… \[\d+ more characters\]$/);
    expect(args.indexOf('…')).toBe(200);
    expect((result as { text: string }).text).toBe(`${'z'.repeat(400)}… [600 more characters]`);
    expect(view.writing).toBe('half a repl');
  });
});
