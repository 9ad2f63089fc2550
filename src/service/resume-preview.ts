// `orchestrate resume <run> --dry-run` as data: what a resume would do, read from the run folder
// without running anything, taking the run's lease or writing a byte there. Which instances are
// done and kept (and which stay cancelled), which would run (again, or for the first time), the
// spend so far against the budget, and the overlaps among those that will run: pairs whose
// earlier work (their patches in patches/, their worktrees: orchestrator/workspace/earlier-changes.ts)
// touched the same files, and pairs whose `writes:` overlap as in a recipe's dry run. Each pair says
// what the resume does with it, as the scheduler will: one after another, or in parallel through
// the merge train (unless the task asks `serialize: overlapping`).
//
//   previewResume(request, where) -> { ok: true, preview } | { ok: false, code, message | problems }
import { resolve } from 'node:path';
import { formatTokens } from '../display/format-units.js';
import { restoredInstances } from '../orchestrator/execution/session-start.js';
import { resumeRunFolder } from '../orchestrator/run-recipe.js';
import { earlierChanges } from '../orchestrator/workspace/earlier-changes.js';
import { buildPlan, type LoadedRecipe, type LoadOptions, loadRecipe, type RecipeProblem } from '../recipe/index.js';
import { foldEvents, resumableInstances, type RunState } from '../run/run-fold.js';
import { describeHolder, liveLeaseHolder } from '../run/run-lease.js';
import { runRootOf } from '../run/run-paths.js';
import { pathFromRoot } from '../run/run-state.js';
import { readRunLog } from '../run/run-store.js';
import { loadTrustedRecipe } from '../run/trusted-recipe.js';
import type { ServiceEnv } from './dry-run.js';
import { type ResumeRequest, resumeOverridesOf } from './run-request.js';
import { trainsInParallel, writeOverlaps } from './write-overlaps.js';

/** An instance the resume keeps as it is. */
export interface KeptInstance {
  key: string;
  status: 'done' | 'cancelled' | 'failed';
}

/** An instance the resume would run: again (its status before), or for the first time. */
export interface RunAgainInstance {
  key: string;
  /** Its status in the log (failed, interrupted ones show as running or retrying), or `not started`. */
  was: string;
  /** Files its earlier attempts changed (its patch, its worktree), relative to the run's root. */
  earlierFiles: string[];
}

/** Two instances that will run and may touch the same files, and what the resume does with them. */
export interface ResumeOverlap {
  a: string;
  b: string;
  /** `patches`: their earlier work touched `files`; `writes`: their writes: globs overlap. */
  from: 'patches' | 'writes';
  files?: string[];
  how: 'parallel' | 'serialized';
}

export interface ResumePreview {
  runId: string;
  dir: string;
  /** The run's status now (as `show` folds it). */
  status: string;
  kept: KeptInstance[];
  runs: RunAgainInstance[];
  spent: { usd: number; tokens: number };
  budget: { usd?: number; tokens?: number };
  overlaps: ResumeOverlap[];
  /** `--retry` keys that reopen nothing (the resume would log them refused, with why). */
  retryProblems: string[];
  /** The run's live coordinator, when one holds it now: a resume is refused until it ends. */
  runningNow?: string;
}

export type ResumePreviewResult =
  | { ok: true; preview: ResumePreview }
  | { ok: false; code: 'usage'; message: string }
  | { ok: false; code: 'problems'; problems: readonly RecipeProblem[] };

/** The recipe as the resume would load it (captured copies; live files with reloadRecipe, never captured here). */
function recipeOf(
  dir: string,
  fold: RunState,
  request: ResumeRequest,
  where: ServiceEnv,
): { ok: true; recipe: LoadedRecipe } | Extract<ResumePreviewResult, { ok: false }> {
  const start = fold.start!;
  const load: LoadOptions = {
    cwd: where.cwd,
    env: where.env,
    set: Object.entries(start.inputs).map(([k, v]) => `${k}=${typeof v === 'string' ? v : JSON.stringify(v)}`),
    ...((fold.overrides ?? start.overrides ?? {}) as LoadOptions),
    ...resumeOverridesOf(request),
  };
  const loaded =
    request.reloadRecipe === true ? loadRecipe(start.recipe, load) : loadTrustedRecipe(dir, start.recipe, load);
  if (loaded.ok) return { ok: true, recipe: loaded.recipe };
  if (loaded.problems) return { ok: false, code: 'problems', problems: loaded.problems };
  const message = 'message' in loaded ? loaded.message : undefined;
  return { ok: false, code: 'usage', message: message ?? `the recipe of run ${start.runId} cannot be loaded` };
}

