// Rebuilding a run's state from its event log (resume). The log is the only truth: an instance
// with instance_done keeps its output and is never run again (so never paid twice); one that
// started and did not finish continues from its session leaf; dynamic fan-outs are re-expanded
// from the recorded outputs of the tasks they read. Spend is the sum of every call_usage event,
// so the budget picks up where it was, calls of interrupted attempts included.
import { addUsageSummary, zeroUsage, type FailureClass, type RunEvent, type UsageSummary } from './run-events.js';

/** `cancelled`: ended by a user (instance_failed with failure `cancelled`); a resume does not run it again. */
export type ReplayedStatus = 'queued' | 'running' | 'retrying' | 'done' | 'failed' | 'cancelled' | 'skipped';

export interface ReplayedInstance {
  id: string;
  task: string;
  status: ReplayedStatus;
  /** Attempts started so far. */
  attempt: number;
  output?: unknown;
  text?: string;
  summary?: string;
  /** Spend of this instance across every attempt (from call_usage). */
  usage: UsageSummary;
  modifiedFiles?: string[];
  patchFile?: string;
  /** Where its worktree's work landed (merge: branch / apply). */
  branch?: string;
  applied?: boolean;
  failure?: FailureClass;
  error?: string;
  durationMs?: number;
  git?: { baseCommit?: string; baseTree?: string; repoRoot?: string; worktree?: string };
  /** Each failed attempt (instance_retry, instance_failed), in order. */
  attemptFailures?: { attempt: number; failure: FailureClass; error: string }[];
  /** Retries not counted against the retry policy (instance_retry with `uncharged`). */
  unchargedAttempts?: number;
  /** Runs on a thread of its own (after a crash of a shared thread). */
  isolated?: boolean;
}

export interface ReplayState {
  start?: Extract<RunEvent, { type: 'run_start' }>;
  /** Status of the last run_end, or undefined when the coordinator never got to write one (killed). */
  lastStatus?: string;
  /**
   * Command-line overrides in force at the end of the log: run_start's, replaced by each
   * run_resume that records its own (a budget raised on one resume holds on the next).
   */
  overrides?: Record<string, unknown>;
  /** Keys of each fan-out as expanded (task_expanded). */
  expanded: Map<string, string[]>;
  instances: Map<string, ReplayedInstance>;
  /** Every call's usage, summed. */
  spend: UsageSummary;
  /** Lines of the log that could not be read. */
  skippedLines: number;
}

/** The instance a key belongs to: pair members (`id@worker`) count for their instance. */
export function instanceOfKey(key: string): string {
  const at = key.indexOf('@');
  return at < 0 ? key : key.slice(0, at);
}

function noteAttemptFailure(s: ReplayedInstance, attempt: number, failure: FailureClass, error: string): void {
  const list = (s.attemptFailures ??= []);
  if (list.at(-1)?.attempt !== attempt) list.push({ attempt, failure, error });
}

export function replayRunLog(events: readonly RunEvent[], skippedLines = 0): ReplayState {
  const state: ReplayState = { expanded: new Map(), instances: new Map(), spend: zeroUsage(), skippedLines };
  const inst = (task: string, key: string): ReplayedInstance => {
    const id = instanceOfKey(key);
    let s = state.instances.get(id);
    if (!s) {
      s = { id, task, status: 'queued', attempt: 0, usage: zeroUsage() };
      state.instances.set(id, s);
    }
    return s;
  };
  for (const e of events) {
    switch (e.type) {
      case 'run_start':
        state.start ??= e;
        if (e.overrides && state.overrides === undefined) state.overrides = e.overrides;
        break;
      case 'run_resume':
        if (e.overrides) state.overrides = e.overrides;
        break;
      case 'run_end':
        state.lastStatus = e.status;
        break;
      case 'task_expanded':
        state.expanded.set(e.task, e.keys);
        break;
      case 'instance_queued': {
        const s = inst(e.task, e.key);
        // Queued again after a cancel: a user retried it, so a resume runs it too.
        if (s.status === 'cancelled') s.status = 'queued';
        break;
      }
      case 'instance_start': {
        const s = inst(e.task, e.key);
        if (e.key !== s.id) break; // a pair member's own start line
        s.attempt = Math.max(s.attempt, e.attempt);
        s.status = 'running';
        if (e.baseTree || e.worktree || e.repoRoot) {
          s.git ??= {};
          if (e.baseCommit) s.git.baseCommit = e.baseCommit;
          if (e.baseTree) s.git.baseTree = e.baseTree;
          if (e.repoRoot) s.git.repoRoot = e.repoRoot;
          if (e.worktree) s.git.worktree = e.worktree;
        }
        break;
      }
      case 'call_usage': {
        const u = { ...e.usage, turns: e.usage.turns ?? 1 };
        inst(e.task, e.key).usage = addUsageSummary(inst(e.task, e.key).usage, u);
        state.spend = addUsageSummary(state.spend, u);
        break;
      }
      case 'instance_retry': {
        const s = inst(e.task, e.key);
        s.status = 'retrying';
        s.failure = e.failure;
        s.error = e.error;
        noteAttemptFailure(s, e.attempt, e.failure, e.error);
        if (e.uncharged) s.unchargedAttempts = (s.unchargedAttempts ?? 0) + 1;
        if (e.isolated) s.isolated = true;
        break;
      }
      case 'instance_done': {
        const s = inst(e.task, e.key);
        s.status = 'done';
        s.output = e.output;
        if (e.text !== undefined) s.text = e.text;
        if (e.summary !== undefined) s.summary = e.summary;
        if (e.modifiedFiles) s.modifiedFiles = e.modifiedFiles;
        if (e.patchFile) s.patchFile = e.patchFile;
        if (e.branch) s.branch = e.branch;
        if (e.applied) s.applied = e.applied;
        s.durationMs = e.durationMs;
        delete s.failure;
        delete s.error;
        break;
      }
      case 'instance_failed': {
        const s = inst(e.task, e.key);
        s.failure = e.failure;
        s.error = e.error;
        s.durationMs = e.durationMs;
        if (e.final) s.status = e.failure === 'cancelled' ? 'cancelled' : 'failed';
        noteAttemptFailure(s, e.attempt, e.failure, e.error);
        break;
      }
      case 'instance_skipped':
        inst(e.task, e.key).status = 'skipped';
        break;
      default:
        break;
    }
  }
  return state;
}
