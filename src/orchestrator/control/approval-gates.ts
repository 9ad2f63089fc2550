// Approval gates (a task's `approve:`): before an instance of such a task is queued it waits at
// its gate until a user approves or rejects it (`orchestrate approve|reject`, the run view, the
// MCP server) or the gate's deadline passes and `on_timeout` answers. A waiting instance is never
// queued, so it spends nothing; the rest of the DAG goes on. Approved: queued as usual. Rejected:
// skipped (a task whose instances are all skipped is skipped, and so are its dependants).
//
// Every step is an event (approval_requested with the absolute deadline, approval_given with who,
// the channel and the note), applied by the fold's applyApprovalEvent (run/approval-record.ts), so
// a resume after kill -9 knows each gate's state from the log: a waiting gate waits again (same
// deadline; a deadline that passed while nobody ran answers at once), an answered one is obeyed.
// decideApproval is pure and shared with the offline answer (approval-offline.ts).
import { didYouMean } from '../../util/did-you-mean.js';
import { describeApproval, type ApprovalRecord } from '../../run/approval-record.js';
import type { ApprovalAnswer, ControlReply } from '../../run/run-control.js';
import type { ApprovalChannel, RunEventInput } from '../../run/run-events.js';
import type { RunState } from '../../run/run-fold.js';
import { isTerminal, type InstanceState, type TaskState } from '../../run/run-state.js';
import { skippedEvent } from '../schedule/attempt-lifecycle.js';
import { DeadlineGate, type GateEvent } from './deadline-gate.js';

/** One gate as a decision sees it: its instance, its record, and whether the instance ended otherwise. */
export interface GateEntry {
  task: string;
  key: string;
  approval: ApprovalRecord;
  /** The instance's status when it ended some other way (cancelled, skipped by a stop). */
  ended?: string;
}

/** What an answer is decided from: the run's tasks (their needs, whether they have a gate) and its gates. */
export interface GateBoard {
  runId: string;
  tasks: ReadonlyMap<string, { needs: readonly string[]; gated: boolean }>;
  gates: readonly GateEntry[];
}

export type ApprovalDecision = { ok: true; keys: string[] } | { ok: false; error: string };

const decisionOf = (a: ApprovalAnswer): 'approved' | 'rejected' => (a.action === 'approve' ? 'approved' : 'rejected');

/** Which waiting gates an answer applies to (every waiting instance of the task, or the one named), or why none. */
export function decideApproval(board: GateBoard, a: ApprovalAnswer): ApprovalDecision {
  const task = board.tasks.get(a.task);
  if (!task) {
    const near = didYouMean(a.task, [...board.tasks.keys()]);
    return {
      ok: false,
      error: `run ${board.runId} has no task "${a.task}"; ${near ? `did you mean "${near}"?` : `tasks: ${[...board.tasks.keys()].join(', ')}`}`,
    };
  }
  const gated = [...board.tasks].filter(([, t]) => t.gated).map(([id]) => id);
  if (!task.gated)
    return {
      ok: false,
      error: `task ${a.task} has no approval gate (approve:)${gated.length ? `; gated tasks: ${gated.join(', ')}` : ''}`,
    };
  const ofTask = board.gates.filter((g) => g.task === a.task);
  let candidates = ofTask;
  if (a.instance !== undefined) {
    candidates = ofTask.filter((g) => g.key === a.instance);
    if (candidates.length === 0) {
      const near = didYouMean(
        a.instance,
        ofTask.map((g) => g.key),
      );
      return {
        ok: false,
        error: `task ${a.task} has no instance "${a.instance}" at its gate; ${near ? `did you mean "${near}"?` : ofTask.length ? `its instances: ${ofTask.map((g) => g.key).join(', ')}` : 'none has reached it yet'}`,
      };
    }
  }
  if (ofTask.length === 0)
    return {
      ok: false,
      error: `task ${a.task} has not reached its approval gate yet${task.needs.length ? ` (it waits for ${task.needs.join(', ')})` : ''}; answer once \`orchestrate watch ${board.runId}\` shows it waiting`,
    };
  const waiting = candidates.filter((g) => g.approval.state === 'waiting' && g.ended === undefined);
  if (waiting.length === 0) {
    const g = candidates[0]!;
    return {
      ok: false,
      error:
        g.ended !== undefined
          ? `${g.key} has already ended (${g.ended}); nothing to ${a.action}`
          : `${g.key} was already ${describeApproval(g.approval)}; nothing to ${a.action}`,
    };
  }
  return { ok: true, keys: waiting.map((g) => g.key) };
}

