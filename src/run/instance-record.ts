// The core of the run fold (run-fold.ts): what the log says about one instance (InstanceRecord),
// the one status union, and applyInstanceEvent, the only code that changes an instance's status.
// The views and resume apply it while they fold run.jsonl; the live coordinator applies it to
// each lifecycle event it records, so its instances and the log cannot disagree.
import type { FailureClass, RunEvent } from './run-events.js';

/**
 * One status union for every reader. `pending`: known, not queued yet; `queued`: waiting for a
 * slot; `waiting`: running but waiting for a permit, or not started and waiting at its task's
 * approval gate (`approval` in the fold; views only); `retrying`: waiting to retry;
 * `interrupted`: the live coordinator's mark for an attempt its run's interrupt stopped (never
 * logged: the log shows the attempt unfinished, which is what resume reads); `cancelled`: a user
 * ended it (final like `failed`; a resume keeps it).
 */
export type InstanceStatus =
  | 'pending'
  | 'queued'
  | 'running'
  | 'waiting'
  | 'retrying'
  | 'interrupted'
  | 'done'
  | 'failed'
  | 'cancelled'
  | 'skipped';
/**
 * How a run can end (run_end, result.json). `partial`: a user cancelled some instances and no
 * instance failed on its own (what the cancelled ones would have made is missing, and so is what
 * needed them); `failed`: an instance failed.
 */
export const RUN_END_STATUSES = ['succeeded', 'partial', 'failed', 'interrupted', 'budget_exhausted'] as const;
/** How a run ended (run_end). */
export type RunEndStatus = (typeof RUN_END_STATUSES)[number];

/** One failed attempt of an instance, as result.json reports it. */
export interface AttemptFailure {
  attempt: number;
  failure: FailureClass;
  error: string;
}

/** The git state an instance started from (instance_start): its patch is the diff against `tree`. */
export interface GitState {
  root: string;
  commit?: string;
  tree: string;
  /** Worktree folder when the task runs isolated. */
  worktree?: string;
  /** The repository's remotes (name → URL, no credentials) before any agent ran in it: publishing reads a remote's name here. */
  remotes?: Record<string, string>;
}

/**
 * What the log says about one instance: the part of its state that every reader shares (the
 * views' InstanceState below and the coordinator's, run-state.ts, extend it).
 */
export interface InstanceRecord {
  status: InstanceStatus;
  /** Attempts started so far. */
  attempt: number;
  output?: unknown;
  text?: string;
  /** The handoff summary text (instance_done). */
  summary?: string;
  modifiedFiles?: string[];
  patchFile?: string;
  /** merge: branch / apply: where the work of its worktree landed. */
  branch?: string;
  applied?: boolean;
  failure?: FailureClass;
  error?: string;
  skipReason?: string;
  durationMs?: number;
  git?: GitState;
  /** Why each failed attempt failed, in order (retried ones and the final one). */
  attemptFailures?: AttemptFailure[];
  /** Attempts that failed through no fault of the instance's own; the retry policy does not count them. */
  unchargedAttempts?: number;
  /** Runs on a worker thread of its own (after its shared thread crashed). */
  isolated?: boolean;
}

type EventOf<T extends RunEvent['type']> = Extract<RunEvent, { type: T }>;
/** The events that change an instance's record, without the stamp the log adds. */
export type LifecycleEvent = {
  [T in
    | 'instance_queued'
    | 'instance_start'
    | 'instance_retry'
    | 'instance_done'
    | 'instance_failed'
    | 'instance_skipped']: Omit<EventOf<T>, 'v' | 'ts' | 'runId'>;
}['instance_queued' | 'instance_start' | 'instance_retry' | 'instance_done' | 'instance_failed' | 'instance_skipped'];

const LIFECYCLE: ReadonlySet<string> = new Set([
  'instance_queued',
  'instance_start',
  'instance_retry',
  'instance_done',
  'instance_failed',
  'instance_skipped',
]);
export function isLifecycleEvent(e: { type: string }): e is LifecycleEvent {
  return LIFECYCLE.has(e.type);
}

