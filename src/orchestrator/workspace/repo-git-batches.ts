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
// is taken again one request at a time, so one bad folder fails only its own instance, as before;
// a request that still fails gets git's message, never a silent "nothing changed".
//
// The repository root of a cwd (`git rev-parse --show-toplevel`, a git child each) is asked once
// per repository: the `.git` git would find is located without running git (tools/product-git
// findRepository), and cwds that reach the same one share its answer.
import { realpathSync } from 'node:fs';
import { relative, resolve } from 'node:path';
import { findRepository } from '../../tools/product-git.js';
import {
  diffScopes,
  repoRoot,
  snapshotScopes,
  type DiffOutcome,
  type RepoPin,
  type SnapshotOutcome,
} from './git-workspace.js';

type WithLock = <T>(root: string, fn: () => Promise<T>) => Promise<T>;

interface Pending<I, O> {
  inputs: I[];
  settle: ((out: O) => void)[];
}

/** Requests of one kind, batched per repository: the batch runs under the lock, once it is the lock's turn. */
class Batcher<I, O extends { ok: boolean }> {
  private readonly pending = new Map<string, Pending<I, O>>();

  constructor(
    private readonly withLock: WithLock,
    /** Runs a batch: one outcome per input. */
    private readonly runBatch: (inputs: I[], group: string) => Promise<O[]>,
    /** The outcome of every input when the batch threw. */
    private readonly thrown: (err: unknown) => O,
  ) {}

  /** `group`: requests batched together (default: the repository); they run under `root`'s lock. */
  add(root: string, input: I, group = root): Promise<O> {
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
          await this.run(batch, group);
        });
      });
    });
  }

  private async once(inputs: I[], group: string): Promise<O[]> {
    try {
      return await this.runBatch(inputs, group);
    } catch (err) {
      return inputs.map(() => this.thrown(err));
    }
  }

  private async run(batch: Pending<I, O>, group: string): Promise<void> {
    let outs = await this.once(batch.inputs, group);
    // One bad folder fails the shell of the whole batch: each is taken again alone.
    if (batch.inputs.length > 1 && outs.some((o) => !o.ok)) {
      outs = [];
      for (const input of batch.inputs) outs.push((await this.once([input], group))[0]!);
    }
    for (const [i, settle] of batch.settle.entries()) settle(outs[i]!);
  }
}

function isInside(folder: string, dir: string): boolean {
  const rel = relative(folder, resolve(dir));
  return !rel.startsWith('..') && !rel.startsWith('/');
}

/** The real path of `p` (pins are kept by the real path of the work tree's top), else `p` itself. */
function realPath(p: string): string {
  try {
    return realpathSync(p);
  } catch {
    return p;
  }
}

const thrownError = (err: unknown) => ({
  ok: false as const,
  error: `cannot run git: ${err instanceof Error ? err.message : String(err)}`,
});

export class RepoGitBatches {
  private readonly snapshots: Batcher<string, SnapshotOutcome>;
  private readonly diffs: Batcher<{ dir: string; baseTree: string | undefined }, DiffOutcome>;
  /** Repository roots by the `.git` location git would find (in flight or answered). */
  private readonly roots = new Map<string, Promise<string | undefined>>();
  /**
   * Where the first snapshot of each work tree (by its top) found its repository: every later
   * snapshot and diff of that work tree is pinned there, so a `.git` file, `commondir`,
   * core.worktree or ignore rule (info/exclude) the model writes meanwhile is noticed instead of followed.
   */
  private readonly pins = new Map<string, RepoPin>();

  /** `runsDir`: the runs folder, left out of every snapshot and diff of a work tree that holds it. */
  constructor(withLock: WithLock, runsDir?: string) {
    // Its real path once: the work trees it is compared with are real paths.
    if (runsDir !== undefined) runsDir = realPath(runsDir);
    this.snapshots = new Batcher(
      withLock,
      async (dirs, group) => {
        const snap = await snapshotScopes(dirs, this.pins.get(realPath(group)), runsDir);
        if (snap.ok && !this.pins.has(snap.location.top)) this.pins.set(snap.location.top, snap.location);
        return dirs.map(() => snap);
      },
      thrownError,
    );
    this.diffs = new Batcher<{ dir: string; baseTree: string | undefined }, DiffOutcome>(
      withLock,
      (items, group) => diffScopes(items, this.pins.get(realPath(group)), runsDir),
      thrownError,
    );
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

  /**
   * The snapshot of the work tree under `dir` (in the repository `root`, or in `worktree`, a
   * worktree of it), taken with the others waiting for the same work tree.
   */
  snapshot(root: string, dir: string, worktree?: string): Promise<SnapshotOutcome> {
    return this.snapshots.add(root, dir, worktree ?? root);
  }

  /**
   * What changed under `dir` since `baseTree`, diffed together with the others waiting for `root`
   * in the same work tree (`worktree`: an instance's own, else the repository's).
   */
  diffSince(root: string, dir: string, baseTree: string | undefined, worktree?: string): Promise<DiffOutcome> {
    return this.diffs.add(root, { dir, baseTree }, worktree ?? root);
  }
}
