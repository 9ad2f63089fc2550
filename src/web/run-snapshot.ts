// What the web page shows of one run, as plain JSON built from the run's fold (run/run-fold.ts):
// the task DAG (tasks by depth, each with its instances' status), cost against the budget, the
// gates, the task board, recent control actions, a campaign's changesets with its burndown, and how
// work lands (the merge train, best-of-N picks: landing-snapshot.ts).
// The page renders this and nothing else, so the browser never folds events itself; and the
// conversation of one instance, cut the way `show --instance` cuts it.
import { join } from 'node:path';
import { DISPLAY_DEFAULTS } from '../display/defaults.js';
import { abbreviate, toolArgsText } from '../display/conversation-text.js';
import { changesetRows, mergedCount, type StatusRow } from '../display/changesets-text.js';
import { providerCostLines } from '../display/provider-costs.js';
import type { Conversation, ConversationItem } from '../display/session-conversation.js';
import { burndown, readChangesets, readObservations } from '../run/changesets.js';
import {
  countStatuses,
  currentToolText,
  instanceUsage,
  instancesInTaskOrder,
  isFinished,
  type InstanceState,
  type RunState,
  runUsage,
  type StatusCounts,
} from '../run/run-fold.js';
import { attemptFacts } from '../run/run-queries.js';
import { notPickedAttempt } from '../run/attempt-pick-record.js';
import type { ApprovalRecord } from '../run/approval-record.js';
import type { BoardItem } from '../run/board-record.js';
import type { ControlRecord } from '../run/control-record.js';
import { liveLeaseHolder } from '../run/run-lease.js';
import { type PickView, pickViews, type TrainView, trainViews } from './landing-snapshot.js';

export interface InstanceView {
  key: string;
  label: string;
  task: string;
  status: string;
  attempt: number;
  /** What it does now: a running tool, responding, waiting for a permit… */
  doing?: string;
  cost: number;
  tokens: number;
  turns: number;
  toolCalls: number;
  failure?: string;
  error?: string;
  workers?: string[];
  /** Waiting at its task's approval gate. */
  gated: boolean;
  /** Every attempt as it started and ended (retries, with why). */
  attempts: { attempt: number; outcome: string; failure?: string; startTs?: number; endTs?: number }[];
  /** Where its work landed: a branch (merge: branch), applied to the checkout, or a patch file (its full path). */
  landed?: string;
  /** attempts: it ended while another attempt of its instance was picked and landed (no failure). */
  notPicked?: boolean;
  /**
   * The run is over (or nobody holds it) and this instance never finished: it is not at work, as
   * the terminal's run view says it. `status` stays the fold's (the last it reached).
   */
  stopped?: 'interrupted' | 'never started';
}

export interface TaskView {
  id: string;
  needs: string[];
  /** Depth in the DAG: 0 for tasks that need nothing. */
  level: number;
  /** Keys of its instances (none yet: not expanded). */
  instances: string[];
}

export interface GateView {
  /**
   * `task`: a task's approve:; `publish`: the run's publish gate of that task; `follow_up`: the
   * gate before follow-up round `round` of `instance` pushes (publish.follow_up.approve).
   */
  kind: 'task' | 'publish' | 'follow_up';
  task: string;
  /** The instance waiting (task and follow-up gates). */
  instance?: string;
  /** The follow-up round (follow-up gates). */
  round?: number;
  prompt: string;
  state: string;
  deadline?: number;
  onTimeout: string;
  by?: string;
  via?: string;
  note?: string;
}

export interface ChangesetsView {
  rows: StatusRow[];
  total: number;
  merged: number;
  burndown: { ts: number; merged: number; open: number }[];
  /** Why changesets.json could not be read. */
  error?: string;
  /** Changesets not pushed yet: the command that previews (and with --apply, pushes) them, as the run's summary says it. */
  publish?: string;
}

export interface RunSnapshot {
  runId: string;
  /** The run folder (its plan.md, result.json, patches/), as `show` names it. */
  dir: string;
  name: string;
  recipe: string;
  status: string;
  startTs: number;
  endTs?: number;
  durationMs?: number;
  cost: number;
  tokens: number;
  budgetUsd?: number;
  budgetExhausted?: string;
  providerLines: string[];
  counts: StatusCounts;
  /** The run is over (or nobody holds it): its running and queued instances, which will not go on by themselves. */
  unfinished?: number;
  /** Why actions cannot work now; absent when a coordinator on this host answers. */
  readOnly?: string;
  /** Nobody holds the run and it has not succeeded: `orchestrate resume` (or the page) continues it. */
  resumable: boolean;
  tasks: TaskView[];
  instances: InstanceView[];
  gates: GateView[];
  board: BoardItem[];
  controls: ControlRecord[];
  changesets?: ChangesetsView;
  /** The merge train of each repository (`land: train`); empty without one. */
  trains: TrainView[];
  /** The pick of each instance's attempts (`attempts:`), once made. */
  picks: PickView[];
  eventCount: number;
}

