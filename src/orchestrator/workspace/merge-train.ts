// The merge train (`land: train`, the default of `merge: apply`): the work of the instances that
// share a repository lands one at a time, in the order they finish, onto the checkout as it is
// then. Each landing is a three-way merge of the instance's work (its base tree plus its patch)
// onto the current tip (train-git.ts), never its old patch applied to files that moved. The
// task's `verify:` then runs on the merged tree, in a folder of its own, before the checkout is
// touched: a landing that would break it never reaches the checkout (it is "backed out" before it
// lands). A conflict or a broken verify sends the instance to repair (train-repair.ts) while it
// has repairs left (`max_repairs`, default 2), else fails it `patch_conflict` / `verify_failed`.
//
// With `land_order: task` a finished instance waits for its turn before it joins the train: it
// lands only after every instance of the train tasks before its task in the land order (the
// recipe's order, a task's needs pulled before it: land-turn.ts), in the same repository, has
// ended: landed, failed, cancelled or skipped, started or not. While it waits it is a `waiting`
// car: its agent is done, so it gives its concurrency slot back (TrainContext.yieldSlot; its
// writes scope still holds against the work that lands after it) and the earlier work it waits
// for can start even at `concurrency: 1`. Its turn lands without a slot (landing is the train's
// work); a repair is an agent run again, queued for a slot like any start. The wait is woken by
// status changes (wake(), called by the coordinator on lifecycle and control events), never by a
// timer. A cancel ends the wait (a `failed` step), an interrupt leaves it `waiting`: the step
// keeps the agent's answer, so a resume lands the kept work in its turn without running it again.
//
// Every step is a `train_step` event (run/train-record.ts). A resume reads the train back from the
// log: a car logged `landed` is not landed again; one logged `landing` (killed while its files
// were being written) is merged again, and a merge of work the checkout already holds changes
// nothing (both sides made the same change), so nothing lands twice.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import type { RunEventInput } from '../../run/run-events.js';
import { isTerminal, pathFromRoot, type InstanceState, type TaskState } from '../../run/run-state.js';
import { holdsAgainst, landPositions, turnWait } from './land-turn.js';
import {
  applyTrainEvent,
  createTrainState,
  type TrainPhase,
  type TrainState,
  type TrainVerify,
} from '../../run/train-record.js';
import type { SandboxOptions } from '../../tools/sandbox.js';
import { runCommand } from './verify.js';
import { KeyedLock } from './keyed-lock.js';
import type { SnapshotOutcome } from './git-workspace.js';
import { applyTreeChange, materializeTree, threeWayMerge } from './train-git.js';

/** Repairs an instance gets when its work conflicts or breaks verify on the tip, unless `max_repairs` says. */
export const DEFAULT_MAX_REPAIRS = 2;

/** Rounds of merging again when the checkout moved under a landing before its files were written. */
const MAX_ROUNDS = 3;

export interface TrainContext {
  /** Paths in events are written relative to it (run-state.ts pathFromRoot). */
  recipeDir: string;
  /** Hidden from verify's sandbox, as from the agents' (the run's logs and sessions). */
  runsDir: string;
  record(e: RunEventInput): void;
  withGitLock<T>(root: string, fn: () => Promise<T>): Promise<T>;
  /** A snapshot of the checkout's files at `root` (taken under its lock, batched). */
  snapshotCheckout(root: string): Promise<SnapshotOutcome>;
  /** The train as the log left it (resume). */
  restored?: TrainState;
  /** The run's tasks in recipe order (`land_order: task`); without it work lands in completion order. */
  tasks?(): Iterable<TaskState>;
  /**
   * `inst` waits for its turn and runs no agent meanwhile: its concurrency slot goes back, its
   * writes scope still keeping out the instances of the tasks `holds` accepts (scheduler release()).
   */
  yieldSlot?(inst: InstanceState, holds: (task: string) => boolean): void;
  /** Why `inst` stops waiting for its turn without landing (a cancel, the run interrupted); undefined: it goes on waiting. */
  stopWaiting?(inst: InstanceState): { reason: string; cancelled: boolean } | undefined;
  /** The confinement of `t`'s verify commands (its agent's sandbox and network, else the recipe's), as in its worktree. */
  verifySandbox?(t: TaskState): Pick<SandboxOptions, 'mode' | 'network'>;
}

/** Why an instance's work did not land, and what a repair needs to know. */
export interface TrainRefusal {
  ok: false;
  failure: 'patch_conflict' | 'verify_failed' | 'workspace';
  detail: string;
  /** Conflicting files (relative to the repository), or the verify that failed with its output. */
  files?: string[];
  verify?: TrainVerify[];
  /** A repair may follow (its repairs are not used up, and the failure is the work's, not git's). */
  repairable: boolean;
}

