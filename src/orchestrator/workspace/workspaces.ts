// An instance's workspace, from its first attempt to its landed work: the git snapshot (and, with
// `isolation: worktree`, the worktree) taken before any agent runs, the diff of what an attempt
// changed since then (for `writes:` and the patch), landing that work where the task's `merge:`
// says, and removing the worktree once the instance is logged done. Every git step of a
// repository goes through its lock (keyed-lock.ts), snapshots and diffs batched per work tree and
// pinned to the repository the first snapshot trusted (repo-git-batches.ts, repo-trust.ts).
// The git work itself is git-workspace.ts and worktree-merge.ts; this class is the one door to
// them, and what it returns is data: `{ ok: false, failure, detail }` with the failure's class.
import { existsSync, rmdirSync } from 'node:fs';
import { dirname, isAbsolute, join, relative, sep } from 'node:path';
import type { FailureClass } from '../../run/run-events.js';
import { protectedInputPaths } from '../../run/run-inputs.js';
import { pathFromRoot, type InstanceState, type TaskState } from '../../run/run-state.js';
import type { RunStore } from '../../run/run-store.js';
import { isInside } from '../../tools/workspace.js';
import { warmProductGit } from '../../tools/product-git.js';
import { probeSandboxAsync, type SandboxOptions } from '../../tools/sandbox.js';
import {
  addWorktree,
  mayBeInGitRepo,
  relinkWorktree,
  repoRoot,
  type DiffOutcome,
  type SnapshotOutcome,
} from './git-workspace.js';
import { KeyedLock } from './keyed-lock.js';
import { landsByTrain } from './land-turn.js';
import type { WorkerResult } from '../protocol.js';
import { RemoteRecorder, type RemoteUrls } from './repo-remotes.js';
import { RepoGitBatches } from './repo-git-batches.js';
import { enforceWriteScope } from './write-scope-check.js';
import { applyToCheckout, branchName, commitToBranch } from './worktree-merge.js';
import type { RunEventInput } from '../../run/run-events.js';
import type { TrainState, TrainVerify } from '../../run/train-record.js';
import { MergeTrain, type TrainContext } from './merge-train.js';
import { repairPrompt, repairSessionKey } from './train-repair.js';
import { commitOfTree, treeWithout } from './train-git.js';
import { removeWorktreeFully, worktreeIsWhole } from './worktree-leftovers.js';

/** What Workspaces needs from the run. */
export interface WorkspacesContext {
  /** The recipe's folder: changed files are recorded relative to it. */
  recipeDir: string;
  store: Pick<RunStore, 'dir' | 'runId' | 'writeFile' | 'redactText'>;
  /** Every task and instance of the run (a sibling's writes and recorded remotes). */
  siblings?(): Iterable<{ task: TaskState; inst: InstanceState }>;
  /** The run's own files cannot be written (the run stops; see Coordinator.storageFailed). */
  storageFailed?(message: string): void;
  /** Logs an event of the run (the merge train's steps); without it `land: train` lands directly. */
  record?(e: RunEventInput): void;
  /** The merge train as the log left it (resume). */
  restoredTrain?: TrainState;
  /** The run's tasks in recipe order: `land_order: task` lands in it (MergeTrain). */
  tasks?(): Iterable<TaskState>;
  /** The confinement of a task's verify commands (MergeTrain's verify on a merged tree). */
  verifySandbox?(t: TaskState): Pick<SandboxOptions, 'mode' | 'network'>;
  /** Finished work waiting for its turn gives its concurrency slot back (MergeTrain, land_order: task). */
  yieldSlot?: TrainContext['yieldSlot'];
  /** Why finished work stops waiting for its turn (a cancel, an interrupt). */
  stopWaiting?: TrainContext['stopWaiting'];
}

/** A workspace step that failed, and the class the attempt's failure gets. */
export interface WorkspaceFailure {
  ok: false;
  failure: FailureClass;
  detail: string;
}