/** The gate board of a folded log (the offline answer: no coordinator, the log is all there is). */
export function boardOfFold(runId: string, fold: RunState): GateBoard {
  const gates: GateEntry[] = [];
  for (const inst of fold.instances.values()) {
    if (!inst.approval) continue;
    const ended = ['done', 'failed', 'cancelled', 'skipped'].includes(inst.status) ? inst.status : undefined;
    gates.push({ task: inst.task, key: inst.key, approval: inst.approval, ...(ended ? { ended } : {}) });
  }
  const tasks = new Map<string, { needs: readonly string[]; gated: boolean }>();
  for (const [id, t] of fold.tasks) tasks.set(id, { needs: t.needs, gated: gates.some((g) => g.task === id) });
  return { runId, tasks, gates };
}

/** Why a rejected instance was skipped (its instance_skipped reason). */
export function rejectionReason(rec: ApprovalRecord): string {
  return `not approved: ${describeApproval(rec)}`;
}

/** Why an answer to a publish gate cannot apply: the run has none (naming its tasks' own gates, if any). */
export function noPublishGateError(runId: string, taskGated: readonly string[] | undefined): string {
  const other = taskGated?.length
    ? `; its approval gates are on tasks (answer with --task): ${taskGated.join(', ')}`
    : '';
  return `run ${runId} has no publish gate (no publish: block has approve:)${other}`;
}

/** What a reply says an answer did. */
export function answeredMessage(decision: 'approved' | 'rejected', keys: readonly string[]): string {
  return decision === 'approved'
    ? `approved ${keys.join(', ')}: queued now`
    : `rejected ${keys.join(', ')}: skipped, with the tasks that need ${keys.length > 1 ? 'them' : 'it'}`;
}

/**
 * A gate at the run's end (the publish gate, publish/publish-gate.ts), given to ApprovalGates when
 * it is built: answers with gate: publish go to it, and the run does not end while it holds.
 */
export interface EndGate {
  /** Every task has settled: true while the run must not end yet. `stopping`: nothing new is asked. */
  holds(stopping: boolean): boolean;
  answer(a: ApprovalAnswer, by: string): ControlReply;
  pause(): void;
}

/** What the gates need from the run. */
export interface GateHands {
  runId: string;
  tasks: ReadonlyMap<string, TaskState>;
  record(e: RunEventInput): void;
  /** Queue an approved instance (as the walk would have). */
  queue(t: TaskState, inst: InstanceState): void;
  /** An instance the gates skipped after the walk had activated its task: the task settles, the walk goes on. */
  settle(t: TaskState): void;
  now?: () => number;
}

export class ApprovalGates {
  /** Every gate this run knows, by instance id (a resume's from the folded log), with their deadlines. */
  private readonly gate: DeadlineGate;
  /** The task of each gate's instance. */
  private readonly taskOf = new Map<string, string>();
  /** Instances waiting at their gate in this session. */
  private readonly held = new Map<string, { t: TaskState; inst: InstanceState }>();

  constructor(
    private readonly hands: GateHands,
    restored?: RunState,
    /** The run's publish gate, when a publish block has approve:. */
    private readonly publish?: EndGate,
  ) {
    const records: [string, ApprovalRecord][] = [];
    for (const inst of restored?.instances.values() ?? [])
      if (inst.approval) {
        records.push([inst.key, inst.approval]);
        this.taskOf.set(inst.key, inst.task);
      }
    this.gate = new DeadlineGate(
      {
        record: (e) => hands.record(e),
        due: (key, decision, note) => this.give(key, decision, 'timeout', 'timeout', note),
        ...(hands.now ? { now: hands.now } : {}),
      },
      records,
    );
  }

  /** Instances waiting at a gate now. */
  get waitingCount(): number {
    return this.held.size;
  }

  /** The record of an instance's gate, if it has one. */
  recordOf(id: string): ApprovalRecord | undefined {
    return this.gate.recordOf(id);
  }

