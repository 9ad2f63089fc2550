// The life of one attempt as pure decisions: from an instance's state and what its attempt
// returned, the event to log (instance_queued / instance_start / instance_done / instance_retry /
// instance_failed / instance_skipped). The coordinator records the event (run.jsonl) and the run
// fold (run/run-fold.ts) applies it to the instance, so a status changes in one place only: the
// fold. The one transition that is not logged is `interrupted` (see interrupted()).
import { ORCHESTRATOR_DEFAULTS } from '../defaults.js';
import { backoffDelay, isFailureClass, shouldRetry, type AttemptRetryRule } from './failure-policy.js';
import { parseJsonOutput } from '../execution/output-json.js';
import type { LoadedTask } from '../../recipe/index.js';
import type { FailureClass, RunEventInput } from '../../run/run-events.js';
import type { BudgetScope } from '../../run/usage-summary.js';
import type { InstanceState } from '../../run/run-state.js';
import type { StopReason } from '../control/control-decisions.js';

type EventOf<T extends RunEventInput['type']> = Extract<RunEventInput, { type: T }>;
export type RetryEvent = EventOf<'instance_retry'>;
export type FailedEvent = EventOf<'instance_failed'>;
export type DoneEvent = EventOf<'instance_done'>;

/** What a failed attempt returned (WorkerResult without ok), as far as the decision needs it. */
export interface FailedAttempt {
  failure: string;
  error: string;
  /** A shared thread was stopped for another agent. */
  collateral?: boolean;
  /** A shared thread crashed; nobody can tell which of its agents did it. */
  sharedCrash?: boolean;
  /** The budget whose refusal ended the attempt (failure `budget`): the run's stops the run. */
  budgetScope?: BudgetScope;
  /** The reason without its class's wording (a budget's: what was spent). */
  detail?: string;
}

export type FailureVerdict =
  /** A user cancelled it: final, never retried. */
  | { kind: 'cancelled'; event: FailedEvent }
  /** The run is being interrupted: not a failure of the work; resume continues it from its session. */
  | { kind: 'interrupted' }
  | { kind: 'retry'; event: RetryEvent }
  /** Final; `runBudgetSpent`: the run's budget refused the attempt, so nothing new may start. */
  | { kind: 'failed'; event: FailedEvent; runBudgetSpent?: string };

export function retryPolicy(task: LoadedTask): AttemptRetryRule {
  const r = task.retries;
  return {
    count: r.count,
    initialMs: r.backoff.initialMs,
    maxMs: r.backoff.maxMs,
    factor: r.backoff.factor,
    on: r.on.filter(isFailureClass),
    jitter: ORCHESTRATOR_DEFAULTS.retryJitter,
  };
}

/** What a finished attempt's text means as the instance's output: parsed JSON (`output: json`), a command's trimmed output, or the reply. */
export function outputOf(task: LoadedTask, text: string): unknown {
  if (task.output === 'json') {
    const parsed = parseJsonOutput(text, task.outputSchema);
    return parsed.ok ? parsed.value : text;
  }
  return task.kind === 'run' ? text.trimEnd() : text;
}

const ref = (inst: InstanceState) => ({
  task: inst.task,
  key: inst.id,
  attempt: Math.max(1, inst.attempt),
  parent: inst.task,
});

export function queuedEvent(inst: InstanceState): EventOf<'instance_queued'> {
  return { type: 'instance_queued', task: inst.task, key: inst.id, attempt: inst.attempt + 1, parent: inst.task };
}

/** The start of the attempt the instance is in (its workspace prepared: cwd, session file, git base). */
export function startEvent(inst: InstanceState, resumedFromLeaf: boolean): EventOf<'instance_start'> {
  const g = inst.git;
  return {
    type: 'instance_start',
    ...ref(inst),
    cwd: inst.workCwd ?? inst.resolved!.cwd,
    ...(inst.sessionFiles[0] ? { sessionFile: inst.sessionFiles[0] } : {}),
    ...(resumedFromLeaf ? { resumedFromLeaf } : {}),
    // What the instance was asked, so `publish --rebase` can ask it again (the log redacts secrets).
    ...(inst.item !== undefined ? { item: inst.item } : {}),
    ...(inst.resolved?.prompt !== undefined ? { prompt: inst.resolved.prompt } : {}),
    ...(g
      ? {
          baseTree: g.tree,
          repoRoot: g.root,
          ...(g.commit ? { baseCommit: g.commit } : {}),
          ...(g.worktree ? { worktree: g.worktree } : {}),
          ...(g.remotes ? { remotes: g.remotes } : {}),
        }
      : {}),
  };
}

