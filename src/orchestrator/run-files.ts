// The run's files besides its log: plan.md (the merged summaries, a view rewritten as instances
// finish), learned-limits.json (the provider limits learned so far, for a resume) and result.json
// (written once at the end). plan.md is rewritten at most every planWriteIntervalMs (a wide
// fan-out would otherwise render the whole plan once per instance: quadratic), and at once when
// the run ends. All are written off the event loop (the atomic replace's fsyncs took milliseconds
// of the coordinator's thread per rewrite, issue 41), each as a CoalescedWrite (one in flight, the
// latest wins), and finish() awaits the writes under way before the final ones. The spend per provider in result.json is tallied from
// the call_usage events as the store appends them, by the fold's own addProviderCall, so it reads
// exactly as `show` and the report fold it from run.jsonl.
import { join } from 'node:path';
import type { LoadedRecipe } from '../recipe/index.js';
import { renderPlan } from '../run/merge-summaries.js';
import { planInput, resultFile, type RunStatus, type TaskState } from '../run/run-state.js';
import type { RunStore } from '../run/run-store.js';
import type { UsageSummary } from '../run/run-events.js';
import { addProviderCall, copyProviderUsage, type ProviderUsage } from '../run/usage-summary.js';
import { CoalescedWrite } from './coalesced-write.js';
import { ORCHESTRATOR_DEFAULTS } from './defaults.js';
import type { LearnedLimitRecord } from './pacing/learned-limits.js';
import { LEARNED_LIMITS_FILE, learnedLimitsText } from './pacing/learned-limits-file.js';

export interface RunFilesContext {
  recipe: LoadedRecipe;
  store: RunStore;
  /** Tasks in plan order. */
  tasks(): TaskState[];
  /** The status line of a running run ("running", "stopping (budget)"). */
  liveStatus(): string;
  /** Resume: the spend per provider the log already holds (the fold's `providers`). */
  providersBefore?: ProviderUsage;
  /** The provider limits learned so far (the permit broker's), kept in learned-limits.json. */
  learnedLimits?(): LearnedLimitRecord[];
}

/**
 * How long plan.md waits before a rewrite, for a run of `instances`: planWriteIntervalMs, growing
 * in proportion past planInstancesPerInterval instances, so the instances rendered per second of
 * the run stay bounded whatever its size (all rewrites together: linear in the instances).
 */
export function planWriteDelayMs(instances: number): number {
  const d = ORCHESTRATOR_DEFAULTS;
  return d.planWriteIntervalMs * Math.max(1, instances / d.planInstancesPerInterval);
}

export class RunFiles {
  private planTimer: NodeJS.Timeout | undefined;
  private closed = false;
  private readonly plan = new CoalescedWrite(() => this.writePlanFile(this.ctx.liveStatus()));
  private readonly limits = new CoalescedWrite(() => this.writeLimitsFile());
  private readonly providers: ProviderUsage;
  private readonly unsubscribe: () => void;

  constructor(private readonly ctx: RunFilesContext) {
    this.providers = copyProviderUsage(ctx.providersBefore);
    this.unsubscribe = ctx.store.subscribe((e) => {
      if (e.type === 'call_usage') addProviderCall(this.providers, e.provider, e.model, e.usage);
    });
  }

  /** plan.md is due: written within planWriteDelayMs of the run's instances. */
  planChanged(): void {
    if (this.planTimer || this.closed) return;
    const instances = this.ctx.tasks().reduce((n, t) => n + t.instances.length, 0);
    this.planTimer = setTimeout(() => {
      this.planTimer = undefined;
      if (!this.closed) this.writePlan();
    }, planWriteDelayMs(instances));
  }

  /**
   * Rewrites plan.md with the live status, off the event loop: now, or (a write being under way)
   * once more right after it, rendered then. Never throws; plan.md is a view.
   */
  writePlan(): void {
    if (this.planTimer) clearTimeout(this.planTimer);
    this.planTimer = undefined;
    this.plan.request();
  }

  /** A provider limit was learned or changed: learned-limits.json is rewritten (coalesced, off the event loop). */
  learnedLimitsChanged(): void {
    this.limits.request();
  }

  /** Resolves once no plan.md write is under way or pending (a caller that reads plan.md next). */
  async planWritten(): Promise<void> {
    await this.plan.settled();
  }

  private async writePlanFile(status: string): Promise<void> {
    try {
      await this.ctx.store.writeFileAsync('plan.md', renderPlan(planInput(this.ctx.recipe, this.ctx.tasks(), status)));
    } catch {
      // plan.md is a view; the log holds the truth and the next instance rewrites it
    }
  }

  private async writeLimitsFile(): Promise<void> {
    const records = this.ctx.learnedLimits?.() ?? [];
    if (records.length === 0) return;
    try {
      await this.ctx.store.writeFileAsync(LEARNED_LIMITS_FILE, learnedLimitsText(records));
    } catch {
      // a resume without it learns the limits again
    }
  }

  /**
   * The run ends: no timed rewrite any more; once the writes under way are done, the final plan.md,
   * learned-limits.json and result.json are written. Resolves with why result.json could not be.
   */
  async finish(args: { status: RunStatus; startedAt: number; endedAt: number; usage: UsageSummary }): Promise<{
    resultPath: string;
    error?: string;
  }> {
    this.close();
    await Promise.all([this.plan.settled(), this.limits.settled()]);
    await Promise.all([this.writePlanFile(args.status), this.writeLimitsFile()]);
    const { store, recipe } = this.ctx;
    this.unsubscribe();
    const result = resultFile({
      runId: store.runId,
      recipe,
      ...args,
      providers: this.providers,
      tasks: this.ctx.tasks(),
      runDir: store.dir,
    });
    const resultPath = join(store.dir, 'result.json');
    try {
      await store.writeFileAsync('result.json', `${JSON.stringify(result, null, 2)}\n`);
      return { resultPath };
    } catch (err) {
      return { resultPath, error: `cannot write ${resultPath}: ${err instanceof Error ? err.message : String(err)}` };
    }
  }

  /** end() began: timed rewrites stop (the final writes come from finish()). */
  close(): void {
    this.closed = true;
    if (this.planTimer) clearTimeout(this.planTimer);
    this.planTimer = undefined;
    this.plan.stop();
    this.limits.stop();
  }
}