/**
 * What an attempt's work became. `patchFile` is set whenever a patch was written, also when the
 * work then failed to land. `failure`: `workspace` when what the attempt changed could not be
 * measured or the repository is not one orchestrate trusts (nothing is landed then),
 * `patch_conflict` when the work does not apply.
 */
export type Landing =
  | { ok: true; patchFile?: string; files: string[]; branch?: string; applied?: boolean }
  | {
      ok: false;
      failure: 'workspace' | 'patch_conflict' | 'verify_failed';
      detail: string;
      patchFile?: string;
      /** land: train: the work may be repaired on the new tip (startRepair). */
      repair?: TrainRepairNeed;
    };

/** What a repair of work the train refused starts from. */
export interface TrainRepairNeed {
  patch: string;
  why: 'conflict' | 'verify';
  files?: string[];
  verify?: TrainVerify[];
}

/** What the sandbox of an instance's commands hides and keeps read-only (tools/sandbox.ts). */
export interface SandboxPaths {
  hide: string[];
  readOnly?: string[];
}

/** The changed files git could still name, for the error of a diff that cannot be trusted. */
export function changedFilesNote(files: readonly string[] | undefined): string {
  if (files === undefined) return 'what it changed could not be listed';
  if (files.length === 0) return 'git listed no changed files';
  const shown = files.slice(0, 10).join(', ') + (files.length > 10 ? ` and ${files.length - 10} more` : '');
  return `changed files: ${shown}`;
}

const failed = (failure: FailureClass, detail: string): WorkspaceFailure => ({ ok: false, failure, detail });

export class Workspaces {
  /** One git operation at a time per repository. */
  private readonly locks = new KeyedLock();
  /** Snapshots and landing diffs of one repository taken together, under its lock. */
  private readonly batches: RepoGitBatches;
  /** Each repository's remotes, read once before any agent runs there (repo-remotes.ts). */
  private readonly remoteReads = new RemoteRecorder();
  /** Where this run makes its worktrees: a leftover of one is deleted only there (worktree-leftovers.ts). */
  private get ownWorktrees(): string {
    return join(this.ctx.store.dir, 'worktrees');
  }
  /** The merge train of `land: train` (merge-train.ts); undefined when the run logs nothing (a re-run). */
  readonly train?: MergeTrain;

  constructor(private readonly ctx: WorkspacesContext) {
    // The runs folder is the run's own: a snapshot or diff of a checkout that holds it leaves it out.
    this.batches = new RepoGitBatches((root, fn) => this.withGitLock(root, fn), dirname(ctx.store.dir));
    if (ctx.record)
      this.train = new MergeTrain({
        recipeDir: ctx.recipeDir,
        runsDir: dirname(ctx.store.dir),
        record: ctx.record,
        withGitLock: (root, fn) => this.withGitLock(root, fn),
        snapshotCheckout: (root) => this.checkoutTree(root),
        ...(ctx.restoredTrain ? { restored: ctx.restoredTrain } : {}),
        ...(ctx.verifySandbox ? { verifySandbox: ctx.verifySandbox } : {}),
        ...(ctx.tasks ? { tasks: ctx.tasks } : {}),
        ...(ctx.yieldSlot ? { yieldSlot: ctx.yieldSlot } : {}),
        ...(ctx.stopWaiting ? { stopWaiting: ctx.stopWaiting } : {}),
      });
  }

  /**
   * The checkout's files at `root` as a tree (a snapshot, batched under its lock), without the
   * runs folder when it lies inside the repository: the train's tip, and where its worktrees start.
   */
  private async checkoutTree(root: string): Promise<SnapshotOutcome> {
    const snap = await this.batches.snapshot(root, root);
    const runs = relative(snap.ok ? snap.root : root, dirname(this.ctx.store.dir));
    if (!snap.ok || runs.startsWith('..') || isAbsolute(runs)) return snap;
    const cut = await this.withGitLock(root, () => treeWithout(root, snap.tree, runs.split(sep).join('/')));
    return cut.ok ? { ...snap, tree: cut.tree } : { ok: false, error: cut.error };
  }

