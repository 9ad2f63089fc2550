// A `publish --follow-up` round in the run's record: the instance's agent run again on its
// published branch with the pull request's evidence (a CI failure, review comments), the change it
// made and, once on the remote, the commit. Kept beside run-fold.ts, which applies the three
// events through applyFollowUpEvent. Unlike a rebase, a round leaves the instance's own result
// alone: its change is a commit on top of the branch, listed in the changeset. With
// follow_up.approve a round's change waits at a gate (approval_requested / approval_given with
// gate follow_up and its round) before it is pushed; applyFollowUpApproval folds those.
import { applyApprovalEvent, type ApprovalEvent, type ApprovalRecord } from './approval-record.js';
import type { RunEvent } from './run-events.js';
import type { AttemptRecord, InstanceState, RunState } from './run-fold.js';
import { idOf } from './run-queries.js';

type EventOf<T extends RunEvent['type']> = Extract<RunEvent, { type: T }>;

export interface FollowUpRecord {
  round: number;
  reason: 'ci_failed' | 'changes_requested';
  evidence: string;
  attempt: number;
  startTs: number;
  fromCommit: string;
  sessionFile: string;
  endTs?: number;
  /** Undefined while it runs (or when it was killed). */
  ok?: boolean;
  error?: string;
  patchFile?: string;
  text?: string;
  /** The round's commit, once it is on the branch. */
  commit?: string;
  /** follow_up.approve: its gate (waiting: not pushed yet; rejected: dropped, never pushed). */
  approval?: ApprovalRecord;
}

/**
 * Whether a round's change may go on the branch: it is there already, or its gate approved it, or
 * it has no gate and `gated` (follow_up.approve is set) is false. A gated round with no gate
 * record yet (a kill -9 came between its end and its request) waits like a requested one.
 */
export function roundMayPush(r: Pick<FollowUpRecord, 'approval' | 'commit'>, gated: boolean): boolean {
  if (r.commit !== undefined) return true;
  return r.approval ? r.approval.state === 'approved' : !gated;
}

/**
 * A follow-up round waiting at its gate (follow_up.approve), as every view of a changeset shows it:
 * `status` (and `--watch`, `--json`), `show`, the web page. Plain data, so `--json` carries it as is.
 */
export interface FollowUpWaiting {
  round: number;
  reason: 'ci_failed' | 'changes_requested';
  prompt: string;
  requestedAt: number;
  /** When on_timeout answers it (epoch ms); absent: it waits for a person. */
  deadline?: number;
  onTimeout: 'approve' | 'reject';
  /** The command that approves it (`reject` in its place drops the round). */
  answer: string;
}

/** The command that approves the waiting follow-up round of a changeset's instance. */
export function followUpAnswer(runId: string, c: { task: string; instance: string }): string {
  return `orchestrate approve ${runId} --follow-up --task ${c.task} --instance ${c.instance}`;
}

/** The round of the changeset's instance waiting at its gate, if one is (the latest such round). */
export function followUpWaiting(
  state: Pick<RunState, 'runId' | 'instances'>,
  c: { task: string; instance: string },
): FollowUpWaiting | undefined {
  const inst = state.instances.get(idOf(c.task, c.instance));
  const r = [...(inst?.followUps ?? [])].reverse().find((f) => f.approval?.state === 'waiting');
  const a = r?.approval;
  if (!r || !a) return undefined;
  return {
    round: r.round,
    reason: r.reason,
    prompt: a.prompt,
    requestedAt: a.requestedAt,
    ...(a.deadline !== undefined ? { deadline: a.deadline } : {}),
    onTimeout: a.onTimeout,
    answer: followUpAnswer(state.runId, c),
  };
}

/**
 * "round 2 waiting for approval: orchestrate approve <run> --follow-up … (or reject); on timeout
 * at <time>: rejected", the one line every text view prints for it.
 */
export function followUpWaitingLine(w: FollowUpWaiting): string {
  const timeout =
    w.deadline !== undefined
      ? `on timeout at ${new Date(w.deadline).toISOString()}: ${w.onTimeout === 'approve' ? 'approved' : 'rejected'}`
      : 'no timeout: it waits for an answer';
  return `round ${w.round} waiting for approval: ${w.answer} (or reject); ${timeout}`;
}

/** A follow-up round's gate event, applied to that round (the instance's by task and key, the round by number). */
export function applyFollowUpApproval(instances: ReadonlyMap<string, InstanceState>, e: ApprovalEvent): void {
  for (const inst of instances.values()) {
    if (inst.task !== e.task || inst.key !== e.key) continue;
    const r = [...(inst.followUps ?? [])].reverse().find((x) => x.round === e.round);
    if (r) r.approval = applyApprovalEvent(r.approval, e);
  }
}

export function applyFollowUpEvent(
  inst: InstanceState,
  rec: AttemptRecord,
  e: EventOf<'instance_followup_start'> | EventOf<'instance_followup_end'> | EventOf<'instance_followup_pushed'>,
  closeAttempt: (rec: AttemptRecord, ts: number, outcome: 'done' | 'failed') => void,
): void {
  inst.followUps ??= [];
  const list = inst.followUps;
  if (e.type === 'instance_followup_start') {
    inst.attempt = Math.max(inst.attempt, e.attempt);
    rec.startTs = e.ts;
    rec.outcome = 'running';
    list.push({
      round: e.round,
      reason: e.reason,
      evidence: e.evidence,
      attempt: e.attempt,
      startTs: e.ts,
      fromCommit: e.fromCommit,
      sessionFile: e.sessionFile,
    });
    return;
  }
  const r = list.find((x) => x.attempt === e.attempt && x.round === e.round);
  if (e.type === 'instance_followup_pushed') {
    if (r) r.commit = e.commit;
    return;
  }
  closeAttempt(rec, e.ts, e.ok ? 'done' : 'failed');
  inst.runningTools.clear();
  inst.activity = undefined;
  if (!r) return;
  r.endTs = e.ts;
  r.ok = e.ok;
  if (e.error !== undefined) r.error = e.error;
  if (e.patchFile !== undefined) r.patchFile = e.patchFile;
  if (e.text !== undefined) r.text = e.text;
  if (!e.ok) {
    if (e.failure) rec.failure = e.failure;
    if (e.error !== undefined) rec.error = e.error;
  }
}