/** Depth of each task: one more than the deepest task it needs. */
function levels(state: RunState): Map<string, number> {
  const out = new Map<string, number>();
  const visit = (id: string, seen: Set<string>): number => {
    const known = out.get(id);
    if (known !== undefined) return known;
    const t = state.tasks.get(id);
    if (!t || seen.has(id)) return 0;
    seen.add(id);
    const level = t.needs.reduce((deepest, n) => Math.max(deepest, visit(n, seen) + 1), 0);
    out.set(id, level);
    return level;
  };
  for (const id of state.tasks.keys()) visit(id, new Set());
  return out;
}

/** Where a finished instance's work went, as `show` says it; a patch by its full path (it is in the run folder). */
function landing(inst: InstanceState, runDir: string): string | undefined {
  if (inst.status !== 'done') return undefined;
  if (inst.branch) return `branch ${inst.branch}`;
  if (inst.applied) return 'applied to the checkout';
  if (inst.patchFile) return `patch ${join(runDir, inst.patchFile)}`;
  return undefined;
}

/** What an instance that did not finish is once its run stopped; a gate's wait goes on (it may be answered offline). */
function stoppedAs(inst: InstanceState): InstanceView['stopped'] {
  if (isFinished(inst) || inst.approval?.state === 'waiting') return undefined;
  return inst.attempts.some((a) => a.startTs !== undefined) ? 'interrupted' : 'never started';
}

function instanceView(inst: InstanceState, runDir: string, notPicked: boolean, runStopped: boolean): InstanceView {
  const usage = instanceUsage(inst);
  const stopped = runStopped ? stoppedAs(inst) : undefined;
  const doing = currentToolText(inst) ?? inst.activity;
  return {
    key: inst.key,
    label: inst.label,
    task: inst.task,
    status: inst.status,
    attempt: inst.attempt,
    ...(doing ? { doing } : {}),
    cost: usage.cost,
    tokens: usage.totalTokens,
    turns: usage.turns ?? 0,
    toolCalls: inst.toolCalls,
    ...(inst.failure ? { failure: inst.failure } : {}),
    ...(inst.error ? { error: abbreviate(inst.error, DISPLAY_DEFAULTS.errorPreviewChars) } : {}),
    ...(inst.workers?.length ? { workers: inst.workers } : {}),
    gated: inst.approval?.state === 'waiting',
    attempts: inst.attempts.map((a) => ({
      attempt: a.attempt,
      outcome: a.outcome,
      ...(a.failure ? { failure: a.failure } : {}),
      ...(a.startTs !== undefined ? { startTs: a.startTs } : {}),
      ...(a.endTs !== undefined ? { endTs: a.endTs } : {}),
    })),
    ...(landing(inst, runDir) && !notPicked ? { landed: landing(inst, runDir) } : {}),
    ...(notPicked ? { notPicked: true } : {}),
    ...(stopped ? { stopped } : {}),
  };
}

/** What the page shows of a gate's record: a task's gate and a publish gate alike. */
function gateState(a: ApprovalRecord): Omit<GateView, 'kind' | 'task' | 'instance'> {
  return {
    prompt: a.prompt,
    state: a.state,
    ...(a.deadline !== undefined ? { deadline: a.deadline } : {}),
    onTimeout: a.onTimeout,
    ...(a.by ? { by: a.by } : {}),
    ...(a.via ? { via: a.via } : {}),
    ...(a.note ? { note: a.note } : {}),
  };
}

function gates(state: RunState): GateView[] {
  const out: GateView[] = [];
  for (const inst of instancesInTaskOrder(state)) {
    const a = inst.approval;
    if (!a) continue;
    out.push({ kind: 'task', task: inst.task, instance: inst.key, ...gateState(a) });
  }
  for (const [task, a] of state.publishGates) out.push({ kind: 'publish', task, ...gateState(a) });
  for (const inst of instancesInTaskOrder(state))
    for (const r of inst.followUps ?? [])
      if (r.approval)
        out.push({ kind: 'follow_up', task: inst.task, instance: inst.key, round: r.round, ...gateState(r.approval) });
  return out;
}

/** A campaign's changesets as last observed (nothing is asked of a forge), or undefined without any. */
function changesetsOf(runDir: string, state: RunState): ChangesetsView | undefined {
  let file: ReturnType<typeof readChangesets>;
  try {
    file = readChangesets(runDir);
  } catch (err) {
    // A damaged changesets.json: said on the page, as `orchestrate show` says it.
    return { rows: [], total: 0, merged: 0, burndown: [], error: err instanceof Error ? err.message : String(err) };
  }
  if (!file) return undefined;
  const obs = readObservations(runDir);
  const total = file.changesets.length;
  const unpublished = file.changesets.filter((c) => c.state === 'unpublished').length;
  return {
    rows: changesetRows(file, obs, state),
    total,
    merged: mergedCount(obs),
    burndown: burndown(obs, total),
    ...(unpublished
      ? {
          publish: `orchestrate publish ${runDir} previews the ${unpublished === 1 ? 'unpublished changeset' : `${unpublished} unpublished changesets`}; --apply pushes`,
        }
      : {}),
  };
}

/** How many recent control actions the page lists. */
const CONTROLS_SHOWN = 20;