  /** Whether the work of `t`'s instances lands through the merge train. */
  trains(t: TaskState): boolean {
    return this.train !== undefined && landsByTrain(t.task);
  }

  /** The prompts instances were given by their task, kept when a repair's prompt takes their place. */
  private readonly taskPrompts = new Map<string, string>();

  private taskPrompt(inst: InstanceState): string {
    if (!this.taskPrompts.has(inst.id)) this.taskPrompts.set(inst.id, inst.resolved?.prompt ?? '');
    return this.taskPrompts.get(inst.id)!;
  }

  /** The session of an agent of an instance under repair is a new one: sessions/<key>.repair-<n>.jsonl. */
  sessionKey(agentKey: string): string {
    const at = agentKey.indexOf('@');
    return repairSessionKey(agentKey, this.train?.repairs(at < 0 ? agentKey : agentKey.slice(0, at)) ?? 0);
  }

  /**
   * Starts, in child processes, what the first workspace will wait for: in a repository, product
   * git's private home (and bwrap's probe with it), else bwrap's probe alone. Nothing is awaited.
   */
  warm(): void {
    if (this.ctx.recipeDir && mayBeInGitRepo(this.ctx.recipeDir)) warmProductGit();
    else void probeSandboxAsync();
  }

  withGitLock<T>(root: string, fn: () => Promise<T>): Promise<T> {
    return this.locks.run(root, fn);
  }

  /**
   * Snapshot (and worktree) on the first attempt; a later attempt reuses them. A snapshot that
   * fails in a repository fails the attempt (class `workspace`): `writes:`, the patch and landing
   * measure from it, so running without one would let any change through unseen.
   */
  async prepare(t: TaskState, inst: InstanceState): Promise<{ ok: true } | WorkspaceFailure> {
    const cwd = inst.resolved!.cwd;
    inst.workCwd = cwd;
    // A resumed run whose recorded repository no longer holds the cwd (the project moved while
    // the repository stayed where it was): the repository is the one the cwd is in now.
    if (inst.git && relative(inst.git.root, cwd).startsWith('..'))
      inst.git.root = (await repoRoot(cwd)) ?? inst.git.root;
    await this.adoptRepair(inst);
    if (inst.git?.worktree) {
      const g = inst.git;
      const wt = g.worktree!;
      if (existsSync(join(wt, '.git'))) relinkWorktree(g.root, wt);
      const r = await this.makeWorktree(g.root, wt, g.commit);
      if (!r.ok) return failed('error', r.error);
      inst.workCwd = join(wt, relative(g.root, cwd));
      return { ok: true };
    }
    if (inst.git) return { ok: true };
    if (!existsSync(cwd)) return failed('error', `the working directory ${cwd} does not exist`);
    const root = await this.batches.root(cwd);
    const remotes = root ? await this.remotesBefore(root, inst) : undefined;
    if (t.task.isolation === 'worktree') {
      if (!root)
        return failed('error', `isolation: worktree needs the task's cwd (${cwd}) to be inside a git repository`);
      const wt = join(this.ctx.store.dir, 'worktrees', inst.id);
      const commitSnap = this.trains(t) ? await this.checkoutTree(root) : await this.batches.snapshot(root, root);
      if (!commitSnap.ok) return failed('workspace', commitSnap.error);
      let start = commitSnap.commit;
      if (this.trains(t)) {
        // Through the train, work starts from the checkout as it is (what landed before it included), not HEAD.
        const tip = await this.withGitLock(root, () =>
          commitOfTree(root, commitSnap.tree, commitSnap.commit, `orchestrate: the checkout ${inst.id} starts from`),
        );
        if (!tip.ok) return failed('workspace', tip.error);
        start = tip.commit;
      }
      const r = await this.makeWorktree(root, wt, start);
      if (!r.ok) return failed('error', r.error);
      inst.workCwd = join(wt, relative(root, cwd));
      const snap = await this.batches.snapshot(root, inst.workCwd, wt);
      if (!snap.ok) return failed('workspace', snap.error);
      inst.git = { root, commit: snap.commit, tree: snap.tree, worktree: wt, ...(remotes ? { remotes } : {}) };
      return { ok: true };
    }
    if (root) {
      // Taken with the other instances of this repository that start meanwhile: one shell for all.
      const snap = await this.batches.snapshot(root, cwd);
      if (!snap.ok) return failed('workspace', snap.error);
      inst.git = { root, commit: snap.commit, tree: snap.tree, ...(remotes ? { remotes } : {}) };
    }
    return { ok: true };
  }

