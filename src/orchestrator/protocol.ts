// The coordinator <-> worker protocol carried over MessagePorts. Transport-agnostic on purpose:
// a later backend can carry the same messages over a distributed queue.
// Messages are validated at the boundary (parseWorkerMessage / parseCoordinatorMessage) because a
// malformed message from a thread must become a clear failure, not a crash of the coordinator.
import { z } from 'zod';
import { BudgetScopeSchema, FailureClassSchema, UsageSummarySchema } from '../run/usage-summary.js';
import { BOARD_STATUSES, BoardItemSchema } from '../run/board-record.js';
import { CallFallbackSchema } from '../run/call-fallback.js';
import { isRecord } from '../util/unknown-value.js';

/** One call of a board tool (worker/board-tools.ts), handled by the coordinator's TaskBoard. */
export const BoardRequestSchema = z.discriminatedUnion('op', [
  z.object({
    op: z.literal('create'),
    subject: z.string(),
    description: z.string().optional(),
    owner: z.string().optional(),
    blocked_by: z.array(z.string()).optional(),
  }),
  z.object({ op: z.literal('list'), status: z.enum(BOARD_STATUSES).optional(), owner: z.string().optional() }),
  z.object({ op: z.literal('get'), id: z.string() }),
  z.object({
    op: z.literal('update'),
    id: z.string(),
    status: z.enum(BOARD_STATUSES).optional(),
    /** '' releases the task. */
    owner: z.string().optional(),
    notes: z.string().optional(),
  }),
]);
export type BoardRequest = z.infer<typeof BoardRequestSchema>;

/** The board's answer: the items concerned (with their blockers not yet completed), or why not. */
export const BoardAnswerSchema = z.discriminatedUnion('ok', [
  z.object({ ok: z.literal(true), items: z.array(BoardItemSchema.extend({ openBlockers: z.array(z.string()) })) }),
  z.object({ ok: z.literal(false), error: z.string() }),
]);
export type BoardAnswer = z.infer<typeof BoardAnswerSchema>;

/** A context window a server stated in an overflow error (ai/learned-windows.ts), shared across the run's threads. */
/** A call's estimate against the provider's limits (learned-limits.ts CallEstimate). */
const CallEstimateSchema = z.object({ uncachedInput: z.number(), cachedInput: z.number(), maxOutput: z.number() });

const RateLimitStateSchema = z.object({
  limit: z.number(),
  remaining: z.number().optional(),
  resetAt: z.number().optional(),
});
/** One response's rate-limit headers (ai/rate-limit-headers.ts RateLimitSnapshot). */
const RateLimitSnapshotSchema = z.object({
  vendor: z.enum(['anthropic', 'openai']),
  limits: z.object({
    requests: RateLimitStateSchema.optional(),
    inputTokens: RateLimitStateSchema.optional(),
    outputTokens: RateLimitStateSchema.optional(),
    tokens: RateLimitStateSchema.optional(),
  }),
  keyHash: z.string().optional(),
});

export const LearnedWindowSchema = z.object({
  provider: z.string(),
  baseUrl: z.string().optional(),
  model: z.string(),
  window: z.number().int().positive(),
});

/** Coordinator -> worker. */
export const CoordinatorMessageSchema = z.discriminatedUnion('type', [
  /** Another agent of the run learned a model's window: sessions on that model use it from now on. */
  z.object({ type: z.literal('window_learned'), learned: LearnedWindowSchema }),
  /** A peer (or the coordinator) sends text into this agent's loop. */
  z.object({ type: z.literal('deliver'), from: z.string(), text: z.string() }),
  /** Stop the agent now; the session stays intact. Why, as data (failure-policy.ts FailureReason). */
  z.object({ type: z.literal('abort'), failure: FailureClassSchema, detail: z.string() }),
  /** Idle watchdog: ask the agent to finish up. */
  z.object({ type: z.literal('wrap_up'), text: z.string() }),
  z.object({ type: z.literal('permit_grant'), requestId: z.number(), slotId: z.number() }),
  /** `budget`: whose budget refused; absent when the refusal was not the budget's. */
  z.object({
    type: z.literal('permit_deny'),
    requestId: z.number(),
    reason: z.string(),
    budget: BudgetScopeSchema.optional(),
  }),
  /** Answer to a `send` that carried a requestId: who got the message, or why nobody did. */
  z.object({
    type: z.literal('send_result'),
    requestId: z.number(),
    delivered: z.array(z.string()),
    queued: z.array(z.string()),
    error: z.string().optional(),
  }),
  /** Answer to a `board` request. */
  z.object({ type: z.literal('board_result'), requestId: z.number(), answer: BoardAnswerSchema }),
  /** Someone watches this agent's conversation: send `partial` while it writes (until `on: false`); `on: true` is always answered with one `partial` (`''` when not writing). */
  z.object({ type: z.literal('stream'), on: z.boolean() }),
]);
export type CoordinatorMessage = z.infer<typeof CoordinatorMessageSchema>;

