// The merge train's resume guarantees, step by step on a real repository (no run, no thread): a
// coordinator killed after a landing's files were written but before `landed` was logged lands
// the same work again without applying it twice (the checkout already holds it: the merge makes
// no change), and a car the log says landed is not landed again, whatever the checkout holds now.
// Also the checkout moving under a landing (between its merge and the writing of its files): it is
// merged again onto the new tip; a checkout that never holds still fails class workspace with why.
import { execFileSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import type { RunEventInput } from '../../../src/run/run-events.js';
import type { InstanceState, TaskState } from '../../../src/run/run-state.js';
import { applyTrainEvent, createTrainState } from '../../../src/run/train-record.js';
import { snapshotScopes } from '../../../src/orchestrator/workspace/git-workspace.js';
import { MergeTrain } from '../../../src/orchestrator/workspace/merge-train.js';
import { cleanupTempDirs, gitInit, tempProject } from '../helpers/run-fixtures.js';

afterAll(() => cleanupTempDirs());

const git = (cwd: string, ...args: string[]): string => execFileSync('git', args, { cwd }).toString();

function setup() {
  const dir = tempProject({ 'repo/a.txt': 'one\n', 'runs/.keep': '' });
  const repo = join(dir, 'repo');
  gitInit(repo);
  const baseTree = git(repo, 'rev-parse', 'HEAD^{tree}').trim();
  writeFileSync(join(repo, 'a.txt'), 'one\ntwo\n');
  const patch = git(repo, 'diff', '--binary');
  git(repo, 'checkout', '--', 'a.txt');
  const inst = {
    id: 'x',
    task: 't',
    index: 0,
    attempt: 1,
    status: 'running',
    usage: {},
    readFiles: [],
    sessionFiles: [],
    git: { root: repo, tree: baseTree, worktree: join(dir, 'wt') },
    resolved: { id: 'x', taskId: 't', index: 0, cwd: repo, writes: [], verify: [], env: {} },
  } as unknown as InstanceState;
  const t = { task: { id: 't' } } as unknown as TaskState;
  return { dir, repo, patch, inst, t };
}

function train(dir: string, log: RunEventInput[], restored = createTrainState()): MergeTrain {
  return new MergeTrain({
    recipeDir: dir,
    runsDir: join(dir, 'runs'),
    record: (e) => log.push(e),
    withGitLock: (_root, fn) => fn(),
    snapshotCheckout: (root) => snapshotScopes([root]),
    restored,
  });
}

/** The train as a resume folds it from `log`. */
function folded(log: RunEventInput[]) {
  const state = createTrainState();
  for (const e of log) if (e.type === 'train_step') applyTrainEvent(state, { ...e, ts: 0 });
  return state;
}

describe('merge train: resume', () => {
  it('a landing whose files were written before a kill, its landed step not logged, lands again without applying twice', async () => {
    const { dir, repo, patch, inst, t } = setup();
    const log: RunEventInput[] = [];
    expect(await train(dir, log).land(t, inst, patch, 2)).toMatchObject({ ok: true, files: ['repo/a.txt'] });
    expect(readFileSync(join(repo, 'a.txt'), 'utf8')).toBe('one\ntwo\n');
    // Killed before `landed` reached the log: a resume knows only `landing`.
    const beforeKill = log.filter((e) => !(e.type === 'train_step' && e.phase === 'landed'));
    expect(folded(beforeKill).cars.x?.status).toBe('landing');
    const after: RunEventInput[] = [];
    expect(await train(dir, after, folded(beforeKill)).land(t, inst, patch, 2)).toMatchObject({ ok: true });
    expect(readFileSync(join(repo, 'a.txt'), 'utf8')).toBe('one\ntwo\n');
    expect(after.map((e) => e.type === 'train_step' && e.phase)).toEqual(['landing', 'landed']);
  });

  it('a car the log says landed is not landed again', async () => {
    const { dir, repo, patch, inst, t } = setup();
    const log: RunEventInput[] = [];
    await train(dir, log).land(t, inst, patch, 2);
    // The user moved on since: the same lines now read differently. Landing again would conflict.
    writeFileSync(join(repo, 'a.txt'), 'one\nzwei\n');
    const after: RunEventInput[] = [];
    expect(await train(dir, after, folded(log)).land(t, inst, patch, 2)).toMatchObject({ ok: true });
    expect(after).toEqual([]);
    expect(readFileSync(join(repo, 'a.txt'), 'utf8')).toBe('one\nzwei\n');
  });
});

describe('merge train: the checkout moving under a landing', () => {
  const lines = (n: number, at: Record<number, string> = {}) =>
    `${Array.from({ length: n }, (_, i) => at[i + 1] ?? `line ${i + 1}`).join('\n')}\n`;

  function ten() {
    const dir = tempProject({ 'repo/a.txt': lines(10), 'runs/.keep': '' });
    const repo = join(dir, 'repo');
    gitInit(repo);
    const baseTree = git(repo, 'rev-parse', 'HEAD^{tree}').trim();
    writeFileSync(join(repo, 'a.txt'), lines(10, { 10: 'ten by x' }));
    const patch = git(repo, 'diff', '--binary');
    git(repo, 'checkout', '--', 'a.txt');
    const { inst, t } = setup();
    inst.git = { root: repo, tree: baseTree, worktree: join(dir, 'wt') };
    inst.resolved = { ...inst.resolved!, cwd: repo };
    return { dir, repo, patch, inst, t };
  }

  function moving(dir: string, log: RunEventInput[], move: (n: number) => void): MergeTrain {
    let calls = 0;
    return new MergeTrain({
      recipeDir: dir,
      runsDir: join(dir, 'runs'),
      record: (e) => log.push(e),
      // Someone edits line 8 (inside the diff's context) right before the files are written.
      withGitLock: (_root, fn) => {
        move(++calls);
        return fn();
      },
      snapshotCheckout: (root) => snapshotScopes([root]),
    });
  }

  it('a checkout that moved once is merged onto again, and both changes are kept', async () => {
    const { dir, repo, patch, inst, t } = ten();
    const log: RunEventInput[] = [];
    const m = moving(dir, log, (n) => {
      if (n === 1) writeFileSync(join(repo, 'a.txt'), lines(10, { 8: 'eight by someone' }));
    });
    expect(await m.land(t, inst, patch, 2)).toMatchObject({ ok: true });
    expect(readFileSync(join(repo, 'a.txt'), 'utf8')).toBe(lines(10, { 8: 'eight by someone', 10: 'ten by x' }));
    expect(log.map((e) => e.type === 'train_step' && e.phase)).toEqual(['landing', 'landing', 'landed']);
  });

  it('a checkout that never holds still fails class workspace, saying why, and keeps the work out', async () => {
    const { dir, repo, patch, inst, t } = ten();
    const m = moving(dir, [], (n) => writeFileSync(join(repo, 'a.txt'), lines(10, { 8: `eight, take ${n}` })));
    const r = await m.land(t, inst, patch, 2);
    expect(r).toMatchObject({ ok: false, failure: 'workspace', repairable: false });
    expect(r.ok ? '' : r.detail).toMatch(/could not be written to the checkout .*: git apply failed/);
    expect(readFileSync(join(repo, 'a.txt'), 'utf8')).not.toContain('ten by x');
  });
});