  /**
   * The worktree at `wt`, made at `commit` unless it is there whole; what a kill left of an earlier
   * one there (a record without its folder, a checkout cut off) is removed first (worktree-leftovers.ts).
   */
  private makeWorktree(root: string, wt: string, commit: string | undefined) {
    return this.withGitLock(root, async () => {
      if (worktreeIsWhole(root, wt)) return { ok: true } as const;
      await removeWorktreeFully(root, wt, this.ownWorktrees);
      return addWorktree(root, wt, commit);
    });
  }

  /**
   * The remotes `root` had before any agent ran there: those another instance of this run
   * recorded (a resumed run's agents ran before this process; a run recorded without them
   * records none now, as a read now could be the model's), else read once for the repository.
   */
  private async remotesBefore(root: string, inst: InstanceState): Promise<RemoteUrls | undefined> {
    for (const s of this.ctx.siblings?.() ?? [])
      if (s.inst !== inst && s.inst.git?.root === root) return s.inst.git.remotes;
    return this.remoteReads.of(root);
  }

  /**
   * What changed under `dir` since `baseTree`, diffed under `root`'s lock together with the other
   * instances finishing in the same work tree (`worktree`, else the repository's own).
   */
  diffSince(root: string, dir: string, baseTree: string | undefined, worktree?: string): Promise<DiffOutcome> {
    return this.batches.diffSince(root, dir, baseTree, worktree);
  }

  /**
   * In a git workspace, changes outside the task's `writes:` (made by bash, verify or a `run:`
   * step) are reverted and fail the attempt (write-scope-check.ts); the runs folder is exempt.
   */
  checkWrites(t: TaskState, inst: InstanceState, result: WorkerResult): Promise<WorkerResult> {
    return enforceWriteScope(t, inst, result, this.ctx.siblings?.() ?? [], this, [dirname(this.ctx.store.dir)]);
  }

  /**
   * The sandbox paths of an instance's commands: the runs folder (this run's and the others':
   * logs, sessions and patches are not the agent's to read or change) is hidden, and the run's
   * trusted inputs in its workspace (recipe.yaml, agent files, .mcp.json ...) stay read-only.
   */
  sandboxPaths(inst: InstanceState): SandboxPaths {
    const cwd = inst.workCwd ?? inst.resolved?.cwd;
    const readOnly = cwd ? protectedInputPaths(this.ctx.store.dir).filter((p) => isInside(cwd, p)) : [];
    return { hide: [dirname(this.ctx.store.dir)], ...(readOnly.length ? { readOnly } : {}) };
  }

