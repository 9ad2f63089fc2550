// Which ready instance runs next. The scheduler admits an instance only when fewer than
// `concurrency` run, its task is under `max_parallel`, no running instance has an overlapping
// `writes` scope, and the admission check (budget) lets it in. Instances that cannot start yet
// wait in arrival order (earlier tasks first), and are looked at again whenever something
// finishes. Hand-written on purpose, unlike the permit queues and the git lock (p-queue): an
// instance blocked by its task's max_parallel or an overlapping writes scope must not hold up the
// ready instances behind it, and a FIFO queue only ever starts its head.
//
// An instance whose agent has finished but whose work still waits for its turn to land (the merge
// train's `land_order: task`) gives its slot back (release()): it no longer counts against
// `concurrency`, `max_parallel` or the budget reservations, so the earlier work it waits for can
// start. Its `writes` scope stays held against the instances its caller names (those that must
// start from its landed work) until its run settles.
import { scopesOverlap } from '../workspace/write-scopes.js';

export interface SchedulableInstance {
  /** Instance id, unique in the run. */
  id: string;
  task: string;
  /** Absolute write globs; empty = no constraint. */
  writes: readonly string[];
  /** Max instances of this task running at once (undefined = no per-task limit). */
  maxParallel?: number;
  /** Lower runs first among waiting instances (topological level of the task). */
  order: number;
  /** Threads the instance occupies (2 for a planner/worker pair); counts once against concurrency. */
  threads?: number;
}

/** Why an instance may not start now; undefined = it may. `fatal` ones are dropped instead of waiting. */
export type Admission = undefined | { wait: string } | { refuse: string };

interface Waiting {
  inst: SchedulableInstance;
  run: () => Promise<void>;
  seq: number;
}

/** An admitted instance; `holdsWritesAgainst` set once it gave its slot back (release()). */
interface Running {
  inst: SchedulableInstance;
  holdsWritesAgainst?: (other: SchedulableInstance) => boolean;
}

export interface SchedulerOptions {
  concurrency: number;
  /** Extra admission check (budget); called only when the other constraints pass. */
  admit?: (inst: SchedulableInstance, running: readonly SchedulableInstance[]) => Admission;
  /** An instance refused for good by `admit`. */
  onRefused?: (inst: SchedulableInstance, reason: string) => void;
}

export class Scheduler {
  private readonly waiting: Waiting[] = [];
  /** Admitted and not settled, by id: those holding a slot and those that released it. */
  private readonly running = new Map<string, Running>();
  private seq = 0;
  private stopped = false;
  private readonly idleWaiters: (() => void)[] = [];
  /** The reason the last waiting instance could not start (for status lines). */
  lastWaitReason: string | undefined;

  constructor(private readonly opts: SchedulerOptions) {
    if (!(opts.concurrency >= 1)) throw new Error(`concurrency must be at least 1, got ${opts.concurrency}`);
  }

  /** Instances holding a slot (a released one does not). */
  get runningCount(): number {
    return this.active().length;
  }

  get waitingCount(): number {
    return this.waiting.length;
  }

  runningInstances(): SchedulableInstance[] {
    return this.active();
  }

  private active(): SchedulableInstance[] {
    const out: SchedulableInstance[] = [];
    for (const r of this.running.values()) if (!r.holdsWritesAgainst) out.push(r.inst);
    return out;
  }

  /**
   * The running instance `id` no longer runs an agent (its work waits to land): its slot, its
   * max_parallel count and its budget reservation go back now and waiting instances may start.
   * Its writes scope still keeps out the instances `holdsWritesAgainst` accepts until its run
   * settles. Nothing happens for an instance that is not running.
   */
  release(id: string, holdsWritesAgainst: (other: SchedulableInstance) => boolean = () => false): void {
    const r = this.running.get(id);
    if (!r || r.holdsWritesAgainst) return;
    r.holdsWritesAgainst = holdsWritesAgainst;
    this.pump();
    this.checkIdle();
  }