  /**
   * The walk would queue `inst` now: true when its gate takes it instead (it waits, or was
   * rejected and is skipped here; the walk settles its task after), false when it may be queued.
   */
  holds(t: TaskState, inst: InstanceState): boolean {
    const gate = t.task.approve;
    if (!gate) return false;
    const rec = this.gate.recordOf(inst.id);
    if (rec?.state === 'approved') return false;
    if (rec?.state === 'rejected') {
      this.hands.record(skippedEvent(inst, rejectionReason(rec)));
      return true;
    }
    // New, or still waiting from an earlier session (its deadline kept; logged again so every view sees it waits).
    const deadline = this.gate.deadlineFor(inst.id, gate.timeoutMs);
    this.log({
      type: 'approval_requested',
      task: t.task.id,
      key: inst.id,
      // The prompt as rendered for this instance (its item in scope), like its task prompt.
      prompt: rec?.prompt ?? inst.resolved?.approvePrompt ?? gate.prompt,
      ...(deadline !== undefined ? { deadline } : {}),
      onTimeout: rec?.onTimeout ?? gate.onTimeout,
    });
    this.held.set(inst.id, { t, inst });
    this.gate.arm(inst.id);
    return true;
  }

  /** A user's answer (the control desk's, in-process or over the socket). */
  answer(a: ApprovalAnswer, by: string): ControlReply {
    if (a.gate === 'publish') {
      if (this.publish) return this.publish.answer(a, by);
      const taskGated = [...this.hands.tasks].filter(([, t]) => t.task.approve).map(([id]) => id);
      return { ok: false, error: noPublishGateError(this.hands.runId, taskGated) };
    }
    const d = decideApproval(this.board(), a);
    if (!d.ok) return { ok: false, error: d.error };
    const decision = decisionOf(a);
    for (const key of d.keys) this.give(key, decision, by, a.via ?? 'cli', a.note);
    return { ok: true, message: answeredMessage(decision, d.keys) };
  }

  /** The run stops new work: instances waiting at a gate are skipped (their gates stay waiting in the log: a resume asks again). */
  stop(reason: string): void {
    this.pause();
    for (const { inst } of this.held.values())
      if (!isTerminal(inst.status)) this.hands.record(skippedEvent(inst, `not started: ${reason}`));
    this.held.clear();
  }

  /** Interrupt or end: no timeout answers any more (the log keeps each deadline for a resume). */
  pause(): void {
    this.gate.pause();
    this.publish?.pause();
  }

  /** Every task has settled: true while a publish gate holds the run's end (it waits, or publishes). */
  holdsEnd(stopping: boolean): boolean {
    return this.publish?.holds(stopping) ?? false;
  }

  private board(): GateBoard {
    const gates: GateEntry[] = [];
    for (const [key, approval] of this.gate.entries()) {
      const inst = this.held.get(key)?.inst ?? this.instanceOf(key);
      const ended = inst && isTerminal(inst.status) ? inst.status : undefined;
      // A gate waiting in the log that this session has not reached again (its task not activated yet): not answerable yet.
      if (approval.state === 'waiting' && !this.held.has(key) && ended === undefined) continue;
      gates.push({ task: this.taskOf.get(key) ?? inst?.task ?? '', key, approval, ...(ended ? { ended } : {}) });
    }
    const tasks = new Map<string, { needs: readonly string[]; gated: boolean }>();
    for (const [id, t] of this.hands.tasks) tasks.set(id, { needs: t.task.needs, gated: t.task.approve !== undefined });
    return { runId: this.hands.runId, tasks, gates };
  }

  private instanceOf(key: string): InstanceState | undefined {
    for (const t of this.hands.tasks.values()) {
      const inst = t.instances.find((i) => i.id === key);
      if (inst) return inst;
    }
    return undefined;
  }

  /** Logs a gate event and applies it to the gate's record (the fold's one rule). */
  private log(e: GateEvent): ApprovalRecord {
    this.taskOf.set(e.key, e.task);
    return this.gate.log(e);
  }

  /** Answers one held gate: approved ones are queued, rejected ones skipped. */
  private give(id: string, decision: 'approved' | 'rejected', by: string, via: ApprovalChannel, note?: string): void {
    this.gate.disarm(id);
    const h = this.held.get(id);
    if (!h || isTerminal(h.inst.status)) {
      this.held.delete(id);
      return;
    }
    const rec = this.log({
      type: 'approval_given',
      task: h.t.task.id,
      key: id,
      decision,
      by,
      via,
      ...(note !== undefined && note !== '' ? { note } : {}),
    });
    this.held.delete(id);
    if (decision === 'approved') return void this.hands.queue(h.t, h.inst);
    this.hands.record(skippedEvent(h.inst, rejectionReason(rec)));
    this.hands.settle(h.t);
  }
}
