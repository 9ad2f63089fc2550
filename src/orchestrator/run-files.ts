// The run's files besides its log: plan.md (the merged summaries, a view rewritten as instances
// finish) and result.json (written once at the end). plan.md is rewritten at most every
// planWriteIntervalMs (a wide fan-out would otherwise render the whole plan once per instance:
// quadratic), and at once when the run ends. Both are written off the event loop (the atomic
// replace's fsyncs took milliseconds of the coordinator's thread per rewrite, issue 41): at most
// one plan.md write is in flight, a rewrite asked for meanwhile is coalesced into one more write
// rendered when it starts (the latest plan wins), and finish() awaits the last one before the
// final plan.md and result.json. The spend per provider in result.json is tallied from
// the call_usage events as the store appends them, by the fold's own addProviderCall, so it reads
// exactly as `show` and the report fold it from run.jsonl.
import { join } from 'node:path';
import type { LoadedRecipe } from '../recipe/index.js';
import { renderPlan } from '../run/merge-summaries.js';
import { planInput, resultFile, type RunStatus, type TaskState } from '../run/run-state.js';
import type { RunStore } from '../run/run-store.js';
import type { UsageSummary } from '../run/run-events.js';
import { addProviderCall, copyProviderUsage, type ProviderUsage } from '../run/usage-summary.js';
import { ORCHESTRATOR_DEFAULTS } from './defaults.js';

export interface RunFilesContext {
  recipe: LoadedRecipe;
  store: RunStore;
  /** Tasks in plan order. */
  tasks(): TaskState[];
  /** The status line of a running run ("running", "stopping (budget)"). */
  liveStatus(): string;
  /** Resume: the spend per provider the log already holds (the fold's `providers`). */
  providersBefore?: ProviderUsage;
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
  /** The plan.md write under way (at most one), and whether another was asked for meanwhile. */
  private planWrite: Promise<void> | undefined;
  private planAgain = false;
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
    if (this.planWrite) {
      this.planAgain = true;
      return;
    }
    this.planWrite = this.writePlans();
  }

  /** Resolves once no plan.md write is under way or pending (a caller that reads plan.md next). */
  async planWritten(): Promise<void> {
    while (this.planWrite) await this.planWrite;
  }

  /** Writes plan.md until no rewrite is pending (each rendered as it starts); the run's end stops the loop. */
  private async writePlans(): Promise<void> {
    do {
      this.planAgain = false;
      await this.writePlanFile(this.ctx.liveStatus());
    } while (this.planAgain && !this.closed);
    this.planWrite = undefined;
  }

  private async writePlanFile(status: string): Promise<void> {
    try {
      await this.ctx.store.writeFileAsync('plan.md', renderPlan(planInput(this.ctx.recipe, this.ctx.tasks(), status)));
    } catch {
      // plan.md is a view; the log holds the truth and the next instance rewrites it
    }
  }

  /**
   * The run ends: no timed rewrite any more; once the write under way is done, the final plan.md
   * and result.json are written. Resolves with why result.json could not be.
   */
  async finish(args: { status: RunStatus; startedAt: number; endedAt: number; usage: UsageSummary }): Promise<{
    resultPath: string;
    error?: string;
  }> {
    this.close();
    await this.planWrite;
    await this.writePlanFile(args.status);
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

  /** end() began: timed rewrites stop (the final write comes from finish()). */
  close(): void {
    this.closed = true;
    if (this.planTimer) clearTimeout(this.planTimer);
    this.planTimer = undefined;
  }
}