export type TrainLanding = { ok: true; files: string[]; commit?: string } | TrainRefusal;

export class MergeTrain {
  /** One landing at a time per repository, in the order they asked (completion order). */
  private readonly lanes = new KeyedLock();
  readonly state: TrainState;
  /** Checks of the instances waiting for their turn (`land_order: task`), run by wake(). */
  private readonly waiters = new Set<() => void>();
  /** A wake() is queued: the checks run once for every change of one event-loop turn. */
  private wakeQueued = false;
  /** The land order of the run's tasks (land-turn.ts), taken at the first wait. */
  private positions: Map<string, number> | undefined;

  constructor(private readonly ctx: TrainContext) {
    this.state = ctx.restored ? structuredClone(ctx.restored) : createTrainState();
  }

  /** The answer of an instance whose finished work waited for its turn when the run stopped: a resume lands it without running its agent. */
  keptWork(key: string): { text: string; summary?: string } | undefined {
    const car = this.state.cars[key];
    return car?.status === 'waiting' ? car.kept : undefined;
  }

  /** Repairs the instance has started. */
  repairs(key: string): number {
    return this.state.cars[key]?.repairs ?? 0;
  }

  /** Logs one step of `inst` and applies it to the train. */
  step(inst: InstanceState, phase: TrainPhase, fields: Record<string, unknown> = {}): void {
    const repo = pathFromRoot(this.ctx.recipeDir, inst.git!.root);
    const e = {
      type: 'train_step' as const,
      task: inst.task,
      key: inst.id,
      attempt: Math.max(1, inst.attempt),
      parent: inst.task,
      phase,
      repo,
      ...fields,
    };
    this.ctx.record(e);
    applyTrainEvent(this.state, { ...e, ts: Date.now() });
  }

  /**
   * Lands `patch` (the instance's work since its base tree) through the train of its repository;
   * `answer` (its agent's reply) is kept in the `waiting` step while it waits for its turn.
   */
  async land(
    t: TaskState,
    inst: InstanceState,
    patch: string,
    maxRepairs: number,
    answer?: { text: string; summary?: string },
  ): Promise<TrainLanding> {
    const g = inst.git!;
    const car = this.state.cars[inst.id];
    // Landed before a kill that came before the instance was logged done: not again.
    if (car?.status === 'landed')
      return { ok: true, files: car.files ?? [], ...(car.commit ? { commit: car.commit } : {}) };
    // Stopped while it waited (cancelled, or the run interrupted): its work stays in its worktree and patch.
    const stopped = await this.awaitTurn(t, inst, answer);
    if (stopped)
      return {
        ok: false,
        failure: 'workspace',
        detail: `${inst.id} stopped waiting for its turn in the merge train (land_order: task): ${stopped}; its work is in its patch`,
        repairable: false,
      };
    return this.lanes.run(g.root, async () => {
      const refuse = (r: Omit<TrainRefusal, 'ok' | 'repairable'>): TrainRefusal => {
        // A `run:` step would only run its command again: no repair changes its work.
        const repairable = r.failure !== 'workspace' && t.task.kind !== 'run' && this.repairs(inst.id) < maxRepairs;
        if (!repairable && r.failure !== 'workspace')
          this.step(inst, 'failed', { failure: r.failure, error: r.detail, ...(r.files ? { files: r.files } : {}) });
        return { ok: false, repairable, ...r };
      };
      let lastError = '';
      for (let round = 0; round < MAX_ROUNDS; round++) {
        const tip = await this.ctx.snapshotCheckout(g.root);
        if (!tip.ok)
          return refuse({ failure: 'workspace', detail: `cannot read the checkout ${g.root}: ${tip.error}` });
        const merged = await threeWayMerge(g.root, g.tree, patch, tip.tree, `${inst.id}: landed by the merge train`);
        if (!merged.ok && merged.conflict) {
          this.step(inst, 'conflict', { tipTree: tip.tree, files: merged.files, error: merged.detail });
          return refuse({ failure: 'patch_conflict', detail: merged.detail, files: merged.files });
        }
        if (!merged.ok) return refuse({ failure: merged.failure ?? 'workspace', detail: merged.error });
        const verify = merged.tree === tip.tree ? [] : await this.verifyMerged(t, inst, merged.tree);
        if (verify.some((v) => !v.ok)) {
          const bad = verify.find((v) => !v.ok)!;
          const detail = `verify \`${bad.command}\` fails on the merged tree (its work on top of what landed before it), so it was not landed: ${lastLines(bad.output)}`;
          this.step(inst, 'verify_failed', { tipTree: tip.tree, tree: merged.tree, verify, error: detail });
          return refuse({ failure: 'verify_failed', detail, verify });
        }
        // The checkout's files move from the tip to the merged tree, under the repository's lock.
        const applied = await this.ctx.withGitLock(g.root, async () => {
          this.step(inst, 'landing', { tipTree: tip.tree, tree: merged.tree });
          return applyTreeChange(g.root, tip.tree, merged.tree);
        });
        if (!applied.ok) {
          lastError = applied.error;
          continue; // the checkout moved under it: merge onto the new tip
        }
        const files = applied.files.map((f) => pathFromRoot(this.ctx.recipeDir, join(g.root, f)));
        this.step(inst, 'landed', { tipTree: tip.tree, tree: merged.tree, commit: merged.commit, files, verify });
        return { ok: true, files, commit: merged.commit };
      }
      return refuse({
        failure: 'workspace',
        detail: `the work of ${inst.id} could not be written to the checkout ${g.root} (${MAX_ROUNDS} tries; it changed under each landing, or cannot be written): ${lastError}. Its work is in its patch`,
      });
    });
  }