/** What `orchestrate resume <run>` would do, read without touching the run folder. */
export async function previewResume(request: ResumeRequest, where: ServiceEnv): Promise<ResumePreviewResult> {
  const found = resumeRunFolder(request.run, where.cwd, request.runsDir);
  if ('message' in found) return { ok: false, code: 'usage', message: found.message };
  const { dir } = found;
  const fold = foldEvents(readRunLog(resolve(dir, 'run.jsonl')).events);
  const start = fold.start;
  if (!start) return { ok: false, code: 'usage', message: `${dir} has no run_start event; it cannot be resumed.` };
  if (fold.lastEndStatus === 'succeeded')
    return { ok: false, code: 'usage', message: `run ${start.runId} already succeeded; there is nothing to resume.` };
  const loaded = recipeOf(dir, fold, request, where);
  if (!loaded.ok) return loaded;
  const { recipe } = loaded;
  const root = runRootOf(dir, start) ?? recipe.dir;
  const tasks = new Map(recipe.tasks.map((t) => [t.id, t]));

  // The instances as the coordinator restores them (session-start.ts), then the --retry keys.
  const restored = restoredInstances(fold, (task) => tasks.get(task)?.attempts !== undefined).filter((i) =>
    tasks.has(i.task),
  );
  const byId = new Map(restored.map((i) => [i.id, i]));
  const statusBefore = new Map(resumableInstances(fold).map((r) => [r.key, r.status]));
  const retryProblems: string[] = [];
  for (const key of request.retry ?? []) {
    const inst = byId.get(key);
    if (inst?.status === 'cancelled') inst.status = 'pending';
    else
      retryProblems.push(
        !inst
          ? `run ${start.runId} has no instance "${key}" in its log`
          : inst.status === 'done'
            ? `${key} is done; nothing to retry`
            : `${key} was not cancelled; a resume runs it again anyway`,
      );
  }
  const kept: KeptInstance[] = [];
  const runs: (RunAgainInstance & { abs: string[] })[] = [];
  for (const inst of restored) {
    if (inst.status === 'done' || inst.status === 'cancelled' || inst.status === 'failed') {
      kept.push({ key: inst.id, status: inst.status });
      continue;
    }
    const abs = await earlierChanges(dir, inst);
    const was = statusBefore.get(inst.id) ?? 'pending';
    runs.push({ key: inst.id, was, earlierFiles: abs.map((f) => pathFromRoot(root, f)), abs });
  }
  // Instances of the plan the log has no event of start afresh.
  const plan = buildPlan(recipe, { env: where.env });
  if (plan.ok)
    for (const t of plan.plan.tasks)
      for (const seed of t.instances)
        if (!byId.has(seed.id)) runs.push({ key: seed.id, was: 'not started', earlierFiles: [], abs: [] });

  const taskOf = (key: string) => tasks.get(byId.get(key)?.task ?? '') ?? planTaskOf(recipe, plan, key);
  const overlaps: ResumeOverlap[] = [];
  for (let i = 0; i < runs.length; i++)
    for (let j = i + 1; j < runs.length; j++) {
      const x = runs[i]!;
      const y = runs[j]!;
      const shared = x.abs.filter((f) => y.abs.includes(f));
      if (!shared.length) continue;
      const tx = taskOf(x.key);
      const ty = taskOf(y.key);
      const parallel = (tx && trainsInParallel(tx)) || (ty && trainsInParallel(ty));
      overlaps.push({
        a: x.key,
        b: y.key,
        from: 'patches',
        files: shared.map((f) => pathFromRoot(root, f)),
        how: parallel ? 'parallel' : 'serialized',
      });
    }
  const running = new Set(runs.map((r) => r.key));
  if (plan.ok)
    for (const o of writeOverlaps(recipe, plan.plan, where.env))
      if (running.has(o.a) && running.has(o.b)) overlaps.push({ ...o, from: 'writes' });

  const holder = liveLeaseHolder(dir);
  return {
    ok: true,
    preview: {
      ...(holder ? { runningNow: describeHolder(holder) } : {}),
      runId: start.runId,
      dir,
      status: fold.status,
      kept,
      runs: runs.map(({ abs: _abs, ...r }) => r),
      spent: { usd: fold.spend.cost, tokens: fold.spend.totalTokens },
      budget: {
        ...(recipe.budget.usd !== undefined ? { usd: recipe.budget.usd } : {}),
        ...(recipe.budget.tokens !== undefined ? { tokens: recipe.budget.tokens } : {}),
      },
      overlaps,
      retryProblems,
    },
  };
}