export function runSnapshot(state: RunState, runDir: string, readOnly: string | undefined): RunSnapshot {
  const depth = levels(state);
  const usage = runUsage(state);
  const changesets = changesetsOf(runDir, state);
  const held = liveLeaseHolder(runDir) !== undefined;
  // A log without run_end whose coordinator is gone (killed) is interrupted, as `runs` and `show` say.
  const abandoned = state.status === 'running' && state.eventCount > 0 && !held;
  const stopped = state.status !== 'running' || abandoned;
  const counts = countStatuses(state);
  return {
    runId: state.runId,
    dir: runDir,
    name: state.name,
    recipe: state.recipe,
    status: abandoned ? 'interrupted' : state.status,
    startTs: state.startTs,
    ...(state.endTs !== undefined ? { endTs: state.endTs } : {}),
    ...(state.durationMs !== undefined ? { durationMs: state.durationMs } : {}),
    cost: state.spend.cost || usage.cost,
    tokens: state.spend.totalTokens || usage.totalTokens,
    ...(state.budgetUsd !== undefined ? { budgetUsd: state.budgetUsd } : {}),
    ...(state.budgetExhausted ? { budgetExhausted: state.budgetExhausted } : {}),
    providerLines: providerCostLines(state.providers),
    counts,
    ...(stopped ? { unfinished: counts.running + counts.queued } : {}),
    ...(readOnly ? { readOnly } : {}),
    resumable: state.eventCount > 0 && state.status !== 'succeeded' && !held,
    tasks: [...state.tasks.values()].map((t) => ({
      id: t.task,
      needs: t.needs,
      level: depth.get(t.task) ?? 0,
      instances: [...state.instances.values()].filter((i) => i.task === t.task).map((i) => i.key),
    })),
    instances: instancesInTaskOrder(state).map((i) =>
      instanceView(i, runDir, isFinished(i) && notPickedAttempt(state.picks, i.key), stopped),
    ),
    gates: gates(state),
    board: [...state.board.values()],
    controls: state.controls.slice(-CONTROLS_SHOWN).map((c) => ({ ...c })),
    ...(changesets ? { changesets } : {}),
    trains: trainViews(state.train),
    picks: pickViews(state.picks, attemptFacts(state)),
    eventCount: state.eventCount,
  };
}

/** One conversation item as the page shows it: tool arguments and results cut like the terminal. */
export type ConversationItemView =
  | { kind: 'user' | 'peer' | 'context' | 'summary'; ts: string; label?: string; text: string }
  | {
      kind: 'assistant';
      ts: string;
      text: string;
      thinking?: string;
      toolCalls: { name: string; args: string }[];
      error?: string;
      model?: string;
      tokens?: number;
      cost?: number;
    }
  | { kind: 'toolResult'; ts: string; toolName: string; text: string; isError: boolean }
  | { kind: 'bash'; ts: string; command: string; output: string; exitCode: number | null };

export interface ConversationView {
  instance: string;
  label: string;
  status: string;
  exists: boolean;
  items: ConversationItemView[];
  /** The reply being written now (from a peek), when the instance is at work. */
  writing?: string;
  warnings: string[];
}

function itemView(i: ConversationItem): ConversationItemView {
  const cut = DISPLAY_DEFAULTS.toolResultChars;
  switch (i.kind) {
    case 'user':
      return { kind: 'user', ts: i.ts, text: i.text };
    case 'peer':
      return { kind: 'peer', ts: i.ts, label: `message from ${i.from}`, text: i.text };
    case 'context':
      return { kind: 'context', ts: i.ts, label: i.label, text: abbreviate(i.text, DISPLAY_DEFAULTS.reportTextChars) };
    case 'summary':
      return { kind: 'summary', ts: i.ts, label: i.label, text: i.text };
    case 'assistant':
      return {
        kind: 'assistant',
        ts: i.ts,
        text: i.text,
        ...(i.thinking ? { thinking: abbreviate(i.thinking, cut) } : {}),
        toolCalls: i.toolCalls.map((c) => ({ name: c.name, args: toolArgsText(c.args) })),
        ...(i.stopReason === 'error' || i.stopReason === 'aborted'
          ? { error: `[${i.stopReason}] ${i.error ?? ''}`.trim() }
          : {}),
        ...(i.model ? { model: i.model } : {}),
        ...(i.tokens !== undefined ? { tokens: i.tokens } : {}),
        ...(i.cost !== undefined ? { cost: i.cost } : {}),
      };
    case 'toolResult':
      return { kind: 'toolResult', ts: i.ts, toolName: i.toolName, text: abbreviate(i.text, cut), isError: i.isError };
    case 'bash':
      return { kind: 'bash', ts: i.ts, command: i.command, output: abbreviate(i.output, cut), exitCode: i.exitCode };
  }
}

export function conversationView(inst: InstanceState, conv: Conversation, writing: string): ConversationView {
  return {
    instance: inst.key,
    label: inst.label,
    status: inst.status,
    exists: conv.exists,
    items: conv.items.map(itemView),
    ...(writing ? { writing } : {}),
    warnings: conv.warnings,
  };
}
