// What the HTML report shows, computed from a run folder: timeline rows (one bar per attempt,
// with permit waits), the task DAG in levels, usage per task. Open attempts of an interrupted
// run end at the last event in the log, marked "interrupted".
import type { UsageSummary } from '../../run/run-events.js';
import { addUsageSummary, zeroUsage } from '../../run/run-events.js';
import type { RunFolder } from '../run-folder.js';
import {
  attemptUsage,
  instanceUsage,
  instancesInTaskOrder,
  isFinished,
  pairOf,
  type InstanceState,
  type InstanceStatus,
  type RunState,
} from '../../run/run-fold.js';
import { notPickedAttempt } from '../../run/attempt-pick-record.js';

export interface TimelineBar {
  attempt: number;
  /** ms from the run's start. */
  start: number;
  end: number;
  outcome: 'done' | 'failed' | 'retry' | 'interrupted' | 'running';
  failure?: string;
  error?: string;
  tokens: number;
  cost: number;
  waits: { start: number; end: number; reason: string; denied: boolean }[];
}

export interface TimelineRow {
  label: string;
  task: string;
  status: InstanceStatus;
  /** ms from the run's start when first queued, for the faint queue segment before the first bar. */
  queued?: number;
  bars: TimelineBar[];
}

export interface TaskSummary {
  task: string;
  needs: string[];
  level: number;
  instances: number;
  done: number;
  failed: number;
  skipped: number;
  /** 'done' | 'failed' | 'skipped' | 'partial' | 'pending' for the DAG node colour. */
  status: 'done' | 'failed' | 'skipped' | 'partial' | 'pending';
  usage: UsageSummary;
}

export interface ReportData {
  runId: string;
  name: string;
  recipe: string;
  status: string;
  startTs: number;
  /** ms covered by the timeline. */
  span: number;
  rows: TimelineRow[];
  tasks: TaskSummary[];
  usage: UsageSummary;
}

/** Longest-path level of each task from the roots: a task sits one level right of its deepest need. */
export function taskLevels(tasks: { task: string; needs: string[] }[]): Map<string, number> {
  const byId = new Map(tasks.map((t) => [t.task, t]));
  const level = new Map<string, number>();
  const visiting = new Set<string>();
  const visit = (id: string): number => {
    const known = level.get(id);
    if (known !== undefined) return known;
    if (visiting.has(id)) return 0; // a cycle cannot pass validation; never loop on a damaged log
    visiting.add(id);
    const t = byId.get(id);
    const l = t && t.needs.length > 0 ? Math.max(...t.needs.map((n) => (byId.has(n) ? visit(n) + 1 : 0))) : 0;
    visiting.delete(id);
    level.set(id, l);
    return l;
  };
  for (const t of tasks) visit(t.task);
  return level;
}

function rowOf(inst: InstanceState, t0: number, tEnd: number): TimelineRow {
  const bars: TimelineBar[] = [];
  for (const a of inst.attempts) {
    if (a.startTs === undefined) continue;
    const end = a.endTs ?? tEnd;
    const u = attemptUsage(a);
    bars.push({
      attempt: a.attempt,
      start: a.startTs - t0,
      end: Math.max(a.startTs, end) - t0,
      outcome: a.endTs === undefined ? 'interrupted' : a.outcome === 'running' ? 'interrupted' : a.outcome,
      failure: a.failure,
      error: a.error,
      tokens: u.totalTokens,
      cost: u.cost,
      waits: a.waits.map((w) => ({
        start: w.start - t0,
        end: (w.end ?? end) - t0,
        reason: w.reason,
        denied: w.denied === true,
      })),
    });
  }
  const firstQueued = inst.attempts.find((a) => a.queuedTs !== undefined)?.queuedTs;
  return {
    label: inst.label,
    task: inst.task,
    status: inst.status,
    queued: firstQueued !== undefined ? firstQueued - t0 : undefined,
    bars,
  };
}

function taskStatus(list: InstanceState[]): TaskSummary['status'] {
  if (list.length === 0) return 'pending';
  if (list.some((i) => i.status === 'failed')) return 'failed';
  if (list.every((i) => i.status === 'done')) return 'done';
  if (list.every((i) => i.status === 'skipped')) return 'skipped';
  return list.some((i) => i.status === 'done') ? 'partial' : 'pending';
}

export function buildReportData(folder: RunFolder): ReportData {
  const s: RunState = folder.state;
  const t0 = s.startTs;
  const tEnd = s.endTs ?? s.lastTs;
  // Timeline rows in order of first start; instances that never ran go last, in task order.
  const rows = instancesInTaskOrder(s)
    .map((i) => rowOf(i, t0, tEnd))
    .map((row, i) => ({ row, i, first: row.bars[0]?.start ?? Infinity }))
    .sort((a, b) => a.first - b.first || a.i - b.i)
    .map((x) => x.row);
  const levels = taskLevels([...s.tasks.values()]);
  const tasks: TaskSummary[] = [...s.tasks.values()].map((t) => {
    // Pair members are parts of their pair's instance: counted and charged once, through it.
    const list = [...s.instances.values()].filter((i) => i.task === t.task && !pairOf(s, i));
    // attempts: the attempts that lost to one that landed are no failures: its counts leave them
    // out (what they spent stays in the task's usage).
    const counted = list.filter((i) => !(isFinished(i) && notPickedAttempt(s.picks, i.key)));
    return {
      task: t.task,
      needs: t.needs,
      level: levels.get(t.task) ?? 0,
      instances: counted.length,
      done: counted.filter((i) => i.status === 'done').length,
      failed: counted.filter((i) => i.status === 'failed').length,
      skipped: counted.filter((i) => i.status === 'skipped').length,
      status: taskStatus(counted),
      usage: list.reduce((sum, i) => addUsageSummary(sum, instanceUsage(i)), zeroUsage()),
    };
  });
  const usage = tasks.reduce((sum, t) => addUsageSummary(sum, t.usage), zeroUsage());
  // No run_end yet: running while a coordinator holds the run's lease, interrupted otherwise.
  const status = s.status === 'running' ? (folder.holder ? 'running' : 'interrupted') : s.status;
  return {
    runId: s.runId,
    name: s.name,
    recipe: s.recipe,
    status,
    startTs: t0,
    span: Math.max(1, tEnd - t0),
    rows,
    tasks,
    usage,
  };
}
