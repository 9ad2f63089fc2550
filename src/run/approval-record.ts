// What the log says about one approval gate (a task's `approve:`): requested, then approved or
// rejected by someone (or by its timeout). applyApprovalEvent is the one place a gate's state
// changes: the run fold applies it for every view and for resume, the live coordinator's gates
// (orchestrator/control/approval-gates.ts) apply it to their own records as they log each event.
import type { ApprovalChannel, RunEvent } from './run-events.js';

type EventOf<T extends RunEvent['type']> = Extract<RunEvent, { type: T }>;
/** The two gate events, without the stamp the log adds (the live side applies them before stamping). */
export type ApprovalEvent =
  | (Omit<EventOf<'approval_requested'>, 'v' | 'runId' | 'ts'> & { ts?: number })
  | (Omit<EventOf<'approval_given'>, 'v' | 'runId' | 'ts'> & { ts?: number });

/** `waiting`: the instance has not started and spends nothing until a user (or the timeout) answers. */
export type ApprovalState = 'waiting' | 'approved' | 'rejected';

export interface ApprovalRecord {
  state: ApprovalState;
  prompt: string;
  /** When the gate was first requested (epoch ms). */
  requestedAt: number;
  /** When on_timeout answers (epoch ms); absent: it waits for a user. */
  deadline?: number;
  onTimeout: 'approve' | 'reject';
  /** Who answered (the OS user, `--as NAME`, or "timeout"), when, through which channel, with what note. */
  by?: string;
  at?: number;
  via?: ApprovalChannel;
  note?: string;
  /** The answer was written into the run folder while no coordinator held it. */
  offline?: boolean;
}

export function isApprovalEvent(e: { type: string }): e is ApprovalEvent {
  return e.type === 'approval_requested' || e.type === 'approval_given';
}

/**
 * The gate's record after `e` (undefined before any event). A repeated request (a resume that
 * finds the gate still waiting) keeps the first request's time; an answer to a gate that was
 * never requested is kept too (the log is the truth, whatever order it came in).
 */
export function applyApprovalEvent(rec: ApprovalRecord | undefined, e: ApprovalEvent): ApprovalRecord {
  const ts = e.ts ?? Date.now();
  if (e.type === 'approval_requested') {
    return {
      state: 'waiting',
      prompt: e.prompt,
      requestedAt: rec?.state === 'waiting' ? rec.requestedAt : ts,
      ...(e.deadline !== undefined ? { deadline: e.deadline } : {}),
      onTimeout: e.onTimeout,
    };
  }
  return {
    ...(rec ?? { prompt: '', requestedAt: ts, onTimeout: 'reject' as const }),
    state: e.decision,
    by: e.by,
    at: ts,
    via: e.via,
    ...(e.note !== undefined ? { note: e.note } : {}),
    ...(e.offline ? { offline: true } : {}),
  };
}

/** A changeset the run published once its publish gate (publish.approve) was approved. */
export interface PublishedChangeset {
  task: string;
  key: string;
  outcome: string;
  detail?: string;
}

/**
 * The publish side of the fold: a publish gate's event (gate: publish, keyed by its task) or a
 * changeset_published. Publish gates are not instances': they wait before the run publishes.
 */
export function applyPublishEvent(
  state: { publishGates: Map<string, ApprovalRecord>; published: PublishedChangeset[] },
  e: ApprovalEvent | Omit<EventOf<'changeset_published'>, 'v' | 'runId'>,
): void {
  if (e.type === 'changeset_published') {
    const { task, key, outcome, detail } = e;
    state.published.push({ task, key, outcome, ...(detail !== undefined ? { detail } : {}) });
  } else state.publishGates.set(e.task, applyApprovalEvent(state.publishGates.get(e.task), e));
}

/** "approved by ana via cli at 2026-…: looks good", for views and replies. */
export function describeApproval(rec: ApprovalRecord): string {
  if (rec.state === 'waiting')
    return `waiting for approval: ${rec.prompt}${rec.deadline !== undefined ? ` (until ${new Date(rec.deadline).toISOString()}, then ${rec.onTimeout === 'approve' ? 'approved' : 'rejected'})` : ''}`;
  const who =
    rec.via === 'timeout'
      ? 'on timeout'
      : `by ${rec.by ?? 'unknown'} via ${rec.via ?? 'unknown'}${rec.offline ? ' (offline)' : ''}`;
  const at = rec.at !== undefined ? ` at ${new Date(rec.at).toISOString()}` : '';
  return `${rec.state} ${who}${at}${rec.note ? `: ${rec.note}` : ''}`;
}
