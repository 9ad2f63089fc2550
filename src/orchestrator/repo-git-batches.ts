// Workspace snapshots and landing diffs of one repository, taken together.
//
// Every instance whose cwd lies in a git repository takes a snapshot when it starts and a diff
// when it finishes, each under the repository's lock (keyed-lock.ts). In a monorepo fan-out (a
// cwd per package, one repository) that was one sandboxed shell after another, ~65 ms each on an
// idle machine: 32 instances started over two seconds. Here the requests for one repository that
// arrive while its lock is busy (or in the same turn of the event loop) wait in one batch, and the
// batch is one shell under the lock (git-workspace.ts snapshotScopes / diffScopes): one snapshot
// tree serves every instance of the batch, since each diff reads only its own folder of it.
//
// A batch that fails as a whole (a folder removed meanwhile, a nested repository git cannot add)
// is taken again one request at a time, so one bad folder fails only its own instance, as before.
//
// The repository root of a cwd (`git rev-parse --show-toplevel`, a git child each) is asked once
// per repository: the `.git` git would find is located without running git (tools/product-git
// findRepository), and cwds that reach the same one share its answer.
import { relative, resolve } from 'node:path';
import { findRepository } from '../tools/product-git.js';
import { diffScopes, repoRoot, snapshotScopes, type ScopeDiff, type Snapshot } from './git-workspace.js';

type WithLock = <T>(root: string, fn: () => Promise<T>) => Promise<T>;

interface Pending<I, O> {
  inputs: I[];
  settle: ((out: O | undefined) => void)[];
}

/** Requests of one kind, batched per repository: the batch runs under the lock, once it is the lock's turn. */
class Batcher<I, O> {
  private readonly pending = new Map<string, Pending<I, O>>();

  constructor(
    private readonly withLock: WithLock,
    /** Runs a batch: one output per input, or undefined when the batch as a whole failed. */
    private readonly runBatch: (inputs: I[]) => Promise<(O | undefined)[] | undefined>,
  ) {}

  /** `group`: requests batched together (default: the repository); they run under `root`'s lock. */
  add(root: string, input: I, group = root): Promise<O | undefined> {
    return new Promise((resolve) => {
      const open = this.pending.get(group);
      if (open) {
        open.inputs.push(input);
        open.settle.push(resolve);
        return;
      }
      const batch: Pending<I, O> = { inputs: [input], settle: [resolve] };
      this.pending.set(group, batch);
      // setImmediate: the requests of one wave that arrive in the same turn join before it runs.
      setImmediate(() => {
        void this.withLock(root, async () => {
          // Later requests start the next batch: this one's state is read from now on.
          if (this.pending.get(group) === batch) this.pending.delete(group);
          await this.run(batch);
        });
      });
    });
  }

  private async run(batch: Pending<I, O>): Promise<void> {
    let outs: (O | undefined)[] | undefined;
    try {
      outs = await this.runBatch(batch.inputs);
    } catch {
      outs = undefined;
    }
    if (outs === undefined && batch.inputs.length > 1) {
      outs = [];
      for (const input of batch.inputs) {
        try {
          outs.push((await this.runBatch([input]))?.[0]);
        } catch {
          outs.push(undefined);
        }
      }
    }
    batch.settle.forEach((settle, i) => settle(outs?.[i]));
  }
}

function isInside(folder: string, dir: string): boolean {
  const rel = relative(folder, resolve(dir));
  return !rel.startsWith('..') && !rel.startsWith('/');
}

export class RepoGitBatches {
  private readonly snapshots: Batcher<string, Snapshot>;
  private readonly diffs: Batcher<{ dir: string; baseTree: string | undefined }, ScopeDiff>;
  /** Repository roots by the `.git` location git would find (in flight or answered). */
  private readonly roots = new Map<string, Promise<string | undefined>>();

  constructor(withLock: WithLock) {
    this.snapshots = new Batcher(withLock, async (dirs) => {
      const snap = await snapshotScopes(dirs);
      return snap ? dirs.map(() => snap) : undefined;
    });
    this.diffs = new Batcher(withLock, (items) => diffScopes(items));
  }

  /** The repository root holding `dir` (git-workspace repoRoot), asked once per repository. */
  root(dir: string): Promise<string | undefined> {
    const repo = findRepository(dir);
    // No .git above (GIT_DIR in the environment, or none at all), or `dir` inside a git folder
    // (which has no work tree): git decides, every time.
    if (!repo || isInside(repo.gitDir, dir) || isInside(repo.commonDir, dir)) return repoRoot(dir);
    const key = `${repo.top}\0${repo.gitDir}`;
    let known = this.roots.get(key);
    if (!known) {
      known = repoRoot(dir);
      this.roots.set(key, known);
      // "not a repository" (dubious ownership, a broken .git) is asked again next time.
      void known.then((r) => {
        if (r === undefined && this.roots.get(key) === known) this.roots.delete(key);
      });
    }
    return known;
  }

  /** The snapshot of the work tree under `dir` (in the repository `root`), taken with the others waiting for `root`. */
  snapshot(root: string, dir: string): Promise<Snapshot | undefined> {
    return this.snapshots.add(root, dir);
  }

  /**
   * What changed under `dir` since `baseTree`, diffed together with the others waiting for `root`
   * in the same work tree (`worktree`: an instance's own, else the repository's).
   */
  diffSince(
    root: string,
    dir: string,
    baseTree: string | undefined,
    worktree?: string,
  ): Promise<ScopeDiff | undefined> {
    return this.diffs.add(root, { dir, baseTree }, worktree === undefined ? root : `${root}\0${worktree}`);
  }
}