/** Worker -> coordinator. */
export const WorkerMessageSchema = z.discriminatedUnion('type', [
  /** This agent's server stated a smaller window for its model (an overflow error): the run's other agents use it too. */
  z.object({ type: z.literal('window_learned'), learned: LearnedWindowSchema }),
  z.object({
    type: z.literal('permit_request'),
    requestId: z.number(),
    model: z.string(),
    /** The provider serving the model (its rate limits and budget apply). */
    provider: z.string().optional(),
    kind: z.enum(['turn', 'summary', 'compaction']),
    /** What the call will take of the provider's limits (learned-limits.ts). */
    call: CallEstimateSchema.optional(),
    /** The short hash of the API key the agent's last response was for (never the key). */
    keyHash: z.string().optional(),
  }),
  /**
   * The response of a permitted call started (or the call failed): the rate-limit slot is dated
   * from now. `heard`: a response arrived, with the rate limits its headers stated.
   */
  z.object({
    type: z.literal('permit_started'),
    slotId: z.number(),
    at: z.number(),
    heard: z.object({ rateLimits: RateLimitSnapshotSchema.optional(), refused: z.boolean().optional() }).optional(),
  }),
  /** Usage of one finished model call (settles the budget reservation). */
  z.object({
    type: z.literal('usage'),
    slotId: z.number(),
    model: z.string(),
    provider: z.string().optional(),
    usage: UsageSummarySchema,
  }),
  /** The provider said rate-limited / overloaded and the call will be retried after delayMs. */
  z.object({
    type: z.literal('rate_limited'),
    model: z.string(),
    provider: z.string().optional(),
    delayMs: z.number(),
    status: z.number().optional(),
  }),
  /** A call moved off the agent's own model (recipe `fallback:`): logged as `call_fallback`. */
  CallFallbackSchema,
  /** One agent event, for the run log and the live view. */
  z.object({ type: z.literal('event'), event: z.object({ type: z.string() }).passthrough() }),
  /** send_message tool: to a task id / instance key, "parent", or "*" for everyone. */
  z.object({ type: z.literal('send'), to: z.string(), text: z.string(), requestId: z.number().optional() }),
  /** A board tool call (task_create, task_list, task_get, task_update): answered with `board_result`. */
  z.object({ type: z.literal('board'), requestId: z.number(), request: BoardRequestSchema }),
  /**
   * First message of a task: the worker thread it runs on, and (distributed runs) the worker
   * process that took it; a second hello means another worker took the agent over.
   */
  z.object({ type: z.literal('hello'), threadId: z.number(), worker: z.string().optional() }),
  /** The agent is working (a streamed delta, tool output, a running verify): resets the idle watchdog; not logged. */
  z.object({ type: z.literal('progress') }),
  /**
   * While streaming is on (see `stream`): the text of the assistant message being written (its
   * tail, throttled), '' once it is complete. Kept in memory by the coordinator, never logged.
   */
  z.object({ type: z.literal('partial'), text: z.string() }),
  /** The worker's last message on this port: everything it sent has arrived (exact usage accounting). */
  z.object({ type: z.literal('done') }),
  /** A verify command finished (the run log records each check). */
  z.object({ type: z.literal('verify'), command: z.string(), ok: z.boolean(), output: z.string() }),
]);
export type WorkerMessage = z.infer<typeof WorkerMessageSchema>;

/** What a worker task returns (errors lose their class across threads, so failures are data). */
export const WorkerResultSchema = z.discriminatedUnion('ok', [
  z.object({
    ok: z.literal(true),
    text: z.string(),
    usage: UsageSummarySchema,
    summary: z.string().optional(),
    modifiedFiles: z.array(z.string()).default([]),
    readFiles: z.array(z.string()).default([]),
    verifyAttempts: z.number().default(0),
    /** Planner/worker pairs: review rounds held, and whether the planner approved. */
    rounds: z.number().optional(),
    approved: z.boolean().optional(),
  }),
  z.object({
    ok: z.literal(false),
    failure: FailureClassSchema,
    error: z.string(),
    /** A `budget` failure: whose budget ran out (the run's ends the run; a task's or instance's only the instance). */
    budgetScope: BudgetScopeSchema.optional(),
    /** The reason without its class's wording, where the failure is one the product made (a budget's: what was spent). */
    detail: z.string().optional(),
    /** The agent did nothing wrong: its shared thread was stopped for another agent (always retried). */
    collateral: z.boolean().optional(),
    /**
     * Its thread died (throw, exit, out of memory) while other agents shared it, so which of them
     * caused it is unknown: every one is retried without charge, on a thread of its own.
     */
    sharedCrash: z.boolean().optional(),
    usage: UsageSummarySchema,
    summary: z.string().optional(),
  }),
]);
export type WorkerResult = z.infer<typeof WorkerResultSchema>;

/**
 * An `event` message (about 34,000 of a 1,000-agent run's 48,000 worker messages, #41) checked by
 * hand: exactly what its schema checks (an object whose `event` is an object with a string `type`,
 * its other fields kept) and the same result, without zod's ~1 µs per message on the
 * coordinator's loop. Anything else, or an event that fails this, goes through the schema (and
 * its error message).
 */
function eventFastPath(raw: unknown): WorkerMessage | undefined {
  if (!isRecord(raw) || raw.type !== 'event') return undefined;
  const event = raw.event;
  if (!isRecord(event) || typeof event.type !== 'string') return undefined;
  return { type: 'event', event: { ...event, type: event.type } };
}

export function parseWorkerMessage(raw: unknown): { ok: true; message: WorkerMessage } | { ok: false; error: string } {
  const fast = eventFastPath(raw);
  if (fast) return { ok: true, message: fast };
  const r = WorkerMessageSchema.safeParse(raw);
  if (r.success) return { ok: true, message: r.data };
  return {
    ok: false,
    error: `malformed worker message: ${r.error.issues.map((i) => `${i.path.join('.') || 'root'}: ${i.message}`).join('; ')}`,
  };
}

export function parseCoordinatorMessage(
  raw: unknown,
): { ok: true; message: CoordinatorMessage } | { ok: false; error: string } {
  const r = CoordinatorMessageSchema.safeParse(raw);
  if (r.success) return { ok: true, message: r.data };
  return {
    ok: false,
    error: `malformed coordinator message: ${r.error.issues.map((i) => `${i.path.join('.') || 'root'}: ${i.message}`).join('; ')}`,
  };
}
