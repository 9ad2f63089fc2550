// A `publish --rebase` in the run's record: each re-run of an instance on a newer base, and what a
// successful one changes of the instance (its base commit, patch, summary). Kept beside run-fold.ts,
// which applies the two events through applyRebaseEvent.
import type { RunEvent } from './run-events.js';
import type { AttemptRecord, InstanceState } from './run-fold.js';

type EventOf<T extends RunEvent['type']> = Extract<RunEvent, { type: T }>;

/** One `publish --rebase` of an instance: its change redone by its agent on `baseCommit` of `base`. */
export interface RebaseRecord {
  attempt: number;
  startTs: number;
  endTs?: number;
  base: string;
  fromCommit: string;
  baseCommit: string;
  sessionFile: string;
  /** Undefined while it runs (or when it was killed). */
  ok?: boolean;
  error?: string;
  patchFile?: string;
}

/**
 * A `publish --rebase` attempt: its span on the instance's timeline; a successful end moves the
 * instance's record to the new base and change (its status stays done). A start without an end
 * (killed) and a failed end change nothing of the record.
 */
export function applyRebaseEvent(
  inst: InstanceState,
  rec: AttemptRecord,
  e: EventOf<'instance_rebase_start'> | EventOf<'instance_rebase_end'>,
  closeAttempt: (rec: AttemptRecord, ts: number, outcome: 'done' | 'failed') => void,
): void {
  if (e.type === 'instance_rebase_start') {
    inst.attempt = Math.max(inst.attempt, e.attempt);
    rec.startTs = e.ts;
    rec.outcome = 'running';
    inst.rebases ??= [];
    inst.rebases.push({
      attempt: e.attempt,
      startTs: e.ts,
      base: e.base,
      fromCommit: e.fromCommit,
      baseCommit: e.baseCommit,
      sessionFile: e.sessionFile,
    });
    return;
  }
  closeAttempt(rec, e.ts, e.ok ? 'done' : 'failed');
  inst.runningTools.clear();
  inst.activity = undefined;
  const r = inst.rebases?.find((x) => x.attempt === e.attempt);
  if (r) {
    r.endTs = e.ts;
    r.ok = e.ok;
    if (e.error !== undefined) r.error = e.error;
    if (e.patchFile !== undefined) r.patchFile = e.patchFile;
  }
  if (!e.ok) {
    if (e.failure) rec.failure = e.failure;
    if (e.error !== undefined) rec.error = e.error;
    return;
  }
  inst.doneTs = e.ts;
  if (inst.git) inst.git = { ...inst.git, commit: e.baseCommit, ...(e.baseTree ? { tree: e.baseTree } : {}) };
  inst.patchFile = e.patchFile;
  inst.summary = e.summary;
  inst.text = e.text;
  inst.modifiedFiles = e.modifiedFiles;
}
