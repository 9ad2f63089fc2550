// The run event log schema (version 1). Every line of run.jsonl and every line of
// `orchestrate <recipe> --json` is one of these events. Consumers parse them with RunEventSchema.
//
// Every event carries: v (schema version), ts (epoch ms), runId; events about one task instance
// also carry task, key (the instance key), attempt (1-based) and parent (the task's id for
// instances, or the pair's task id for planner/worker members).
import { z } from 'zod';
import { CallFallbackSchema } from './call-fallback.js';
import { FailureClassSchema, UsageSummarySchema } from './usage-summary.js';
import { BOARD_CHANGES, BoardItemSchema } from './board-record.js';
import { RUN_END_STATUSES } from './instance-record.js';
import { AttemptLandedFields, AttemptPickFields } from './attempt-pick-record.js';
import { TrainStepFields } from './train-record.js';

export const RUN_EVENT_VERSION = 1;

/** How an approval gate was answered: `orchestrate approve|reject`, the run view, `watch`, the MCP server, its timeout, or the web view (`orchestrate serve`). */
export const APPROVAL_CHANNELS = ['cli', 'view', 'watch', 'mcp', 'timeout', 'web'] as const;
export type ApprovalChannel = (typeof APPROVAL_CHANNELS)[number];

const Base = z.object({
  v: z.literal(RUN_EVENT_VERSION),
  ts: z.number(),
  runId: z.string(),
});

const InstanceRef = Base.extend({
  task: z.string(),
  key: z.string(),
  attempt: z.number().int().min(1),
  parent: z.string().optional(),
});

// Usage and failure classes live in usage-summary.ts, a fallback call's shape in call-fallback.ts:
// worker threads need them without this module's schemas (building every event schema cost each
// thread start-up time).
export { CallFallbackSchema } from './call-fallback.js';
export {
  UsageSummarySchema,
  FAILURE_CLASSES,
  FailureClassSchema,
  zeroUsage,
  addUsageSummary,
  type UsageSummary,
  type FailureClass,
} from './usage-summary.js';