  /** Re-checks the instances waiting for their turn (an instance changed status, or a user acted): once, after the current turn of the event loop. */
  wake(): void {
    if (this.wakeQueued || this.waiters.size === 0) return;
    this.wakeQueued = true;
    // After the caller's own bookkeeping: a cancel is logged before it is carried out.
    queueMicrotask(() => {
      this.wakeQueued = false;
      for (const check of [...this.waiters]) check();
    });
  }

  /**
   * Resolves once `inst` may land (`land_order: task`): undefined, or why it stopped waiting.
   * While it waits it is a `waiting` car and its slot is given back (yieldSlot). An instance that
   * has already ended (a picked attempt of `attempts: N` lands after its instance) does not wait.
   */
  private awaitTurn(
    t: TaskState,
    inst: InstanceState,
    answer: { text: string; summary?: string } | undefined,
  ): Promise<string | undefined> {
    const tasks = this.ctx.tasks;
    if (t.task.landOrder !== 'task' || !tasks || isTerminal(inst.status)) return Promise.resolve(undefined);
    const root = inst.git!.root;
    const all = [...tasks()];
    // The run's tasks and their needs do not change while it runs: their land order is taken once.
    this.positions ??= landPositions(all);
    const pos = this.positions;
    const first = turnWait(all, t, root, pos);
    if (first.tasks.length === 0) return Promise.resolve(undefined);
    this.step(inst, 'waiting', {
      behind: first.tasks,
      ...(first.keys.length ? { behindKeys: first.keys } : {}),
      ...(answer ? { text: answer.text, ...(answer.summary ? { summary: answer.summary } : {}) } : {}),
    });
    this.ctx.yieldSlot?.(inst, (other) => holdsAgainst(all, t, other, pos));
    return new Promise((resolve) => {
      const check = () => {
        const stop = this.ctx.stopWaiting?.(inst);
        if (!stop && turnWait([...tasks()], t, root, pos, true).tasks.length > 0) return;
        this.waiters.delete(check);
        // A cancel ends the car; an interrupt leaves it waiting, for the resume to land in its turn.
        if (stop?.cancelled)
          this.step(inst, 'failed', { error: `not landed: ${stop.reason} while it waited for its turn` });
        resolve(stop?.reason);
      };
      this.waiters.add(check);
    });
  }

  /** The task's verify commands, in order, on `tree` written out to a folder of its own. */
  private async verifyMerged(t: TaskState, inst: InstanceState, tree: string): Promise<TrainVerify[]> {
    const steps = inst.resolved?.verify ?? [];
    if (steps.length === 0) return [];
    const g = inst.git!;
    const dir = mkdtempSync(join(tmpdir(), 'orchestrate-train-'));
    try {
      const written = await materializeTree(g.root, tree, dir);
      if (!written.ok) return [{ command: '(write the merged tree)', ok: false, output: written.error }];
      const cwd = join(dir, relative(g.root, inst.resolved!.cwd));
      const out: TrainVerify[] = [];
      for (const step of steps) {
        const r = await runCommand(step.run, {
          cwd,
          env: inst.resolved!.env,
          ...(t.task.timeoutMs ? { timeoutMs: t.task.timeoutMs } : {}),
          sandbox: { ...this.ctx.verifySandbox?.(t), writable: [dir], hide: [this.ctx.runsDir] },
        });
        out.push({ command: step.run, ok: r.ok, output: r.output });
        if (!r.ok) break;
      }
      return out;
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }
}

/** The last lines of a command's output, joined for one line of an error. */
function lastLines(output: string): string {
  return (
    output
      .trim()
      .split('\n')
      .slice(-5)
      .map((l) => l.trim())
      .join(' | ') || '(no output)'
  );
}