/** The instance a key belongs to: pair members (`id@worker`) count for their instance. */
export function instanceOfKey(key: string): string {
  const at = key.indexOf('@');
  return at < 0 ? key : key.slice(0, at);
}

function noteAttemptFailure(rec: InstanceRecord, attempt: number, failure: FailureClass, error: string): void {
  rec.attemptFailures ??= [];
  const list = rec.attemptFailures;
  if (list.at(-1)?.attempt !== attempt) list.push({ attempt, failure, error });
}

/**
 * The core of the fold: what one lifecycle event of an instance means for its record. Views and
 * resume apply it while folding the log; the live coordinator applies it to each event it records.
 */
export function applyInstanceEvent(rec: InstanceRecord, e: LifecycleEvent): void {
  switch (e.type) {
    case 'instance_queued':
      // Queued again after it failed or was cancelled: a user retried it (a resume runs it too).
      if (rec.status !== 'done') rec.status = 'queued';
      return;
    case 'instance_start':
      rec.status = 'running';
      rec.attempt = Math.max(rec.attempt, e.attempt);
      if (e.baseTree && e.repoRoot) {
        // A later start without the record (a `publish --rebase` re-run) keeps the first one.
        const remotes = e.remotes ?? (rec.git?.root === e.repoRoot ? rec.git.remotes : undefined);
        rec.git = {
          root: e.repoRoot,
          tree: e.baseTree,
          ...(e.baseCommit ? { commit: e.baseCommit } : {}),
          ...(e.worktree ? { worktree: e.worktree } : {}),
          ...(remotes ? { remotes } : {}),
        };
      }
      return;
    case 'instance_retry':
      rec.status = 'retrying';
      rec.failure = e.failure;
      rec.error = e.error;
      noteAttemptFailure(rec, e.attempt, e.failure, e.error);
      if (e.uncharged) rec.unchargedAttempts = (rec.unchargedAttempts ?? 0) + 1;
      if (e.isolated) rec.isolated = true;
      return;
    case 'instance_done':
      rec.status = 'done';
      rec.output = e.output;
      rec.text = e.text;
      rec.summary = e.summary;
      rec.modifiedFiles = e.modifiedFiles;
      rec.patchFile = e.patchFile;
      rec.branch = e.branch;
      rec.applied = e.applied;
      rec.durationMs = e.durationMs;
      delete rec.failure;
      delete rec.error;
      return;
    case 'instance_failed':
      // A user's cancel ends the instance as failure class 'cancelled': its own status.
      rec.status = e.final ? (e.failure === 'cancelled' ? 'cancelled' : 'failed') : 'retrying';
      rec.failure = e.failure;
      rec.error = e.error;
      rec.durationMs = e.durationMs;
      if (e.patchFile !== undefined) rec.patchFile = e.patchFile;
      noteAttemptFailure(rec, e.attempt, e.failure, e.error);
      return;
    case 'instance_skipped':
      rec.status = 'skipped';
      rec.skipReason = e.reason;
      return;
  }
}

/** A user's accepted `retry` (control event, live or `resume --retry`): the instance is open again. */
export function reopenInstance(rec: InstanceRecord): void {
  if (rec.status !== 'failed' && rec.status !== 'cancelled') return;
  rec.status = 'pending';
  delete rec.failure;
  delete rec.error;
}

/** The fields of an InstanceRecord, so a record can be taken from a larger state (resume: the fold's instance). */
const RECORD_FIELDS = [
  'status',
  'attempt',
  'output',
  'text',
  'summary',
  'modifiedFiles',
  'patchFile',
  'branch',
  'applied',
  'failure',
  'error',
  'skipReason',
  'durationMs',
  'git',
  'attemptFailures',
  'unchargedAttempts',
  'isolated',
] as const satisfies readonly (keyof InstanceRecord)[];

/** A copy of the record part of `from` (lists copied, so the two never share state). */
export function recordOf(from: InstanceRecord): InstanceRecord {
  const rec: Record<string, unknown> = {};
  for (const k of RECORD_FIELDS)
    if (from[k] !== undefined) rec[k] = Array.isArray(from[k]) ? [...(from[k] as unknown[])] : from[k];
  return rec as unknown as InstanceRecord;
}
