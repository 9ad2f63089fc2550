// What a run leaves on stdout when it ends: the status of every task and instance (large
// fan-outs collapse to counts plus the instances that did not succeed), short outputs, usage and
// cost against the budget, and where the merged plan and the report are.
import { join } from 'node:path';
import { excusedJudge, notPickedAttempt, workOfAttempt } from '../run/attempt-pick-record.js';
import { cacheText } from './cache-text.js';
import { DISPLAY_DEFAULTS } from './defaults.js';
import { formatCost, formatDuration, formatTokens, withoutClassPrefix } from './format-units.js';
import {
  controlsOf,
  countStatuses,
  instancesInTaskOrder,
  instanceUsage,
  pairOf,
  runUsage,
  type InstanceState,
  type RunState,
} from '../run/run-fold.js';
import {
  clip,
  fitToWidth,
  makePainter,
  oneLine,
  padStartToWidth,
  truncateToWidth,
  type Painter,
} from './terminal-text.js';

export interface FinalSummaryOptions {
  budgetUsd?: number;
  planFile?: string;
  resultFile?: string;
  /** The report's path when it was written; otherwise the summary says how to write it. */
  reportFile?: string;
  /** The run folder: an unfinished run gets an `orchestrate resume <folder>` line. */
  runDir?: string;
  /** How many changesets the run's changesets.json holds (a task publishes): the summary says how to publish them. */
  changesets?: number;
  /** No resume line: another coordinator took the run over and runs it now. */
  noResume?: boolean;
  painter?: Painter;
  /** Terminal width: lines are cut to it (omit for pipes and files, where nothing wraps). */
  width?: number;
}

/** Fan-outs with more instances than this show counts and only the ones that did not succeed. */
const MAX_ROWS_PER_TASK = 10;

/** A one-line preview of an instance's output: text as is, structured output as JSON. */
export function outputPreview(output: unknown, max: number = DISPLAY_DEFAULTS.outputPreviewChars): string {
  if (output === undefined || output === null) return '';
  const text = typeof output === 'string' ? output : JSON.stringify(output);
  return clip(oneLine(text ?? ''), max);
}

/** Wide enough for every instance status (`cancelled` is the longest). */
const STATUS_WIDTH = 9;

function statusWord(inst: InstanceState, p: Painter): string {
  const w = fitToWidth(inst.status, STATUS_WIDTH);
  if (inst.status === 'done') return p.paint('green', w);
  if (inst.status === 'failed') return p.paint('red', w);
  if (inst.status === 'skipped') return p.paint('dim', w);
  if (inst.status === 'cancelled') return p.paint('magenta', w);
  return p.paint('yellow', w);
}

function detail(inst: InstanceState): string {
  if (inst.status === 'done') return outputPreview(inst.output ?? inst.text);
  if (inst.status === 'failed')
    return `${inst.failure ?? 'error'}: ${clip(oneLine(withoutClassPrefix(inst.failure, inst.error ?? '')), DISPLAY_DEFAULTS.errorPreviewChars)}`;
  if (inst.status === 'skipped') return clip(oneLine(inst.skipReason ?? ''), DISPLAY_DEFAULTS.errorPreviewChars);
  if (inst.status === 'cancelled')
    return clip(
      oneLine(withoutClassPrefix(inst.failure, inst.error ?? 'cancelled')),
      DISPLAY_DEFAULTS.errorPreviewChars,
    );
  if (inst.status === 'retrying') return `interrupted while retrying after ${inst.failure ?? 'a failure'}`;
  return inst.status === 'queued' || inst.status === 'pending' ? 'never started' : 'interrupted';
}

/** attempts: an attempt that lost to one that landed is no failure: why it did not land, and where its work is. */
function notPickedDetail(state: RunState, inst: InstanceState): string | undefined {
  if (!notPickedAttempt(state.picks, inst.key)) return undefined;
  const w = workOfAttempt(state.picks, inst.key, () => ({ patchFile: inst.patchFile, status: inst.status }));
  const why = w?.notLanded ?? 'another attempt landed';
  return `${why.startsWith('not picked') ? why : `not picked: ${why}`}${w?.patchFile ? `; its work: ${w.patchFile}` : ''}`;
}