  /**
   * What the attempt changed, recorded (patches/<instance>.diff, the files it touched) and, for
   * `isolation: worktree`, landed where the task's `merge:` says before the instance is logged
   * done; not ok when it cannot be measured or cannot land. `summary` (the agent's handoff) is
   * kept with `text` while the work waits for its turn in the train (land_order: task).
   */
  async land(t: TaskState, inst: InstanceState, text: string, summary?: string): Promise<Landing> {
    const g = inst.git;
    if (!g) return { ok: true, files: [] };
    const { store } = this.ctx;
    const cwd = inst.workCwd ?? inst.resolved!.cwd;
    const d = await this.diffSince(g.root, cwd, g.tree, g.worktree);
    // Without a diff nothing is known of the work: no patch, nothing landed, and the attempt fails.
    if (!d.ok)
      return {
        ok: false,
        failure: 'workspace',
        detail: `the changes of ${inst.id} cannot be measured, so nothing was recorded or landed: ${d.error} (${changedFilesNote(d.files)})`,
      };
    const files: string[] = [];
    let patchFile: string | undefined;
    if (d.patch.trim()) {
      patchFile = `patches/${inst.id}.diff`;
      try {
        store.writeFile(patchFile, d.patch);
      } catch (err) {
        this.ctx.storageFailed?.(
          `cannot write ${join(store.dir, patchFile)}: ${err instanceof Error ? err.message : String(err)}`,
        );
      }
      for (const f of d.files) files.push(pathFromRoot(this.ctx.recipeDir, join(g.root, f)));
    }
    if (this.train && this.trains(t) && g.worktree && d.patch.trim()) {
      const landed = await this.train.land(t, inst, d.patch, t.task.maxRepairs, {
        text,
        ...(summary ? { summary } : {}),
      });
      if (landed.ok) return { ok: true, files, ...(patchFile ? { patchFile } : {}), applied: true };
      const why = landed.failure === 'verify_failed' ? ('verify' as const) : ('conflict' as const);
      const named = landed.files?.length ? ` (conflicting files: ${landed.files.join(', ')})` : '';
      return {
        ok: false,
        failure: landed.failure,
        detail: `${landed.detail}${landed.repairable ? '' : named}`,
        ...(patchFile ? { patchFile } : {}),
        ...(landed.repairable
          ? {
              repair: {
                patch: d.patch,
                why,
                ...(landed.files ? { files: landed.files } : {}),
                ...(landed.verify ? { verify: landed.verify } : {}),
              },
            }
          : {}),
      };
    }
    const land = await this.merge(t, inst, d.patch, join(store.dir, `patches/${inst.id}.diff`), text);
    if (!land.ok) return { ok: false, failure: land.failure, detail: land.detail, ...(patchFile ? { patchFile } : {}) };
    return {
      ok: true,
      files,
      ...(patchFile ? { patchFile } : {}),
      ...(land.branch ? { branch: land.branch } : land.applied ? { applied: true } : {}),
    };
  }

  /**
   * Lands the work of a finished worktree instance as its task's `merge:` says (worktree-merge.ts):
   * on a branch, or applied to the checkout. With `merge: patch`, or outside a worktree, nothing
   * happens. The worktree stays until the instance is logged done (drop).
   */
  private async merge(
    t: TaskState,
    inst: InstanceState,
    patch: string,
    patchName: string,
    text: string,
  ): Promise<{ ok: true; branch?: string; applied?: boolean } | Extract<Landing, { ok: false }>> {
    const g = inst.git;
    if (t.task.merge === 'patch' || !g?.worktree || !patch.trim()) return { ok: true };
    const root = g.root;
    if (t.task.merge === 'branch') {
      if (!g.commit)
        return {
          ok: false,
          failure: 'patch_conflict',
          detail: `cannot commit to a branch: the worktree of ${root} has no base commit`,
        };
      const headline =
        text
          .split('\n')
          .map((l) => l.trim())
          .find((l) => l !== '') ?? 'done';
      const { runId } = this.ctx.store;
      const message = `${inst.id}: ${headline.length > 72 ? `${headline.slice(0, 69)}...` : headline}\n\nRun ${runId}, task ${t.task.id}, instance ${inst.id} (orchestrate).\n`;
      // The reply's first line goes into the repository: secrets are replaced as in every file of the run.
      const r = await this.withGitLock(root, () =>
        commitToBranch(root, g.commit!, branchName(runId, inst.id), patch, this.ctx.store.redactText(message)),
      );
      return r.ok ? r : { ok: false, failure: r.failure ?? 'patch_conflict', detail: r.error };
    }
    const r = await this.withGitLock(root, () => applyToCheckout(root, patch, patchName));
    return r.ok ? r : { ok: false, failure: r.failure ?? 'patch_conflict', detail: r.error };
  }