export const RunEventSchema = z.discriminatedUnion('type', [
  Base.extend({
    type: z.literal('run_start'),
    /** The recipe file; relative to `root` (logs before `root` existed: absolute). */
    recipe: z.string(),
    /** The run's root (the recipe's folder, where its paths resolve from), relative to the run folder; see run-paths.ts. */
    root: z.string().optional(),
    name: z.string(),
    recipeHash: z.string(),
    inputs: z.record(z.string(), z.unknown()),
    /** Task ids in topological order with their static instance keys. */
    plan: z.array(
      z.object({ task: z.string(), keys: z.array(z.string()), needs: z.array(z.string()), dynamic: z.boolean() }),
    ),
    resumed: z.boolean().optional(),
    /** Command-line overrides (model, provider, concurrency, budgetUsd) so a resume runs the same way. */
    overrides: z.record(z.string(), z.unknown()).optional(),
    /** The run's budget after overrides, for live meters (the display reads it from here). */
    budget: z.object({ usd: z.number().optional(), tokens: z.number().optional() }).optional(),
  }),
  Base.extend({
    type: z.literal('run_resume'),
    previousStatus: z.string().optional(),
    /** The recipe file differs from the one the run started with (finished instances are kept anyway). */
    recipeChanged: z.boolean().optional(),
    /**
     * Where this session's recipe and its files came from (run/trusted-recipe.ts): captured (the
     * copies taken at the run's start), reloaded (`--reload-recipe`: the live files, captured
     * again; reloadedBy names who asked) or uncaptured (a run of an older version). changed: the
     * files that differ from their captured copy, with a short diff.
     */
    inputs: z
      .object({
        source: z.enum(['captured', 'reloaded', 'uncaptured']),
        reloadedBy: z.string().optional(),
        changed: z.array(
          z.object({
            file: z.string(),
            change: z.enum(['modified', 'created', 'deleted']),
            diff: z.string().optional(),
          }),
        ),
      })
      .optional(),
    /** The budget of the resumed run when it changed (e.g. raised with --budget-usd). */
    budget: z.object({ usd: z.number().optional(), tokens: z.number().optional() }).optional(),
    /** The command-line overrides in force from here on (run_start's, then each resume's), so a later resume keeps them. */
    overrides: z.record(z.string(), z.unknown()).optional(),
  }),
  Base.extend({ type: z.literal('task_expanded'), task: z.string(), keys: z.array(z.string()) }),
  InstanceRef.extend({ type: z.literal('instance_queued') }),
  InstanceRef.extend({
    type: z.literal('instance_start'),
    sessionFile: z.string().optional(),
    cwd: z.string().optional(),
    resumedFromLeaf: z.boolean().optional(),
    /** Git state when the instance first started: the patch is the diff against baseTree. */
    baseCommit: z.string().optional(),
    baseTree: z.string().optional(),
    repoRoot: z.string().optional(),
    /** The worktree the instance runs in (isolation: worktree). */
    worktree: z.string().optional(),
    /**
     * The repository's remotes (name → URL, credentials removed) at the run's first snapshot of
     * it, before any agent ran there: a publish `remote:` that is a name resolves here.
     */
    remotes: z.record(z.string(), z.string()).optional(),
    /** Distributed runs: the worker process that took the instance (`orchestrate worker --name`). */
    worker: z.string().optional(),
    /** The for_each item and the rendered prompt: what `publish --rebase` runs the instance with again. */
    item: z.unknown().optional(),
    prompt: z.string().optional(),
  }),
  /**
   * Distributed runs: an agent of the instance runs on `worker` besides the one instance_start
   * named: the other member of a pair, or a worker that took the agent over from a dead one.
   */
  InstanceRef.extend({
    type: z.literal('instance_worker'),
    agent: z.string(),
    worker: z.string(),
    takeover: z.boolean().optional(),
  }),
  InstanceRef.extend({ type: z.literal('permit_wait'), model: z.string(), reason: z.string() }),
  InstanceRef.extend({ type: z.literal('permit_grant'), model: z.string(), waitedMs: z.number() }),
  InstanceRef.extend({ type: z.literal('permit_deny'), model: z.string(), reason: z.string() }),
  /** One model call's real usage (every call, summaries included): rebuilds spend on resume. */
  InstanceRef.extend({
    type: z.literal('call_usage'),
    model: z.string(),
    /** The provider that served the call (anthropic, scripted, or a name under providers:); absent in older logs. */
    provider: z.string().optional(),
    usage: UsageSummarySchema,
  }),
  InstanceRef.extend({
    type: z.literal('rate_limited'),
    model: z.string(),
    delayMs: z.number(),
    status: z.number().optional(),
  }),
  /** A call that left the agent's own model (CallFallbackSchema). Calls on the own model log none. */
  InstanceRef.extend(CallFallbackSchema.shape),
  /** A child agent's own event (AgentSession event), forwarded as-is. */
  InstanceRef.extend({ type: z.literal('agent_event'), event: z.object({ type: z.string() }).passthrough() }),
  InstanceRef.extend({ type: z.literal('message'), from: z.string(), to: z.string(), text: z.string() }),
  InstanceRef.extend({ type: z.literal('verify'), command: z.string(), ok: z.boolean(), output: z.string() }),
  InstanceRef.extend({
    type: z.literal('instance_retry'),
    failure: FailureClassSchema,
    error: z.string(),
    delayMs: z.number(),
    /** Not this instance's doing (collateral, or a crash of a shared thread): not counted against its retries. */
    uncharged: z.boolean().optional(),
    /** The next attempts run on a thread of their own. */
    isolated: z.boolean().optional(),
  }),
  InstanceRef.extend({
    type: z.literal('instance_done'),
    output: z.unknown(),
    text: z.string().optional(),
    usage: UsageSummarySchema,
    summary: z.string().optional(),
    modifiedFiles: z.array(z.string()).optional(),
    patchFile: z.string().optional(),
    /** merge: branch: the branch holding the instance's work. */
    branch: z.string().optional(),
    /** merge: apply: its patch was applied to the checkout. */
    applied: z.boolean().optional(),
    durationMs: z.number(),
    /** Planner/worker pairs: review rounds held, and whether the planner approved. */
    rounds: z.number().optional(),
    approved: z.boolean().optional(),
  }),
  InstanceRef.extend({
    type: z.literal('instance_failed'),
    failure: FailureClassSchema,
    error: z.string(),
    final: z.boolean(),
    usage: UsageSummarySchema.optional(),
    durationMs: z.number(),
    /** attempts: the work of an attempt that will not land, kept in the run folder (relative to it). */
    patchFile: z.string().optional(),
  }),
  InstanceRef.extend({ type: z.literal('instance_skipped'), reason: z.string() }),
  /**
   * `orchestrate publish --rebase`: a done instance's agent runs again (this attempt) on its
   * changeset's base branch as it is now (`baseCommit`, fetched from the remote), in a fresh
   * worktree; `fromCommit` is the base its change was made on. Its agent's events follow with
   * the same attempt; instance_rebase_end closes it.
   */
  InstanceRef.extend({
    type: z.literal('instance_rebase_start'),
    base: z.string(),
    baseCommit: z.string(),
    fromCommit: z.string(),
    /** Relative to the run folder. */
    sessionFile: z.string(),
  }),
  /**
   * The rebase's end. ok: the instance's record now holds the new base (git commit and tree), the
   * new patch (patchFile, relative to the run folder), summary and text; its changeset follows.
   * Not ok (the agent failed, or its change came out empty): nothing of the instance changes.
   */
  InstanceRef.extend({
    type: z.literal('instance_rebase_end'),
    ok: z.boolean(),
    base: z.string(),
    baseCommit: z.string(),
    fromCommit: z.string(),
    baseTree: z.string().optional(),
    text: z.string().optional(),
    summary: z.string().optional(),
    patchFile: z.string().optional(),
    modifiedFiles: z.array(z.string()).optional(),
    failure: FailureClassSchema.optional(),
    error: z.string().optional(),
    usage: UsageSummarySchema,
    durationMs: z.number(),
  }),
  /** A step of the merge train (`land: train`, train-record.ts): landing, landed, conflict, verify_failed, repair, failed. */
  InstanceRef.extend(TrainStepFields),
  /** Best-of-N attempts (attempt-pick-record.ts): which attempt of an instance was picked and why; then its landing. */
  Base.extend(AttemptPickFields),
  Base.extend(AttemptLandedFields),
  /**
   * `orchestrate publish --follow-up`: a published changeset's pull request failed CI or got review
   * comments, and the instance's agent runs again (this attempt) on its branch as orchestrate
   * pushed it (`fromCommit`), with the evidence as its first message. A round is named by its
   * changeset's instance, `round` and `evidence` (the head commit CI failed on, the comments).
   */
  InstanceRef.extend({
    type: z.literal('instance_followup_start'),
    round: z.number(),
    reason: z.enum(['ci_failed', 'changes_requested']),
    evidence: z.string(),
    fromCommit: z.string(),
    /** Relative to the run folder. */
    sessionFile: z.string(),
  }),
  /**
   * The round's end. ok: its change (patchFile, relative to the run folder: a patch on fromCommit)
   * is made; its commit (dated at this event) goes on top of fromCommit. Not ok: nothing is pushed.
   */
  InstanceRef.extend({
    type: z.literal('instance_followup_end'),
    round: z.number(),
    evidence: z.string(),
    ok: z.boolean(),
    patchFile: z.string().optional(),
    text: z.string().optional(),
    failure: FailureClassSchema.optional(),
    error: z.string().optional(),
    usage: UsageSummarySchema,
    durationMs: z.number(),
  }),
  /** The round's commit is on the changeset's branch (pushed, or found there after a restart). */
  InstanceRef.extend({
    type: z.literal('instance_followup_pushed'),
    round: z.number(),
    evidence: z.string(),
    commit: z.string(),
  }),
  Base.extend({ type: z.literal('budget_exhausted'), reason: z.string() }),
  /**
   * An agent (`by`) learned a model's context window from its server's overflow error: every
   * agent of the run (and of a resume) uses it from now on (ai/learned-windows.ts).
   */
  Base.extend({
    type: z.literal('window_learned'),
    by: z.string(),
    provider: z.string(),
    baseUrl: z.string().optional(),
    model: z.string(),
    window: z.number(),
  }),
  /**
   * A task with `approve:` reached its gate (approval-gates.ts): the instance `key` waits, spending
   * nothing, until a user answers or `deadline` (epoch ms, absolute so a resume keeps it) passes
   * and `onTimeout` answers. A resume that finds the gate still waiting logs it again.
   */
  Base.extend({
    type: z.literal('approval_requested'),
    task: z.string(),
    key: z.string(),
    prompt: z.string(),
    deadline: z.number().optional(),
    onTimeout: z.enum(['approve', 'reject']),
    /**
     * `publish`: the publish gate of `task` (publish.approve), not an instance's; `key` is the task.
     * `follow_up`: the gate before follow-up round `round` of instance `key` pushes (follow_up.approve).
     */
    gate: z.enum(['publish', 'follow_up']).optional(),
    round: z.number().optional(),
  }),
  /**
   * The gate's answer: who (`by`: the OS user, `--as NAME`, or "timeout"), through which channel,
   * with the note. `offline`: written into the run folder while no coordinator held it (under
   * the run's lease); the next resume applies it.
   */
  Base.extend({
    type: z.literal('approval_given'),
    task: z.string(),
    key: z.string(),
    decision: z.enum(['approved', 'rejected']),
    by: z.string(),
    via: z.enum(APPROVAL_CHANNELS),
    note: z.string().optional(),
    offline: z.boolean().optional(),
    gate: z.enum(['publish', 'follow_up']).optional(),
    /** gate follow_up: the round answered. */
    round: z.number().optional(),
  }),
  /**
   * A changeset the run published once its publish gate was approved (publish-gate.ts), as
   * `orchestrate publish --apply` would: `outcome` opened, pushed, updated, unchanged, empty,
   * refused or failed, `detail` the pull request's URL or why (never a token).
   */
  Base.extend({
    type: z.literal('changeset_published'),
    task: z.string(),
    key: z.string(),
    outcome: z.string(),
    detail: z.string().optional(),
  }),
  /**
   * The run-wide task board changed (board-record.ts): `item` is the whole item after the
   * change, `by` who changed it (an agent's instance id, or `recipe` for a `board:` seed).
   */
  Base.extend({
    type: z.literal('board_task'),
    change: z.enum(BOARD_CHANGES),
    by: z.string(),
    item: BoardItemSchema,
  }),
  /**
   * A user drove the live run (run view, `orchestrate watch`, `cancel`, `steer`): accepted
   * (`ok`) or refused, with the reply. `instance` is absent for cancel_run; `by` says who
   * (e.g. "cancel (pid 4242, user ana)"); `text` is a steering message.
   */
  Base.extend({
    type: z.literal('control'),
    action: z.enum(['cancel', 'steer', 'retry', 'cancel_run', 'approve', 'reject']),
    instance: z.string().optional(),
    by: z.string(),
    text: z.string().optional(),
    ok: z.boolean(),
    message: z.string().optional(),
  }),
  Base.extend({
    type: z.literal('run_end'),
    /** partial: some instances were cancelled by a user, none failed (instance-record.ts RUN_END_STATUSES). */
    status: z.enum(RUN_END_STATUSES),
    usage: UsageSummarySchema,
    durationMs: z.number(),
  }),
]);

export type RunEvent = z.infer<typeof RunEventSchema>;
export type RunEventType = RunEvent['type'];

/** Distributes Omit over the union so each variant keeps its own fields. */
type DistributiveOmit<T, K extends PropertyKey> = T extends unknown ? Omit<T, K> : never;
/** An event before the log stamps it with v, ts and runId. */
export type RunEventInput = DistributiveOmit<RunEvent, 'v' | 'ts' | 'runId'>;
