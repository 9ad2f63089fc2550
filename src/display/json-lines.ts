/*
 * `orchestrate <recipe> --json`: the run's events as JSON lines on stdout.
 *
 * THE EVENT SCHEMA (version 1; `RunEventSchema` below, the same schema as every line of run.jsonl)
 * ---------------------------------------------------------------------------------------------
 * One JSON object per line. Every event has
 *   v       schema version (1). A consumer should reject lines with a higher major version.
 *   ts      epoch milliseconds when the coordinator recorded it.
 *   runId   the run (folder name under .orchestrate/runs/).
 *   type    one of the names below.
 * Events about one task instance also carry
 *   task    the recipe task id;
 *   key     the instance key (a task without for_each has one instance whose key is the task id);
 *   attempt 1-based attempt number (a retry is attempt 2, ...);
 *   parent  the task id for fan-out instances, or the pair's task id for planner/worker members.
 *
 * Run events
 *   run_start        root: the run's root (the recipe's folder), relative to the run folder;
 *                    recipe: the recipe file, relative to root;
 *                    name, recipeHash, inputs, plan: [{task, keys, needs, dynamic}]
 *                    in topological order (dynamic: keys known only once the task is expanded),
 *                    resumed?: true when this run continues an earlier one, overrides?: the
 *                    command-line model/provider/concurrency/budgetUsd.
 *   run_resume       previousStatus?: the status the run had when it stopped; budget?, overrides?:
 *                    the budget and command-line overrides in force from here on (the next resume
 *                    starts from them); inputs?: {source: captured | reloaded | uncaptured,
 *                    reloadedBy?, changed: [{file, change: modified | created | deleted, diff?}]}:
 *                    where the recipe and its files came from (the copies captured at the run's
 *                    start, the live files with --reload-recipe, or an older run's live files) and
 *                    which files differ from their capture (file relative to root).
 *   task_expanded    task, keys: the instances of a for_each task, once its input is known.
 *   budget_exhausted reason: no further model calls are permitted.
 *   run_end          status: succeeded | partial | failed | interrupted | budget_exhausted, usage,
 *                    durationMs (partial: some instances were cancelled by a user, none failed).
 * Instance lifecycle
 *   instance_queued  waiting for a concurrency slot.
 *   instance_start   sessionFile?, cwd?, resumedFromLeaf?: continues an existing session,
 *                    baseCommit? / baseTree? / repoRoot? / worktree?: git state for the patch.
 *                    cwd and repoRoot are relative to root, sessionFile and worktree to the run
 *                    folder (`../` when outside them; logs of older versions: absolute), so a
 *                    copied project folder resumes on its own files. readRunLog resolves them.
 *                    item?, prompt?: the for_each item and the rendered prompt.
 *   instance_worker  agent, worker, takeover?: distributed runs: an agent of the instance runs on
 *                    another worker (a pair's other member, or a takeover from a dead worker).
 *   instance_retry   failure (class), error, delayMs: this attempt failed and another follows.
 *   instance_done    output (parsed JSON for `output: json`, else text), text?, usage, summary?,
 *                    modifiedFiles?, patchFile?, durationMs, rounds? / approved? (pairs).
 *                    usage is the instance's total as the coordinator counted it.
 *   instance_failed  failure, error, final (false: a retry follows), usage?, durationMs, patchFile?
 *                    (attempts: the work of an attempt that did not land, kept in the run folder).
 *   (A retried attempt is reported by instance_retry alone; instance_failed is the final word.)
 *   instance_skipped reason (a task it needs failed, or the budget ran out).
 *   instance_rebase_start / instance_rebase_end   `publish --rebase`: a done instance's agent runs
 *                    again (a new attempt) on its changeset's moved base branch: base, baseCommit
 *                    (the new base), fromCommit, sessionFile (start); ok, text?, summary?,
 *                    patchFile?, modifiedFiles?, failure?, error?, usage, durationMs (end). An ok
 *                    end moves the instance to the new base and patch; its status stays done.
 *   instance_followup_start / instance_followup_end / instance_followup_pushed   `publish
 *                    --follow-up --apply`: a round of a changeset's follow-up (CI failed, changes
 *                    requested): round, evidence (what it answers), reason, fromCommit, sessionFile
 *                    (start); ok, patchFile?, text?, failure?, error?, usage, durationMs (end);
 *                    commit (pushed: on the branch, pushed now or found there after a restart).
 *   train_step       phase: waiting | landing | landed | conflict | verify_failed | repair | failed,
 *                    repo: the merge train (land: train) landing the instance's work in repo:
 *                    tipTree?, tree? (the merged tree), commit? (landed), files? (landed, or
 *                    conflicting), verify? [{command, ok, output}] on the merged tree; repair?,
 *                    baseCommit?, baseTree?, worktree?, prompt? (a repair on the new tip);
 *                    behind?, behindKeys?, text?, summary? (waiting, land_order: task: its agent
 *                    has finished and its work waits for its turn behind those earlier tasks and
 *                    instances; its answer kept for a resume); failure?, error?.
 *   attempt_pick     task, group (the instance), rule: verify | judge | first, picked?, reason,
 *                    candidates [{key, attempt, model?, outcome: passed | failed | cancelled |
 *                    skipped, verify?, lines?, cost, failure?, error?, patchFile?}], judge? {model?,
 *                    cost}: which attempt of an instance (attempts: N) lands and why; none picked:
 *                    no attempt passed and the instance fails.
 *   attempt_landed   task, group, key, ok, patchFile?, branch?, applied?, files?, failure?, error?:
 *                    where the picked attempt's work went (as instance_done says for others).
 * Model access
 *   permit_wait      model, reason: the call waits for a rate-limit slot or a budget reservation.
 *   permit_grant     model, waitedMs.
 *   permit_deny      model, reason (budget exhausted, run stopping).
 *   call_usage       model, provider?, usage: the real usage of one model call (summaries included);
 *                    the sum of these is the run's spend, interrupted attempts included (grouped per
 *                    provider and model in result.json's `providers`).
 *   window_learned   by, provider, baseUrl?, model, window: an agent's server stated a smaller
 *                    context window in an overflow error; every agent of the run uses it from now on.
 *   rate_limited     model, delayMs, status?: the provider said 429/529; the call is retried.
 *   call_fallback    primary, served, reason, kind?, status?, failed?: a call that did not end on
 *                    the agent's own model (recipe fallback:): who served it and why the models
 *                    before it were not used (their failure, or a cool-down after one).
 * Inside an agent
 *   agent_event      event: the child's AgentSession event, slimmed where it would repeat data:
 *                      agent_start, agent_end {messageCount},
 *                      turn_start, turn_end {stopReason, usage, toolResults (a count)},
 *                      message_start {role: "assistant"} or {message} for other roles,
 *                      message_end {message},
 *                      message_update {assistantMessageEvent}        (token deltas: only with full events),
 *                      tool_execution_start {toolCallId, toolName, args},
 *                      tool_execution_update {toolCallId, toolName, partialResult}   (only with full events),
 *                      tool_execution_end {toolCallId, toolName, result, isError},
 *                      compaction_start / compaction_end, auto_compaction_start / auto_compaction_end,
 *                      auto_retry_start {attempt, maxAttempts, delayMs, errorMessage} / auto_retry_end,
 *                      loop_warning {pattern, detail}, run_stopped {kind, message} (a guard stopped it).
 *                    "Full events" (`--full-events`, the `json-full` display mode) also log and
 *                    print the streaming deltas; without it the coordinator does not forward them.
 *   message          from, to, text: an agent-to-agent message (pairs, send_message).
 *   verify           command, ok, output: the task's verify command after the agent finished.
 *   board_task       change (created, claimed, released, updated, completed), by (an instance id, or
 *                    "recipe" for a board: seed), item {id, subject, description?, status, owner?,
 *                    blockedBy, notes [{ts, by, text}], createdBy}: the task board item after the change.
 * Approval gates and publishing
 *   approval_requested  task, key, prompt, onTimeout (approve | reject), deadline? (epoch ms):
 *                    an instance with `approve:` waits, spending nothing, for an answer. gate:
 *                    "publish" marks the publish gate of `task` (publish.approve; key is the
 *                    task): the run's changesets wait to be pushed. A resume logs it again.
 *                    gate "follow_up" with round: follow-up round `round` of instance `key`
 *                    waits to be pushed (publish.follow_up.approve); approval_given answers it.
 *   approval_given   task, key, decision (approved | rejected), by (the OS user, --as NAME, or
 *                    "timeout"), via (cli, view, watch, mcp, timeout or web), note?, offline?
 *                    (answered while no coordinator held the run), gate? ("publish", as above).
 *   control          action (cancel, steer, retry, cancel_run, approve, reject), instance?, by,
 *                    text?, ok, message?: a user drove the live run; accepted or refused.
 *   changeset_published  task, key, outcome (opened, pushed, updated, unchanged, empty, refused,
 *                    failed), detail? (the pull request's URL, or why): what an approved publish
 *                    gate published, as `orchestrate publish --apply` would.
 * Failure classes: rate_limit, overloaded, timeout, stalled, crashed, verify_failed, budget,
 * aborted, output_invalid, error, loop, max_turns, compaction (a runtime guard stopped the agent;
 * its agent_event run_stopped {kind, message} comes first), not_approved (a pair out of rounds).
 *
 * Compatibility: new event types and new optional fields may appear within version 1; a
 * consumer should ignore what it does not know. Removing or retyping a field bumps `v`.
 */
