// Why an instance failed (its failure class) and what to do about it: retry after a backoff, or
// give up. Classes are decided from data: a reason the product makes travels as a FailureReason
// (class, detail, whose budget) and is rendered to text only for people; a model reply's class
// comes from the fields ai/ set when it classified the provider's failure. Wording is read only
// where it comes from outside and no field says more (an SDK's "Request timed out").
import { ORCHESTRATOR_DEFAULTS } from '../defaults.js';
import { type BudgetScope, FAILURE_CLASSES, type FailureClass } from '../../run/usage-summary.js';

/**
 * Why an agent was stopped, as data: its class, what happened in words (no class prefix), and
 * for a `budget` stop whose budget refused. Abort messages, stop reasons and failed results carry
 * it; `failureText` is the one place it becomes the sentence users read.
 */
export interface FailureReason {
  failure: FailureClass;
  detail: string;
  scope?: BudgetScope;
}

/**
 * The sentence a reason shows as ("Budget exhausted: run budget of $1 is spent", "timeout: the
 * instance ran longer than ...", an unavailable MCP server's own explanation).
 */
export function failureText(r: FailureReason): string {
  if (r.failure === 'budget') return `Budget exhausted: ${r.detail}`;
  if (r.failure === 'mcp_unavailable') return r.detail;
  return `${r.failure}: ${r.detail}`;
}

/** When a failed attempt of an instance gets another, and how long it waits first (a task's `retries:`, flattened). */
export interface AttemptRetryRule {
  /** Retries after the first attempt. */
  count: number;
  initialMs: number;
  maxMs: number;
  factor: number;
  /** Classes that are retried. */
  on: readonly FailureClass[];
  /** Delay scale in [1 - jitter, 1], so a fan-out that failed together does not retry together. */
  jitter: number;
}

/**
 * Classes a retry can never fix: spend more money, or undo what the user asked for. (loop,
 * max_turns, compaction, not_approved and write_scope are retried only when `retries.on` lists them: the
 * default list leaves them out, since a retry of a deterministic loop pays for it again.)
 */
const NEVER_RETRIED: ReadonlySet<FailureClass> = new Set(['budget', 'aborted', 'cancelled']);

export function isFailureClass(s: string): s is FailureClass {
  return (FAILURE_CLASSES as readonly string[]).includes(s);
}

/**
 * Failure class of a model reply that ended in an error, from the fields ai/ set when it
 * classified the failure (provider-error.ts): its kind (a 429 or 529, an `overloaded_error`) and
 * status (a request the server refused with another 4xx is an error, whatever words it holds: a
 * 400 that quotes "rate limit" from the prompt). A refused permit never gets here: it stops the
 * agent with its reason as data first. ai/'s own give-up on a silent stream says so in
 * `errorCause`. Only server and connection failures from outside, where no field says more, are
 * told apart by the provider's or SDK's wording (a timeout, an aborted request).
 */
export function classifyReplyError(reply: {
  errorMessage?: string;
  errorStatus?: number;
  errorKind?: 'rate_limit' | 'overloaded' | 'server' | 'connection';
  errorCause?: 'timeout';
}): FailureClass {
  const text = reply.errorMessage ?? '';
  if (reply.errorCause === 'timeout') return 'timeout';
  if (reply.errorKind === 'rate_limit') return 'rate_limit';
  if (reply.errorKind === 'overloaded') return 'overloaded';
  if (reply.errorStatus === 408) return 'timeout';
  if (reply.errorStatus !== undefined && reply.errorStatus >= 400 && reply.errorStatus < 500) return 'error';
  return classifyErrorText(text);
}

/**
 * Failure class of a provider's or SDK's error wording (text from outside, where ai/ set no kind
 * or status that decides). Never applied to the product's own messages: those carry their class.
 */
export function classifyErrorText(text: string): FailureClass {
  if (/\b429\b|rate.?limit|too many requests/i.test(text)) return 'rate_limit';
  if (/\b529\b|overloaded/i.test(text)) return 'overloaded';
  if (/timed? ?out|timeout/i.test(text)) return 'timeout';
  if (/request was aborted|aborted/i.test(text)) return 'aborted';
  return 'error';
}

/**
 * Failure class of a rejected worker task (piscina rejects when the thread exits, runs out of
 * memory or throws outside the handler's own try): always `crashed`, unless our own abort
 * caused it, which the caller knows better.
 */
export function describeThreadFailure(err: unknown): { failure: FailureClass; error: string } {
  const e = err as { code?: string; message?: string; name?: string } | undefined;
  const message = e?.message ?? String(err);
  if (e?.code === 'ERR_WORKER_OUT_OF_MEMORY' || /out of memory|memory limit/i.test(message)) {
    return {
      failure: 'crashed',
      error: `worker thread ran out of memory: ${message}. Raise the worker memory limit or reduce what the agent holds (large tool outputs).`,
    };
  }
  if (/worker exited with code/i.test(message))
    return { failure: 'crashed', error: `worker thread exited: ${message}` };
  return { failure: 'crashed', error: `worker thread failed: ${message}` };
}

/** Whether attempt number `attempt` (1-based, the one that just failed) is followed by another. */
export function shouldRetry(policy: AttemptRetryRule, failure: FailureClass, attempt: number): boolean {
  if (NEVER_RETRIED.has(failure)) return false;
  if (attempt > policy.count) return false;
  return policy.on.includes(failure);
}

/** Delay before retry number `retry` (1-based): initial x factor^(retry-1), capped, with jitter. */
export function backoffDelay(policy: AttemptRetryRule, retry: number, random: () => number = Math.random): number {
  const raw = policy.initialMs * policy.factor ** Math.max(0, retry - 1);
  const capped = Math.min(raw, policy.maxMs);
  const scale = 1 - policy.jitter * random();
  return Math.max(0, Math.round(capped * scale));
}

/** Normalizes the recipe's `retries` (a count or {count, backoff, on}) with the defaults. */
export function retryPolicyOf(
  raw:
    | number
    | { count?: number; initialMs?: number; maxMs?: number; factor?: number; on?: readonly string[] }
    | undefined,
  defaults: { count: number; initialMs: number; maxMs: number; factor: number; on: readonly string[] },
): AttemptRetryRule {
  const r = typeof raw === 'number' ? { count: raw } : (raw ?? {});
  return {
    count: r.count ?? defaults.count,
    initialMs: r.initialMs ?? defaults.initialMs,
    maxMs: r.maxMs ?? defaults.maxMs,
    factor: r.factor ?? defaults.factor,
    on: (r.on ?? defaults.on).filter(isFailureClass),
    jitter: ORCHESTRATOR_DEFAULTS.retryJitter,
  };
}
