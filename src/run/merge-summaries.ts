// The parent plan (plan.md): the structured summaries of every finished instance merged into one
// document: per task and instance Done / In Progress / Blocked, key decisions with the instance
// they came from, the files read and modified with their owner, conflicts (one file modified by
// two instances, blocked items) and next steps. The coordinator rewrites it after each instance
// ends; dependent tasks with `context: summaries` get the part about the tasks they need.
import type { StructuredSummary } from '../session/parse-summary.js';

/** `not_picked`: an attempt (attempts:) that ended while another attempt of its instance landed. */
export type PlanInstanceStatus = 'pending' | 'running' | 'done' | 'failed' | 'cancelled' | 'skipped' | 'not_picked';

export interface PlanInstance {
  /** Instance id (`task` or `task.key`). */
  id: string;
  status: PlanInstanceStatus;
  attempt?: number;
  summary?: StructuredSummary;
  /** Failure class and message of a failed instance, or why it was skipped. */
  failure?: string;
  error?: string;
  /** Display paths (relative to the recipe folder where possible). */
  modifiedFiles: string[];
  readFiles: string[];
  patchFile?: string;
  branch?: string;
  applied?: boolean;
  /** Short output (text or JSON) when there is no summary. */
  outputPreview?: string;
}

export interface PlanTask {
  id: string;
  description?: string;
  needs: string[];
  /** Instances known so far (a dynamic fan-out may have none before it is expanded). */
  instances: PlanInstance[];
}

export interface PlanInput {
  name: string;
  description?: string;
  /** Run status line, e.g. "running" or "succeeded". */
  status?: string;
  tasks: PlanTask[];
}

const STATUS_WORD: Record<PlanInstanceStatus, string> = {
  pending: 'pending',
  running: 'running',
  done: 'done',
  failed: 'failed',
  cancelled: 'cancelled',
  skipped: 'skipped',
  not_picked: 'not picked',
};

/** A goal as the plan shows it: without the merged context a dependent task was started with. */
function goalText(goal: string): string {
  return goal.replace(/<merged-plan[\s\S]*?(<\/merged-plan>|$)/g, '').trim();
}

/**
 * Next steps an extractive (offline) summary writes for any unfinished conversation; they say
 * nothing about the task, so the merged plan leaves them out.
 */
const BOILERPLATE_STEP = /^Continue from the most recent messages/i;

function oneLine(text: string, max = 300): string {
  const flat = text.replace(/\s+/g, ' ').trim();
  return flat.length > max ? `${flat.slice(0, max - 1)}…` : flat;
}

function countBy(instances: readonly PlanInstance[]): string {
  const counts = new Map<PlanInstanceStatus, number>();
  for (const i of instances) counts.set(i.status, (counts.get(i.status) ?? 0) + 1);
  if (instances.length === 0) return 'not expanded yet';
  return [...counts.entries()].map(([s, n]) => `${n} ${STATUS_WORD[s]}`).join(', ');
}

function instanceHeading(i: PlanInstance): string {
  let line = `#### ${i.id} — ${STATUS_WORD[i.status]}`;
  if (i.attempt && i.attempt > 1) line += ` (attempt ${i.attempt})`;
  if (i.status === 'failed' || i.status === 'skipped' || i.status === 'not_picked')
    line += i.failure ? ` [${i.failure}]` : '';
  return line;
}

function progressLines(i: PlanInstance): string[] {
  const out: string[] = [];
  const s = i.summary;
  if (s?.goal && goalText(s.goal)) out.push(`Goal: ${oneLine(goalText(s.goal))}`);
  const list = (label: string, items: readonly string[] | undefined) => {
    if (items?.length) out.push(`- ${label}:`, ...items.map((x) => `  - ${oneLine(x)}`));
  };
  list('Done', s?.done);
  list('In Progress', s?.inProgress);
  list('Blocked', s?.blocked);
  if (i.error) out.push(`- Error: ${oneLine(i.error)}`);
  if (!s && i.outputPreview) out.push(`- Output: ${oneLine(i.outputPreview)}`);
  if (i.patchFile)
    out.push(
      `- Patch: ${i.patchFile}${i.branch ? ` (on branch ${i.branch})` : i.applied ? ' (applied to the checkout)' : ''}`,
    );
  return out;
}

function taskSection(t: PlanTask): string[] {
  const out = [`### ${t.id} (${countBy(t.instances)})`];
  if (t.description) out.push(t.description.trim());
  if (t.needs.length) out.push(`Needs: ${t.needs.join(', ')}`);
  for (const i of t.instances) {
    if (i.status === 'pending') continue;
    out.push('', instanceHeading(i), ...progressLines(i));
  }
  return out;
}

interface FileOwners {
  modified: Map<string, string[]>;
  read: Map<string, string[]>;
}