function row(state: RunState, inst: InstanceState, p: Painter): string {
  const u = instanceUsage(inst);
  const attempts = inst.attempts.filter((a) => a.startTs !== undefined).length;
  const nums = `${padStartToWidth(`${u.turns ?? 0}t`, 4)} ${padStartToWidth(formatTokens(u.totalTokens), 9)} tok ${padStartToWidth(formatCost(u.cost), 8)}`;
  const retries = attempts > 1 ? ` (${attempts} attempts)` : '';
  const lost =
    notPickedDetail(state, inst) ??
    (excusedJudge(state.picks, inst) ? `no verdict, the verify rule picked: ${detail(inst)}` : undefined);
  const status = lost ? p.paint('dim', fitToWidth(inst.status, STATUS_WIDTH)) : statusWord(inst, p);
  return `  ${fitToWidth(inst.label, DISPLAY_DEFAULTS.labelWidth)} ${status} ${p.paint('dim', nums)}  ${lost ?? detail(inst)}${retries}`;
}

export function formatFinalSummary(state: RunState, options: FinalSummaryOptions = {}): string {
  const p = options.painter ?? makePainter(false);
  const out: string[] = [];
  const dur = state.durationMs ?? (state.endTs ?? state.lastTs) - state.startTs;
  const status = state.status === 'running' ? 'interrupted' : state.status.replace('_', ' ');
  const colour = state.status === 'succeeded' ? 'green' : state.status === 'partial' ? 'yellow' : 'red';
  out.push(
    `run ${state.runId} (${state.name || 'run'}): ${p.paint(['bold', colour], status)} in ${formatDuration(Math.max(0, dur))}`,
  );

  const byTask = new Map<string, InstanceState[]>();
  for (const t of state.tasks.keys()) byTask.set(t, []);
  for (const inst of state.instances.values()) {
    const list = byTask.get(inst.task) ?? [];
    list.push(inst);
    byTask.set(inst.task, list);
  }
  for (const [task, list] of byTask) {
    const t = state.tasks.get(task);
    if (list.length === 0) {
      out.push(
        `  ${fitToWidth(task, DISPLAY_DEFAULTS.labelWidth)} ${p.paint('dim', t?.dynamic ? 'not expanded (its input never arrived)' : 'no instances')}`,
      );
      continue;
    }
    if (list.length > MAX_ROWS_PER_TASK) {
      const counts = new Map<string, number>();
      for (const i of list) counts.set(i.status, (counts.get(i.status) ?? 0) + 1);
      const text = [...counts].map(([s, n]) => `${n} ${s}`).join(', ');
      out.push(`  ${task}: ${list.length} instances (${text})`);
      for (const i of list) if (i.status !== 'done') out.push(row(state, i, p));
      continue;
    }
    for (const i of list) out.push(row(state, i, p));
  }

  const c = countStatuses(state);
  const u = spentOf(state);
  const parts = [`${c.done} done`];
  if (c.failed) parts.push(`${c.failed} failed`);
  if (c.cancelled) parts.push(`${c.cancelled} cancelled`);
  if (c.notPicked) parts.push(`${c.notPicked} not picked`);
  if (c.skipped) parts.push(`${c.skipped} skipped`);
  if (c.running + c.queued) parts.push(`${c.running + c.queued} unfinished`);
  const budget = options.budgetUsd ?? state.budgetUsd;
  const money = budget ? `${formatCost(u.cost)} of ${formatCost(budget)} budget` : formatCost(u.cost);
  out.push(
    `${parts.join(', ')} · ${formatTokens(u.totalTokens)} tokens (${formatTokens(u.input)} in, ${formatTokens(u.output)} out, ${formatTokens(u.cacheRead)} cache read) · ${money}`,
  );
  const cache = cacheText(u);
  if (cache) out.push(cache);
  if (state.status === 'partial') out.push(p.paint('yellow', partialLine(state)));
  if (state.budgetExhausted) out.push(p.paint('red', `budget exhausted: ${oneLine(state.budgetExhausted)}`));
  // Where worktree work landed (merge: branch / apply): what the user looks at next.
  const branches = [...state.instances.values()].filter((i) => i.branch);
  if (branches.length === 1) out.push(`branch: ${branches[0]!.branch}`);
  else if (branches.length > 1)
    out.push(`branches: ${branches.length}, listed by git branch --list 'orchestrate/${state.runId}/*'`);
  const applied = [...state.instances.values()].filter((i) => i.applied).length;
  if (applied)
    out.push(
      `applied: the work of ${applied} instance${applied === 1 ? '' : 's'} is in the checkout (git diff shows it)`,
    );
  const kept = patchesOnly(state);
  const inRunDir = (f: string) => (options.runDir ? join(options.runDir, f) : f);
  if (kept.length === 1)
    out.push(
      `patch:  ${inRunDir(kept[0]!.patchFile!)} (merge: patch: your checkout is untouched; git apply it in its repository)`,
    );
  else if (kept.length > 1)
    out.push(`patches: ${kept.length} in ${inRunDir('patches')} (merge: patch: your checkout is untouched)`);
  if (options.planFile) out.push(`plan:   ${options.planFile}`);
  if (options.resultFile) out.push(`result: ${options.resultFile}`);
  const target = options.runDir ?? state.runId;
  out.push(`report: ${options.reportFile ?? `orchestrate report ${target}`}`);
  const publish = publishLine(state, target, options.changesets);
  if (publish) out.push(publish);
  if (state.status !== 'succeeded' && !options.noResume) out.push(`resume: ${resumeCommand(state, target)}`);
  const width = options.width;
  return `${(width ? out.map((l) => truncateToWidth(l, width - 1)) : out).join('\n')}\n`;
}

