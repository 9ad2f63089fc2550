// `orchestrate show <run> --json`: what `show` prints, as data for scripts. Built from the event
// log like the text view, so it works for finished, failed and interrupted runs alike (result.json
// only exists once a run has ended).
import type { Conversation } from './session-conversation.js';
import type { RunFolder } from './run-folder.js';
import { sessionFileOf } from './run-folder.js';
import { instancesInTaskOrder, isFinished, type InstanceState } from '../run/run-fold.js';
import { attemptFacts } from '../run/run-queries.js';
import { attemptsWork, notPickedAttempt } from '../run/attempt-pick-record.js';
import { followUpWaiting } from '../run/follow-up-record.js';

function instanceJson(dir: string, i: InstanceState): Record<string, unknown> {
  return {
    task: i.task,
    key: i.key,
    status: i.status,
    attempts: i.attempts.map((a) => ({
      attempt: a.attempt,
      outcome: a.outcome,
      ...(a.failure ? { failure: a.failure } : {}),
      ...(a.error ? { error: a.error } : {}),
    })),
    ...(i.failure ? { failure: i.failure } : {}),
    ...(i.error ? { error: i.error } : {}),
    ...(i.skipReason ? { skipReason: i.skipReason } : {}),
    ...(i.warnings?.length ? { warnings: i.warnings } : {}),
    ...(i.fallbacks?.length ? { fallbacks: i.fallbacks } : {}),
    ...(i.approval ? { approval: i.approval } : {}),
    ...(i.output !== undefined ? { output: i.output } : {}),
    ...(i.summary ? { summary: i.summary } : {}),
    ...(i.modifiedFiles?.length ? { modifiedFiles: i.modifiedFiles } : {}),
    ...(i.patchFile ? { patchFile: i.patchFile } : {}),
    ...(i.branch ? { branch: i.branch } : {}),
    ...(i.applied ? { applied: true } : {}),
    ...(i.finalUsage ? { usage: i.finalUsage } : {}),
    ...(i.durationMs !== undefined ? { durationMs: i.durationMs } : {}),
    sessionFile: sessionFileOf(dir, i),
  };
}

function followUpsWaiting(s: RunFolder['state']): { followUpsWaiting?: Record<string, unknown>[] } {
  const out = instancesInTaskOrder(s).flatMap((i) => {
    const w = followUpWaiting(s, { task: i.task, instance: i.key });
    return w ? [{ task: i.task, instance: i.key, ...w }] : [];
  });
  return out.length ? { followUpsWaiting: out } : {};
}

/** The run: status, usage, and every instance in task order. */
export function runJson(folder: RunFolder): Record<string, unknown> {
  const s = folder.state;
  return {
    runId: s.runId,
    name: s.name,
    recipe: s.recipe,
    // The session's run_end is the truth even while its coordinator still holds the lease (it
    // writes run_end, then result.json, then lets go). A log without run_end is a live run only
    // while a coordinator holds its lease.
    status:
      s.status !== 'running'
        ? s.status
        : folder.holder
          ? [...s.publishGates.values()].some((g) => g.state === 'waiting')
            ? 'waiting'
            : 'running'
          : 'interrupted',
    ...(folder.holder && s.status === 'running'
      ? {
          coordinator: {
            pid: folder.holder.pid,
            host: folder.holder.host,
            startedAt: new Date(folder.holder.startedAt).toISOString(),
            heartbeatAt: new Date(folder.holder.heartbeatAt).toISOString(),
          },
        }
      : {}),
    resumed: s.resumed,
    startedAt: new Date(s.startTs).toISOString(),
    ...(s.endTs !== undefined ? { endedAt: new Date(s.endTs).toISOString() } : {}),
    ...(s.durationMs !== undefined ? { durationMs: s.durationMs } : {}),
    ...(s.endUsage ? { usage: s.endUsage } : {}),
    // Every call's spend per provider and per model within it (the same figures as result.json).
    providers: s.providers,
    ...(s.budgetUsd !== undefined ? { budgetUsd: s.budgetUsd } : {}),
    ...(s.budgetExhausted ? { budgetExhausted: s.budgetExhausted } : {}),
    dir: folder.dir,
    ...(folder.planFile ? { planFile: folder.planFile } : {}),
    // attempts: an attempt that lost to one that landed is marked notPicked (no failure of the run).
    instances: instancesInTaskOrder(s).map((i) => ({
      ...instanceJson(folder.dir, i),
      ...(isFinished(i) && notPickedAttempt(s.picks, i.key) ? { notPicked: true } : {}),
    })),
    // Publish gates (publish.approve) by task, and what the run published once one was approved.
    ...(s.publishGates.size ? { publishGates: Object.fromEntries(s.publishGates) } : {}),
    ...(s.published.length ? { published: s.published } : {}),
    // Follow-up rounds waiting at their gate (publish.follow_up.approve), with the command that answers each.
    ...followUpsWaiting(s),
    // attempts: the pick of each instance's attempts (attempt-pick-record.ts), when the run has any,
    // with every attempt's work (its patch) and why it did not land.
    ...(s.picks.size
      ? {
          picks: [...s.picks.values()].map((p) => ({
            ...p,
            attempts: attemptsWork(p, attemptFacts(s)),
          })),
        }
      : {}),
    // The run-wide task board (board_task events), when it has items.
    ...(s.board.size ? { board: [...s.board.values()] } : {}),
    // The merge train (land: train) as the fold keeps it, a plain object (train-record.ts).
    ...(Object.keys(s.train.cars).length ? { train: s.train } : {}),
    ...(folder.skipped.length ? { unreadableLogLines: folder.skipped } : {}),
  };
}

/** One instance's conversation (`show <run> --instance KEY --json`). */
export function conversationJson(folder: RunFolder, inst: InstanceState, conv: Conversation): Record<string, unknown> {
  return {
    runId: folder.state.runId,
    ...instanceJson(folder.dir, inst),
    conversation: conv.items,
    ...(conv.warnings.length ? { warnings: conv.warnings } : {}),
  };
}