/**
 * Who modified and who read each file. Owners are collected in sets (in first-seen order): a
 * file every instance of a wide fan-out reads (a shared README) made a list lookup per owner
 * O(N^2) per plan.md.
 */
function fileOwners(tasks: readonly PlanTask[]): FileOwners {
  const modified = new Map<string, Set<string>>();
  const read = new Map<string, Set<string>>();
  const add = (m: Map<string, Set<string>>, file: string, owner: string) => {
    let owners = m.get(file);
    if (!owners) {
      owners = new Set();
      m.set(file, owners);
    }
    owners.add(owner);
  };
  for (const t of tasks)
    for (const i of t.instances) {
      for (const f of i.modifiedFiles) add(modified, f, i.id);
      for (const f of i.readFiles) add(read, f, i.id);
    }
  for (const f of modified.keys()) read.delete(f);
  const lists = (m: Map<string, Set<string>>) => new Map<string, string[]>([...m].map(([f, o]) => [f, [...o]]));
  return { modified: lists(modified), read: lists(read) };
}

function sorted<T>(m: Map<string, T>): [string, T][] {
  return [...m.entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
}

/** The whole plan.md. Deterministic for the same input (no clock), so it can be diffed. */
export function renderPlan(input: PlanInput): string {
  const all = input.tasks.flatMap((t) => t.instances);
  const out: string[] = [`# Plan: ${input.name}`, ''];
  if (input.description) out.push(input.description.trim(), '');
  out.push(
    `Status: ${input.status ?? 'running'} — ${countBy(all)} across ${input.tasks.length} task${input.tasks.length === 1 ? '' : 's'}`,
    '',
  );

  out.push('## Goal', '');
  const goals = all
    .filter((i) => i.summary?.goal && goalText(i.summary.goal))
    .map((i) => `- ${i.id}: ${oneLine(goalText(i.summary!.goal), 200)}`);
  out.push(input.description ? oneLine(input.description) : input.name);
  if (goals.length) out.push('', ...goals);

  out.push('', '## Tasks', '');
  for (const t of input.tasks) out.push(...taskSection(t), '');

  const decisions = all.flatMap((i) =>
    (i.summary?.keyDecisions ?? []).map(
      (d) => `- **${oneLine(d.decision, 150)}**${d.rationale ? `: ${oneLine(d.rationale)}` : ''} _(${i.id})_`,
    ),
  );
  out.push('## Key Decisions', '', ...(decisions.length ? decisions : ['(none)']), '');

  const owners = fileOwners(input.tasks);
  out.push('## Files', '', '### Modified', '');
  out.push(
    ...(owners.modified.size ? sorted(owners.modified).map(([f, o]) => `- ${f} — ${o.join(', ')}`) : ['(none)']),
  );
  out.push('', '### Read', '');
  out.push(...(owners.read.size ? sorted(owners.read).map(([f, o]) => `- ${f} — ${o.join(', ')}`) : ['(none)']), '');

  const conflicts: string[] = [];
  for (const [f, o] of sorted(owners.modified))
    if (o.length > 1) conflicts.push(`- ${f} was modified by ${o.join(' and ')}`);
  for (const i of all) for (const b of i.summary?.blocked ?? []) conflicts.push(`- Blocked in ${i.id}: ${oneLine(b)}`);
  for (const i of all)
    if (i.status === 'failed')
      conflicts.push(
        `- ${i.id} failed${i.failure ? ` (${i.failure})` : ''}${i.error ? `: ${oneLine(i.error, 200)}` : ''}`,
      );
  for (const i of all)
    if (i.status === 'cancelled') conflicts.push(`- ${i.id} was ${oneLine(i.error ?? 'cancelled', 200)}`);
  out.push('## Conflicts', '', ...(conflicts.length ? conflicts : ['(none)']), '');

  const next: string[] = [];
  for (const i of all)
    for (const s of i.summary?.nextSteps ?? [])
      if (!BOILERPLATE_STEP.test(s)) next.push(`${next.length + 1}. (${i.id}) ${oneLine(s)}`);
  out.push('## Next Steps', '', ...(next.length ? next : ['(none)']), '');
  return out.join('\n');
}

/**
 * What a dependent task with `context: summaries` is told about the tasks it needs: the same
 * merged view, limited to those tasks, and without the instances that never ran.
 */
export function renderNeedsContext(input: PlanInput, needs: readonly string[]): string {
  const tasks = input.tasks.filter((t) => needs.includes(t.id));
  if (tasks.length === 0) return '';
  const plan = renderPlan({
    name: input.name,
    description: input.description,
    status: 'context for the next task',
    tasks,
  });
  // The title and status line are for the file, not for the agent.
  const body = plan.slice(plan.indexOf('## Goal')).trim();
  return `<merged-plan tasks="${needs.join(',')}">\nWhat the tasks this one depends on did (merged from their summaries):\n\n${body}\n</merged-plan>`;
}
