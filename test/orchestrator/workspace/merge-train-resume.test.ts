// The merge train's resume guarantees, step by step on a real repository (no run, no thread): a
// coordinator killed after a landing's files were written but before `landed` was logged lands
// the same work again without applying it twice (the checkout already holds it: the merge makes
// no change), and a car the log says landed is not landed again, whatever the checkout holds now.
// Also the checkout moving under a landing (between its merge and the writing of its files): it is
// merged again onto the new tip; a checkout that never holds still fails class workspace with why.
// And a kill inside git's own worktree commands (git dies with the coordinator): what `git worktree
// remove` or `add` leaves when cut off is removed or made whole by the resume, so no worktree of a
// landed car stays behind and a repair never starts from half a checkout.
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import type { RunEventInput } from '../../../src/run/run-events.js';
import type { InstanceState, TaskState } from '../../../src/run/run-state.js';
import { applyTrainEvent, createTrainState } from '../../../src/run/train-record.js';
import { snapshotScopes } from '../../../src/orchestrator/workspace/git-workspace.js';
import { MergeTrain } from '../../../src/orchestrator/workspace/merge-train.js';
import { Workspaces } from '../../../src/orchestrator/workspace/workspaces.js';
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

describe('merge train: a kill inside git worktree remove / add, then resume', () => {
  /** A repository with the worktree of instance x in the run's folder, as the train leaves it before landing. */
  function landedCar() {
    const dir = tempProject({ 'repo/a.txt': 'one\n', 'repo/b.txt': 'two\n' });
    const repo = join(dir, 'repo');
    gitInit(repo);
    const runDir = join(dir, 'runs', 'r1');
    mkdirSync(runDir, { recursive: true });
    const wt = join(runDir, 'worktrees', 'x');
    git(repo, 'worktree', 'add', '-q', '--detach', wt, 'HEAD');
    const { inst } = setup();
    inst.status = 'done';
    inst.git = {
      root: repo,
      commit: git(repo, 'rev-parse', 'HEAD').trim(),
      tree: git(repo, 'rev-parse', 'HEAD^{tree}').trim(),
      worktree: wt,
    };
    inst.resolved = { ...inst.resolved!, cwd: repo };
    const t = { task: { id: 't', merge: 'apply', isolation: 'worktree', land: 'train' } } as unknown as TaskState;
    const workspaces = new Workspaces({
      recipeDir: dir,
      store: {
        dir: runDir,
        runId: 'r1',
        writeFile: (name: string) => join(runDir, name),
        redactText: (s: string) => s,
      },
    });
    // git names the worktree's record after its folder.
    return { repo, wt, inst, t, workspaces, record: join(repo, '.git', 'worktrees', 'x') };
  }
  const worktrees = (repo: string) => git(repo, 'worktree', 'list', '--porcelain').match(/^worktree /gm)?.length;

  it("killed after git deleted a landed car's worktree folder but not its record: the resume removes the record", async () => {
    const { repo, wt, inst, t, workspaces, record } = landedCar();
    rmSync(wt, { recursive: true, force: true });
    expect(worktrees(repo)).toBe(2);
    await workspaces.drop(t, inst);
    expect(existsSync(record)).toBe(false);
    expect(worktrees(repo)).toBe(1);
  });

  it('killed halfway through deleting the folder (its .git already gone): the resume removes the rest', async () => {
    const { repo, wt, inst, t, workspaces } = landedCar();
    rmSync(join(wt, '.git'));
    await workspaces.drop(t, inst);
    expect(existsSync(wt)).toBe(false);
    expect(worktrees(repo)).toBe(1);
  });

  it("a folder outside the run's worktrees/ that git will not remove is left alone (a path from the log is no licence to delete)", async () => {
    const { repo, inst, t, workspaces } = landedCar();
    const elsewhere = join(repo, '..', 'elsewhere');
    git(repo, 'worktree', 'add', '-q', '--detach', elsewhere, 'HEAD');
    rmSync(join(elsewhere, '.git'));
    inst.git = { ...inst.git!, worktree: elsewhere };
    await workspaces.drop(t, inst);
    expect(readFileSync(join(elsewhere, 'a.txt'), 'utf8')).toBe('one\n');
  });

  it('a worktree made again where only its record was left (a repair, a retry) is made, not refused by git', async () => {
    const { repo, wt, inst, t, workspaces } = landedCar();
    rmSync(wt, { recursive: true, force: true });
    inst.status = 'running';
    expect(await workspaces.prepare(t, inst)).toEqual({ ok: true });
    expect(readFileSync(join(wt, 'b.txt'), 'utf8')).toBe('two\n');
    expect(worktrees(repo)).toBe(2);
  });

  it('killed while git worktree add was checking the files out: the resume makes the worktree again, whole', async () => {
    const { repo, wt, inst, t, workspaces, record } = landedCar();
    // What `git worktree add` leaves cut off: its record locked "initializing", .git written, files missing.
    writeFileSync(join(record, 'locked'), 'initializing');
    rmSync(join(wt, 'b.txt'));
    inst.status = 'running';
    expect(await workspaces.prepare(t, inst)).toEqual({ ok: true });
    expect(readFileSync(join(wt, 'b.txt'), 'utf8')).toBe('two\n');
    expect(existsSync(join(record, 'locked'))).toBe(false);
    expect(worktrees(repo)).toBe(2);
  });
});
