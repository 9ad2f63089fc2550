// The skeleton every gate shares (a task's `approve:` in approval-gates.ts, a publish block's
// `approve:` in publish/publish-gate.ts): a set of gates keyed by a string, each one's record
// folded from its approval_requested / approval_given events (the fold's own rule,
// applyApprovalEvent), and a deadline kept as an absolute time in the log, so a resume after
// kill -9 waits for the same moment (and a deadline that passed while nobody ran answers at once
// with the gate's on_timeout). What a gate holds, and what an answer does, is its owner's business:
// the owner is told when a deadline answers (`due`).
import { applyApprovalEvent, type ApprovalRecord } from '../../run/approval-record.js';
import type { RunEventInput } from '../../run/run-events.js';

/** setTimeout's longest delay (about 24.8 days); a later deadline is waited for in steps. */
const MAX_TIMER_MS = 2_147_483_647;

export type GateEvent = Extract<RunEventInput, { type: 'approval_requested' | 'approval_given' }>;

export interface DeadlineGateHands {
  record(e: RunEventInput): void;
  /** A gate's deadline passed unanswered: answer it with its on_timeout (the note says when). */
  due(key: string, decision: 'approved' | 'rejected', note: string): void;
  now?: () => number;
}

export class DeadlineGate {
  private readonly records = new Map<string, ApprovalRecord>();
  private readonly timers = new Map<string, NodeJS.Timeout>();
  readonly now: () => number;

  constructor(
    private readonly hands: DeadlineGateHands,
    restored?: Iterable<readonly [string, ApprovalRecord]>,
  ) {
    this.now = hands.now ?? Date.now;
    for (const [key, rec] of restored ?? []) this.records.set(key, rec);
  }

  recordOf(key: string): ApprovalRecord | undefined {
    return this.records.get(key);
  }

  /** Every gate's record, by key. */
  entries(): IterableIterator<[string, ApprovalRecord]> {
    return this.records.entries();
  }

  /** A gate asked (again): the deadline it already has (a resume keeps it), or one `timeoutMs` from now. */
  deadlineFor(key: string, timeoutMs: number | undefined): number | undefined {
    const rec = this.records.get(key);
    if (rec) return rec.deadline;
    return timeoutMs !== undefined ? this.now() + timeoutMs : undefined;
  }

  /** Logs a gate event and applies it to the gate's record. */
  log(e: GateEvent): ApprovalRecord {
    this.hands.record(e);
    const rec = applyApprovalEvent(this.records.get(e.key), { ...e, ts: this.now() });
    this.records.set(e.key, rec);
    return rec;
  }

  /** Waits for the gate's deadline, if it has one (at once when it has passed). */
  arm(key: string): void {
    const rec = this.records.get(key);
    if (rec?.deadline === undefined) return;
    const deadline = rec.deadline;
    const wait = Math.max(0, deadline - this.now());
    const timer = setTimeout(
      () => {
        this.timers.delete(key);
        if (this.now() < deadline) return this.arm(key);
        this.hands.due(
          key,
          rec.onTimeout === 'approve' ? 'approved' : 'rejected',
          `no answer by ${new Date(deadline).toISOString()}`,
        );
      },
      Math.min(wait, MAX_TIMER_MS),
    );
    this.timers.set(key, timer);
  }

  /** The gate was answered: its deadline no longer matters. */
  disarm(key: string): void {
    clearTimeout(this.timers.get(key));
    this.timers.delete(key);
  }

  /** Interrupt or end: no deadline answers any more (the log keeps each one for a resume). */
  pause(): void {
    for (const timer of this.timers.values()) clearTimeout(timer);
    this.timers.clear();
  }
}
