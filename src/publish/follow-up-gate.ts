// The gate before a follow-up round pushes (`approve:` in `publish.follow_up`). A round whose agent
// made a change under such a gate is not pushed (and no comment answered): approval_requested
// (gate follow_up, keyed by the instance and the round) goes to the run log and `publish
// --follow-up --apply` ends saying how to answer. `orchestrate approve|reject <run> --follow-up`
// (or the MCP server) writes approval_given into the log under the run's lease, as for a publish
// gate of a run that ended; the next `--apply` pushes an approved round and drops a rejected one
// (it still counts against max_rounds). A gate's timeout is checked by each `--apply`: past its
// deadline the gate is answered with its on_timeout. All of it is folded, so a kill -9 anywhere
// finds the same gate again.
import type { ApproveGate } from '../recipe/loaded-recipe.js';
import type { Changeset } from '../run/changesets.js';
import { followUpAnswer, type FollowUpRecord } from '../run/follow-up-record.js';
import type { RunState } from '../run/run-fold.js';
import type { RunEventInput } from '../run/run-events.js';
import type { ApprovalAnswer } from '../run/run-control.js';
import { appendAnswers, decisionOf, type OfflineEndGate } from '../orchestrator/control/approval-offline.js';
import { describeApproval } from '../run/approval-record.js';
import { didYouMean } from '../util/did-you-mean.js';

/** The gate's request for one round: its prompt names the changeset, the round and the files it changed. */
export function roundGateRequest(args: {
  gate: ApproveGate;
  c: Pick<Changeset, 'key' | 'task' | 'instance' | 'branch'>;
  round: Pick<FollowUpRecord, 'round' | 'reason'>;
  files: readonly string[];
  now: number;
}): RunEventInput {
  const { gate, c, round } = args;
  const files = args.files.length ? args.files.join(', ') : 'no file named';
  return {
    type: 'approval_requested',
    gate: 'follow_up',
    task: c.task,
    key: c.instance,
    round: round.round,
    prompt: `${gate.prompt} — ${c.key} round ${round.round} (${round.reason.replace('_', ' ')}) on ${c.branch}: ${files}`,
    ...(gate.timeoutMs !== undefined ? { deadline: args.now + gate.timeoutMs } : {}),
    onTimeout: gate.onTimeout,
  };
}

/** The answer a passed deadline gives a waiting round (undefined: none passed). */
export function timeoutAnswer(
  c: Pick<Changeset, 'task' | 'instance'>,
  r: FollowUpRecord,
  now: number,
): RunEventInput | undefined {
  const rec = r.approval;
  if (rec?.state !== 'waiting' || rec.deadline === undefined || rec.deadline > now) return undefined;
  return {
    type: 'approval_given',
    gate: 'follow_up',
    task: c.task,
    key: c.instance,
    round: r.round,
    decision: rec.onTimeout === 'approve' ? 'approved' : 'rejected',
    by: 'timeout',
    via: 'timeout',
    note: `no answer by ${new Date(rec.deadline).toISOString()}`,
  };
}

/** What `publish --follow-up` says of a round waiting at its gate: the prompt and how to answer it. */
export function awaitingText(runId: string, c: Pick<Changeset, 'task' | 'instance'>, r: FollowUpRecord): string {
  const rec = r.approval!;
  return `round ${r.round} is ${describeApproval(rec)}; nothing was pushed. Answer it: ${followUpAnswer(runId, c)} (or reject), then publish ${runId} --follow-up --apply`;
}

/** Rounds waiting at their gate in the fold, with their instance, narrowed by the answer's task and instance. */
function waitingRounds(fold: RunState, a: ApprovalAnswer): { task: string; key: string; round: number }[] {
  const out: { task: string; key: string; round: number }[] = [];
  for (const inst of fold.instances.values()) {
    if (a.task !== '*' && inst.task !== a.task) continue;
    if (a.instance !== undefined && inst.key !== a.instance) continue;
    for (const r of inst.followUps ?? [])
      if (r.approval?.state === 'waiting' && !out.some((o) => o.key === inst.key && o.round === r.round))
        out.push({ task: inst.task, key: inst.key, round: r.round });
  }
  return out;
}

/**
 * A follow-up round's gate answered (the caller holds the run's lease and folded its log): every
 * waiting round the answer names (its task or '*', its instance) gets approval_given.
 */
export const answerFollowUpGateOffline: OfflineEndGate = (runDir, runId, fold, a, by) => {
  const rounds = waitingRounds(fold, a);
  if (!rounds.length) {
    const { instance: _i, ...anyInstance } = a;
    const waiting = waitingRounds(fold, { ...anyInstance, task: '*' });
    const near = a.task !== '*' ? didYouMean(a.task, [...new Set(waiting.map((r) => r.task))]) : undefined;
    return {
      ok: false,
      error:
        waiting.length === 0
          ? `run ${runId} has no follow-up round waiting for approval (publish.follow_up.approve); \`orchestrate publish ${runId} --follow-up --apply\` asks for one once a round has made its change`
          : `no follow-up round of ${a.task === '*' ? 'any task' : a.task}${a.instance ? ` instance ${a.instance}` : ''} is waiting for approval; ${near ? `did you mean --task ${near}? ` : ''}waiting: ${waiting.map((r) => `--task ${r.task} --instance ${r.key} (round ${r.round})`).join(', ')}`,
    };
  }
  const decision = decisionOf(a);
  const error = appendAnswers(
    runDir,
    rounds.map((r) => ({ gate: 'follow_up' as const, ...r })),
    decision,
    a,
    by,
  );
  if (error) return { ok: false, error };
  const named = rounds.map((r) => `${r.key} round ${r.round}`).join(', ');
  return {
    ok: true,
    message:
      decision === 'approved'
        ? `approved follow-up ${named}: \`orchestrate publish ${runId} --follow-up --apply\` pushes it`
        : `rejected follow-up ${named}: it is dropped (not pushed; it counts against max_rounds)`,
  };
};