  /**
   * Starts a repair of work the merge train refused: a commit of the checkout as it is now (the
   * new tip), logged as the repair's base with the prompt its agent gets (train-repair.ts), then
   * the instance's worktree made again at it. The attempt that follows (a retry) runs the agent
   * there with a session of its own. Not ok when the tip cannot be read: the instance fails.
   */
  async startRepair(
    t: TaskState,
    inst: InstanceState,
    need: TrainRepairNeed,
    earlier: { summary?: string },
  ): Promise<{ ok: true } | WorkspaceFailure> {
    const g = inst.git;
    if (!this.train || !g?.worktree) return failed('workspace', `${inst.id} has no worktree to repair in`);
    const tip = await this.checkoutTree(g.root);
    if (!tip.ok) return failed('workspace', `cannot read the checkout ${g.root}: ${tip.error}`);
    const base = await this.withGitLock(g.root, () =>
      commitOfTree(g.root, tip.tree, tip.commit, `orchestrate: the tip ${inst.id} is repaired on`),
    );
    if (!base.ok) return failed('workspace', base.error);
    const repair = this.train.repairs(inst.id) + 1;
    const prompt = repairPrompt({
      prompt: this.taskPrompt(inst),
      ...(earlier.summary ? { summary: earlier.summary } : {}),
      patch: need.patch,
      ...(inst.patchFile ? { patchFile: inst.patchFile } : {}),
      repair,
      maxRepairs: t.task.maxRepairs,
      why: need.why,
      ...(need.files ? { files: need.files } : {}),
      ...(need.verify ? { verify: need.verify } : {}),
    });
    // Logged before the old worktree goes: a resume after a kill from here on takes the repair up.
    this.train.step(inst, 'repair', {
      repair,
      baseCommit: base.commit,
      baseTree: tip.tree,
      worktree: g.worktree,
      prompt,
      ...(need.files ? { files: need.files } : {}),
    });
    await this.adoptRepair(inst);
    return { ok: true };
  }

  /**
   * An instance under repair works from the repair's base, in a new session with the repair's
   * prompt; a resume after a kill finds both in the train's log (the worktree is made again at
   * the base when it is missing, or when it still holds the work from before the repair).
   */
  private async adoptRepair(inst: InstanceState): Promise<void> {
    const r = this.train?.state.cars[inst.id];
    if (r?.status !== 'repairing' || !r.repair || !inst.git) return;
    if (inst.resolved && r.repair.prompt !== undefined) {
      this.taskPrompt(inst);
      inst.resolved = { ...inst.resolved, prompt: r.repair.prompt };
    }
    if (inst.git.tree === r.repair.baseTree) return;
    const wt = r.repair.worktree ?? inst.git.worktree;
    const root = inst.git.root;
    if (wt) await this.withGitLock(root, () => removeWorktreeFully(root, wt, this.ownWorktrees));
    inst.git = {
      ...inst.git,
      tree: r.repair.baseTree,
      ...(r.repair.baseCommit ? { commit: r.repair.baseCommit } : {}),
      ...(wt ? { worktree: wt } : {}),
    };
  }

  /**
   * Removes the worktree of a done instance whose work landed (merge: branch / apply): the branch
   * or the checkout holds it now, and its patch. Called after instance_done is logged, so a kill
   * in between leaves a worktree behind (removed by the next resume), never an instance whose
   * worktree is gone but that is not done. A kill during the removal itself can leave git's record
   * without the folder, or half the folder: those go too.
   */
  async drop(t: TaskState, inst: InstanceState): Promise<void> {
    const g = inst.git;
    if (t.task.merge === 'patch' || !g?.worktree) return;
    await this.withGitLock(g.root, () => removeWorktreeFully(g.root, g.worktree!, this.ownWorktrees));
    // The run folder's worktrees/ goes with its last worktree (rmdir refuses while others remain).
    try {
      rmdirSync(dirname(g.worktree));
    } catch {
      // not empty, or already gone
    }
  }
}