  /** Adds a ready instance; `run` is called when it is admitted and must settle when it ends. */
  submit(inst: SchedulableInstance, run: () => Promise<void>): void {
    if (this.stopped) return;
    this.waiting.splice(this.insertionIndex(inst.order), 0, { inst, run, seq: this.seq++ });
    this.pump();
  }

  /**
   * Where an instance of `order` joins the waiting list: after every waiting one of the same or a
   * lower order (the list stays in order, arrivals in arrival order). Usually the end, found by one
   * comparison; else a binary search. Sorting the whole list on every submit made a fan-out of N
   * instances cost O(N^2 log N) comparisons in one synchronous burst.
   */
  private insertionIndex(order: number): number {
    const w = this.waiting;
    if (w.length === 0 || w[w.length - 1]!.inst.order <= order) return w.length;
    let lo = 0;
    let hi = w.length - 1;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (w[mid]!.inst.order <= order) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }

  /** Stops admitting; returns the instances that never started (running ones go on). */
  stop(): SchedulableInstance[] {
    this.stopped = true;
    return this.waiting.splice(0).map((w) => w.inst);
  }

  /** Removes waiting instances matching `pred` (e.g. a fan-out cancelled by max_failed). */
  cancelWaiting(pred: (inst: SchedulableInstance) => boolean): SchedulableInstance[] {
    const out: SchedulableInstance[] = [];
    for (let i = 0; i < this.waiting.length; ) {
      if (pred(this.waiting[i]!.inst)) out.push(this.waiting.splice(i, 1)[0]!.inst);
      else i++;
    }
    return out;
  }

  /**
   * Resolves when nothing runs and nothing waits (or what waits cannot start because nothing is
   * left running to free it; the caller decides what to do with those).
   */
  onIdle(): Promise<void> {
    if (this.idle()) return Promise.resolve();
    return new Promise((resolve) => this.idleWaiters.push(resolve));
  }

  private idle(): boolean {
    return this.active().length === 0;
  }

  private checkIdle(): void {
    if (!this.idle()) return;
    for (const w of this.idleWaiters.splice(0)) w();
  }

  private blockedBy(inst: SchedulableInstance): string | undefined {
    if (inst.maxParallel !== undefined) {
      let n = 0;
      for (const r of this.active()) if (r.task === inst.task) n++;
      if (n >= inst.maxParallel) return `task ${inst.task} is at max_parallel ${inst.maxParallel}`;
    }
    if (inst.writes.length) {
      for (const { inst: r, holdsWritesAgainst: holds } of this.running.values()) {
        if (!r.writes.length || !scopesOverlap(inst.writes, r.writes)) continue;
        if (!holds) return `writes overlap with running ${r.id}`;
        if (holds(inst)) return `writes overlap with ${r.id}, whose work waits to land`;
      }
    }
    return undefined;
  }

  /** Looks at waiting instances in order and starts every one that may start now. */
  pump(): void {
    if (this.stopped) return;
    let holding = this.active().length;
    for (let i = 0; i < this.waiting.length && holding < this.opts.concurrency; ) {
      const w = this.waiting[i]!;
      const blocked = this.blockedBy(w.inst);
      if (blocked) {
        this.lastWaitReason = blocked;
        i++;
        continue;
      }
      const verdict = this.opts.admit?.(w.inst, this.active());
      if (verdict && 'refuse' in verdict) {
        this.waiting.splice(i, 1);
        this.opts.onRefused?.(w.inst, verdict.refuse);
        continue;
      }
      if (verdict && 'wait' in verdict) {
        this.lastWaitReason = verdict.wait;
        i++;
        continue;
      }
      this.waiting.splice(i, 1);
      const entry: Running = { inst: w.inst };
      this.running.set(w.inst.id, entry);
      holding++;
      void (async () => {
        try {
          await w.run();
        } finally {
          // The same instance may be running again already (a repair queued before this run settled).
          if (this.running.get(w.inst.id) === entry) this.running.delete(w.inst.id);
        }
      })()
        .catch(() => undefined)
        .finally(() => {
          this.pump();
          this.checkIdle();
        });
    }
  }
}