/** The task of a plan instance the log does not know yet. */
function planTaskOf(recipe: LoadedRecipe, plan: ReturnType<typeof buildPlan>, key: string) {
  if (!plan.ok) return undefined;
  const t = plan.plan.tasks.find((p) => p.instances.some((s) => s.id === key));
  return t ? recipe.tasks.find((r) => r.id === t.id) : undefined;
}

/** One line per overlapping pair, as the human output words it. */
export function resumeOverlapText(o: ResumeOverlap): string {
  const what = o.from === 'patches' ? `their earlier work touched ${o.files!.join(', ')}` : 'their writes: overlap';
  return o.how === 'parallel'
    ? `${o.a} and ${o.b}: ${what}; they run in parallel and the merge train merges their work (serialize: overlapping runs them one after another)`
    : `${o.a} and ${o.b}: ${what}; they run one after another`;
}

const money = (usd: number): string => `$${usd.toFixed(4)}`;

/**
 * How an instance's status in the log reads in the preview: with no coordinator holding the run,
 * nothing is at work, so a "running" or "retrying" instance was cut off by the run's end.
 */
function wasText(was: string, live: boolean): string {
  if (live) return was;
  if (was === 'running') return 'interrupted';
  if (was === 'retrying') return 'interrupted before its retry';
  return was;
}

/** The human form of a preview (what `resume --dry-run` prints). */
export function resumePreviewText(p: ResumePreview): string {
  const lines = [`Resume of run ${p.runId} (${p.status}): a dry run, nothing was started or written.`];
  if (p.runningNow)
    lines.push(`  the run is running now (its coordinator is ${p.runningNow}): a resume is refused until it ends`);
  const done = p.kept.filter((k) => k.status === 'done').map((k) => k.key);
  const cancelled = p.kept.filter((k) => k.status === 'cancelled').map((k) => k.key);
  const failed = p.kept.filter((k) => k.status === 'failed').map((k) => k.key);
  lines.push(`  kept (done, not run again): ${done.join(', ') || '(none)'}`);
  if (cancelled.length) lines.push(`  stay cancelled (--retry KEY runs one again): ${cancelled.join(', ')}`);
  if (failed.length) lines.push(`  failed attempts kept for their pick: ${failed.join(', ')}`);
  if (p.runs.length === 0) lines.push('  would run: (none)');
  else {
    lines.push('  would run:');
    for (const r of p.runs)
      lines.push(
        `    ${r.key}  (${wasText(r.was, p.runningNow !== undefined)})${r.earlierFiles.length ? `  earlier work: ${r.earlierFiles.join(', ')}` : ''}`,
      );
  }
  const budget = [
    p.budget.usd !== undefined ? `${money(p.budget.usd)}` : undefined,
    p.budget.tokens !== undefined ? `${formatTokens(p.budget.tokens)} tokens` : undefined,
  ].filter(Boolean);
  lines.push(
    `  spent so far: ${money(p.spent.usd)}, ${formatTokens(p.spent.tokens)} tokens${budget.length ? ` of a budget of ${budget.join(' and ')}` : ' (no budget)'}`,
  );
  if (p.overlaps.length) {
    lines.push('  overlaps:');
    for (const o of p.overlaps) lines.push(`    ${resumeOverlapText(o)}`);
  } else lines.push('  overlaps: none');
  for (const r of p.retryProblems) lines.push(`  --retry: ${r}`);
  return `${lines.join('\n')}\n`;
}
