// What an instance changed before a resume, on a real repository: the files of its patch (git's
// own diff: a rename, a binary file, a deletion, quoted names) and of its worktree (tracked edits
// and new files), as absolute paths; and how the scheduler gets them: beside the writes: globs of
// a task that serializes overlapping work, never for one whose work the merge train merges in parallel.
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import type { LoadedTask } from '../../../src/recipe/index.js';
import type { InstanceState, TaskState } from '../../../src/run/run-state.js';
import { schedulable } from '../../../src/orchestrator/schedule/task-walk.js';
import { earlierChanges, patchPaths, worktreeChanges } from '../../../src/orchestrator/workspace/earlier-changes.js';
import { cleanupTempDirs, gitInit, tempProject } from '../helpers/run-fixtures.js';

afterAll(() => cleanupTempDirs());

const git = (cwd: string, ...args: string[]): string =>
  execFileSync('git', ['-c', 'user.name=t', '-c', 'user.email=t@example.com', ...args], { cwd }).toString();

describe('earlier changes', () => {
  it("a patch's files: edits, a rename, a deletion, a binary file and quoted names", () => {
    const dir = tempProject({ 'repo/a.txt': 'a\n', 'repo/old name.txt': 'x\n', 'repo/gone.txt': 'g\n' });
    const repo = join(dir, 'repo');
    gitInit(repo);
    writeFileSync(join(repo, 'a.txt'), 'a2\n');
    git(repo, 'mv', 'old name.txt', 'new name.txt');
    git(repo, 'rm', '-q', 'gone.txt');
    writeFileSync(join(repo, 'bin.dat'), Buffer.from([0, 1, 2, 3]));
    writeFileSync(join(repo, 'tab\there.txt'), 't\n');
    writeFileSync(join(repo, 'späce.txt'), 's\n');
    git(repo, 'add', '-A');
    const patch = git(repo, 'diff', '--cached', '--binary', '-M', 'HEAD');
    expect(patchPaths(patch)).toEqual(
      ['a.txt', 'bin.dat', 'gone.txt', 'new name.txt', 'old name.txt', 'späce.txt', 'tab\there.txt'].sort(),
    );
  });

  it('an instance: its patch in the run folder and what its worktree holds since its base, absolute', async () => {
    const dir = tempProject({ 'repo/a.txt': 'a\n', 'repo/b.txt': 'b\n', 'runs/r/patches/x.diff': '' });
    const repo = join(dir, 'repo');
    gitInit(repo);
    const tree = git(repo, 'rev-parse', 'HEAD^{tree}').trim();
    const wt = join(dir, 'runs/r/worktrees/x');
    mkdirSync(join(dir, 'runs/r/worktrees'), { recursive: true });
    git(repo, 'worktree', 'add', '-q', '--detach', wt);
    writeFileSync(join(wt, 'b.txt'), 'b2\n');
    writeFileSync(join(wt, 'new.txt'), 'n\n');
    writeFileSync(
      join(dir, 'runs/r/patches/x.diff'),
      'diff --git a/a.txt b/a.txt\n--- a/a.txt\n+++ b/a.txt\n@@ -1 +1 @@\n-a\n+a2\n',
    );
    const statusBefore = git(wt, 'status', '--porcelain');
    const files = await earlierChanges(join(dir, 'runs/r'), { id: 'x', git: { root: repo, tree, worktree: wt } });
    expect(files).toEqual([join(repo, 'a.txt'), join(repo, 'b.txt'), join(repo, 'new.txt')]);
    expect(git(wt, 'status', '--porcelain')).toBe(statusBefore);
    // A base tree from a tampered log that is no object id never reaches git's command line.
    const out = join(dir, 'written-by-git');
    expect(await worktreeChanges(wt, `--output=${out}`)).toBeUndefined();
    expect(existsSync(out)).toBe(false);
    // No git record (no repository), or nothing left of the work: nothing is known.
    expect(await earlierChanges(join(dir, 'runs/r'), { id: 'y' })).toEqual([]);
    expect(
      await earlierChanges(join(dir, 'runs/r'), { id: 'y', git: { root: repo, tree, worktree: join(dir, 'gone') } }),
    ).toEqual([]);
  });

  it('the scheduler sees them beside writes: where overlapping work is serialized, not where the train merges it', () => {
    const inst = {
      id: 'x',
      task: 't',
      resolved: { cwd: '/p/repo', writes: ['docs/**'] },
      earlierWrites: ['/p/repo/src/a.ts'],
    } as unknown as InstanceState;
    const task = (over: Partial<LoadedTask>): TaskState =>
      ({ task: { id: 't', dir: '/p', kind: 'agent', ...over }, level: 0 }) as unknown as TaskState;
    const train = { isolation: 'worktree', merge: 'apply', land: 'train' } as const;
    expect(schedulable(task({}), inst).writes).toEqual(['/p/repo/docs/**', '/p/repo/src/a.ts']);
    expect(schedulable(task({ ...train, serialize: 'overlapping' }), inst).writes).toEqual([
      '/p/repo/docs/**',
      '/p/repo/src/a.ts',
    ]);
    expect(schedulable(task(train), inst).writes).toEqual([]);
  });
});