/**
 * Worktree instances whose work is only a patch in the run folder (merge: patch, the default): it
 * went to no branch and not into the checkout, so the summary says where it is. Attempts that
 * lost their pick are left out (their rows name their patches).
 */
function patchesOnly(state: RunState): InstanceState[] {
  return [...state.instances.values()].filter(
    (i) =>
      i.status === 'done' &&
      i.git?.worktree &&
      i.patchFile &&
      !i.branch &&
      !i.applied &&
      !notPickedAttempt(state.picks, i.key),
  );
}

/**
 * What became of the run's changesets (campaigns): without a publish gate the run pushes nothing,
 * so the next command; with one, what its answers did.
 */
function publishLine(state: RunState, target: string, changesets: number | undefined): string | undefined {
  if (changesets === undefined) return undefined;
  if (changesets === 0) return 'publish: no changesets (no repository changed)';
  const preview = `orchestrate publish ${target} previews the ${changesets === 1 ? 'changeset' : `${changesets} changesets`}`;
  const gates = [...state.publishGates.values()];
  if (gates.length === 0) return `publish: ${preview}; --apply pushes`;
  if (gates.some((g) => g.state === 'waiting'))
    return `publish: its publish gate waits for an answer: orchestrate approve|reject ${target} --publish`;
  if (gates.every((g) => g.state === 'rejected'))
    return `publish: its publish gate was rejected, nothing was pushed; ${preview} (orchestrate approve ${target} --publish, then publish --apply, pushes them)`;
  return `publish: its publish gate was approved and the run published; orchestrate status ${target} tracks the changesets`;
}

/** The instances a user cancelled, in task order. */
function cancelledInstances(state: RunState): InstanceState[] {
  return instancesInTaskOrder(state).filter((i) => i.status === 'cancelled' && !pairOf(state, i));
}

/** Who cancelled an instance: the accepted cancel's `by` (a log without that control event names nobody). */
function cancelledBy(state: RunState, inst: InstanceState): string {
  const accepted = controlsOf(state, inst).filter((c) => c.action === 'cancel' && c.ok);
  const by = accepted.at(-1)?.by;
  return by ? ` (by ${oneLine(by)})` : '';
}

/** "partial: nothing failed; cancelled by a user: slow (by cancel (pid 4242, user ana))" */
export function partialLine(state: RunState): string {
  const list = cancelledInstances(state).map((i) => `${i.label}${cancelledBy(state, i)}`);
  return `partial: nothing failed; cancelled by a user: ${list.join(', ')}`;
}

/** How to go on: a partial run runs its cancelled instances again only when named. */
/** What the run spent: the total its end recorded, or the sum of its calls when that is more. */
function spentOf(state: RunState) {
  const calls = runUsage(state);
  return state.endUsage && state.endUsage.totalTokens >= calls.totalTokens ? state.endUsage : calls;
}

function resumeCommand(state: RunState, target: string): string {
  if (state.status === 'budget_exhausted') {
    // A plain resume stops on the same budget: it needs a new total above what was spent.
    const u = spentOf(state);
    return `orchestrate resume ${target} --budget-usd N | --budget-tokens N (a total above what the run spent: ${formatCost(u.cost)}, ${formatTokens(u.totalTokens)} tokens)`;
  }
  if (state.status !== 'partial') return `orchestrate resume ${target}`;
  return `orchestrate resume ${target} ${cancelledInstances(state)
    .map((i) => `--retry ${i.key}`)
    .join(' ')} (runs the cancelled instances again)`;
}