import { RUN_EVENT_VERSION, RunEventSchema, type RunEvent } from '../run/run-events.js';
import type { RunStore } from '../run/run-store.js';

export {
  FAILURE_CLASSES,
  RUN_EVENT_VERSION,
  RunEventSchema,
  type RunEvent,
  type RunEventType,
} from '../run/run-events.js';

export interface JsonLinesOptions {
  /** Include message_update token deltas (`--json=full`). */
  full: boolean;
}

/** A token delta: one per streamed chunk, so only `--json=full` carries them. */
export function isMessageDelta(e: RunEvent): boolean {
  return e.type === 'agent_event' && e.event.type === 'message_update';
}

export function formatJsonLine(e: RunEvent): string {
  return `${JSON.stringify(e)}\n`;
}

/** Parses one line of `--json` output or run.jsonl; undefined when it is not a run event. */
export function parseJsonLine(line: string): RunEvent | undefined {
  let raw: unknown;
  try {
    raw = JSON.parse(line);
  } catch {
    return undefined;
  }
  const parsed = RunEventSchema.safeParse(raw);
  return parsed.success && parsed.data.v === RUN_EVENT_VERSION ? parsed.data : undefined;
}

/**
 * Writes every event appended to `store` from now on to `out`, one JSON line each. Events already
 * in the log (a resumed run's history) are not repeated: the stream describes this invocation.
 * Returns the unsubscribe function.
 */
export function attachJsonLines(
  store: RunStore,
  out: Pick<NodeJS.WritableStream, 'write'>,
  options: JsonLinesOptions,
): () => void {
  return store.subscribe((e) => {
    if (!options.full && isMessageDelta(e)) return;
    out.write(formatJsonLine(e));
  });
}
