// A `publish --follow-up` round in the run's record: the instance's agent run again on its
// published branch with the pull request's evidence (a CI failure, review comments), the change it
// made and, once on the remote, the commit. Kept beside run-fold.ts, which applies the three
// events through applyFollowUpEvent. Unlike a rebase, a round leaves the instance's own result
// alone: its change is a commit on top of the branch, listed in the changeset.
import type { RunEvent } from './run-events.js';
import type { AttemptRecord, InstanceState } from './run-fold.js';

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