/** A finished attempt: what it returned, the files it changed (as displayed) and where its work landed. */
export function doneEvent(
  inst: InstanceState,
  result: { text: string; summary?: string; rounds?: number; approved?: boolean },
  modifiedFiles: string[],
  land: { patchFile?: string; branch?: string; applied?: boolean },
): DoneEvent {
  return {
    type: 'instance_done',
    ...ref(inst),
    output: inst.output ?? null,
    text: result.text,
    usage: inst.usage,
    ...(result.summary ? { summary: result.summary } : {}),
    ...(modifiedFiles.length ? { modifiedFiles } : {}),
    ...(land.patchFile ? { patchFile: land.patchFile } : {}),
    ...(land.branch ? { branch: land.branch } : land.applied ? { applied: true } : {}),
    durationMs: inst.durationMs ?? 0,
    ...(result.rounds !== undefined ? { rounds: result.rounds } : {}),
    ...(result.approved !== undefined ? { approved: result.approved } : {}),
  };
}

export function skippedEvent(inst: InstanceState, reason: string): EventOf<'instance_skipped'> {
  return { type: 'instance_skipped', ...ref(inst), reason };
}

/** The final failure of an instance (failure `cancelled`: a user ended it). */
export function failedEvent(inst: InstanceState, failure: FailureClass, error: string): FailedEvent {
  return {
    type: 'instance_failed',
    ...ref(inst),
    failure,
    error,
    final: true,
    usage: inst.usage,
    durationMs: inst.durationMs ?? 0,
  };
}

/**
 * Decides what follows a failed attempt: a cancel wins (the user asked), then an interrupt (not
 * the work's fault), then the retry policy. Attempts that failed through no fault of the instance
 * (collateral of a shared thread, or a shared thread's crash) are retried without counting; after
 * a crash it runs on a thread of its own, where a crash is its own.
 */
export function judgeFailedAttempt(args: {
  inst: InstanceState;
  task: LoadedTask;
  result: FailedAttempt;
  cancelledBy?: string;
  stopping?: StopReason;
  random?: () => number;
}): FailureVerdict {
  const { inst, result } = args;
  if (args.cancelledBy !== undefined)
    return { kind: 'cancelled', event: failedEvent(inst, 'cancelled', `cancelled by ${args.cancelledBy}`) };
  if (args.stopping === 'interrupted') return { kind: 'interrupted' };
  const failure: FailureClass = isFailureClass(result.failure) ? result.failure : 'error';
  const policy = retryPolicy(args.task);
  const uncharged = result.collateral === true || result.sharedCrash === true;
  const isolate = result.sharedCrash === true && !inst.isolated;
  const charged = inst.attempt - (inst.unchargedAttempts ?? 0) - (uncharged ? 1 : 0);
  if (!args.stopping && (uncharged || shouldRetry(policy, failure, charged))) {
    const delayMs = backoffDelay(policy, Math.max(1, charged), args.random);
    return {
      kind: 'retry',
      event: {
        type: 'instance_retry',
        ...ref(inst),
        failure,
        error: result.error,
        delayMs,
        ...(uncharged ? { uncharged: true } : {}),
        ...(isolate ? { isolated: true } : {}),
      },
    };
  }
  const event = failedEvent(inst, failure, result.error);
  if (failure === 'budget' && result.budgetScope === 'run')
    return { kind: 'failed', event, runBudgetSpent: result.detail ?? result.error };
  return { kind: 'failed', event };
}

/**
 * The one status change that is not logged: the run is interrupted while this instance was
 * running or waiting to retry. The log shows it unfinished, which is what resume reads.
 */
export function interrupted(inst: InstanceState, error?: string): void {
  inst.status = 'interrupted';
  if (error !== undefined) inst.error = error;
}
