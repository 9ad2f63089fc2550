// Worker side of permits: wraps a stream function so every provider request attempt first
// takes a permit from the coordinator, reports when its response starts, and settles its usage.
// The agent loop is unchanged; only its stream function is wrapped. Each permit request carries the
// call's estimate (input tokens, split into what the prompt cache should hold and the rest, and the
// request's max_tokens) and the hash of the key the last response was for; each response's
// rate-limit headers go back with its start, so the coordinator paces every agent by them.
import type { RateLimitSnapshot } from '../../ai/rate-limit-headers.js';
import type { StreamFunction } from '../../ai/types.js';
import { cacheSavings } from '../../ai/usage.js';
import type { BudgetScope, UsageSummary } from '../../run/usage-summary.js';
import { failureText } from '../schedule/failure-policy.js';
import type { CallEstimate } from '../pacing/learned-limits.js';

export type PermitKind = 'turn' | 'summary' | 'compaction';

/** What a permit request says about the call, for pacing by the provider's limits. */
export interface PermitCallInfo {
  call: CallEstimate;
  keyHash?: string;
}

/**
 * How long a paced call may wait out 429s that name their wait without spending its retry budget:
 * the coordinator paces by the provider's limits, so a busy limit is waited for, however many
 * times a crowd of agents is refused in a row (a count of 50 failed a third of an unpaced
 * 100-agent fan-out, bench/rate-limit.bench.ts); only a provider that stays rate-limited this
 * long for one call fails it (or falls back).
 */
export const PACED_RATE_LIMIT_WAIT_MS = 15 * 60_000;
/** The count bound beside it: high enough that time is the bound in practice. */
export const PACED_RATE_LIMIT_WAITS = 10_000;

/** `provider`: the provider serving the model (Model.provider): its rate limits and budget apply, and its costs are grouped under it. */
export interface PermitChannel {
  request(
    model: string,
    kind: PermitKind,
    signal?: AbortSignal,
    provider?: string,
    info?: PermitCallInfo,
  ): Promise<{ ok: true; slotId: number } | { ok: false; reason: string; budget?: BudgetScope }>;
  /** `heard`: a response arrived (a reply or an error status), with the limits its headers stated. */
  started(slotId: number, at: number, heard?: { rateLimits?: RateLimitSnapshot; refused?: boolean }): void;
  usage(slotId: number, model: string, usage: UsageSummary, provider?: string): void;
  rateLimited(model: string, delayMs: number, status?: number, provider?: string): void;
}

/** Thrown from beforeAttempt when the coordinator refuses; the provider turns it into an error message. `budget`: whose budget refused. */
export class PermitDenied extends Error {
  constructor(
    reason: string,
    readonly budget?: BudgetScope,
  ) {
    super(budget ? failureText({ failure: 'budget', detail: reason, scope: budget }) : `Permit refused: ${reason}`);
  }
}

export function withPermits(base: StreamFunction, channel: PermitChannel, kind: PermitKind = 'turn'): StreamFunction {
  // What this agent's last reply read from and wrote to the prompt cache: the next request's prefix.
  let cachedPrefix = 0;
  let keyHash: string | undefined;
  return (model, context, options = {}) => {
    let slot: number | undefined;
    let call: CallEstimate | undefined;
    const stream = base(model, context, {
      ...options,
      rateLimitWaits: Math.max(options.rateLimitWaits ?? 0, PACED_RATE_LIMIT_WAITS),
      rateLimitWaitMs: Math.max(options.rateLimitWaitMs ?? 0, PACED_RATE_LIMIT_WAIT_MS),
      // The payload as it will be sent: its size and max_tokens are the call's estimate.
      onPayload: (payload, m) => {
        const sent = options.onPayload ? (options.onPayload(payload, m) ?? payload) : payload;
        call = estimateCall(sent, options.cacheRetention === 'none' ? 0 : cachedPrefix);
        return sent;
      },
      beforeAttempt: async (info) => {
        await options.beforeAttempt?.(info);
        const p = await channel.request(model.id, kind, options.signal, model.provider, {
          call: call ?? { uncachedInput: 0, cachedInput: 0, maxOutput: 0 },
          ...(keyHash !== undefined ? { keyHash } : {}),
        });
        if (!p.ok) throw new PermitDenied(p.reason, p.budget);
        slot = p.slotId;
      },
      onAttemptEnd: (info) => {
        options.onAttemptEnd?.(info);
        if (info.rateLimits?.keyHash !== undefined) keyHash = info.rateLimits.keyHash;
        const heard = info.started || info.status !== undefined;
        if (slot !== undefined)
          channel.started(
            slot,
            Date.now(),
            heard
              ? {
                  ...(info.rateLimits ? { rateLimits: info.rateLimits } : {}),
                  // A 429: no tokens were used; the request counts only where the provider counts refused ones (learned-limits.ts).
                  ...(info.status === 429 ? { refused: true } : {}),
                }
              : undefined,
          );
        // A failed attempt has no usage: settle it as empty so its reservation is freed.
        if (!info.started && slot !== undefined) {
          channel.usage(
            slot,
            model.id,
            { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, totalTokens: 0, cost: 0 },
            model.provider,
          );
          slot = undefined;
        }
      },
      onRetry: (info) => {
        options.onRetry?.(info);
        if (info.kind === 'rate_limit' || info.kind === 'overloaded')
          channel.rateLimited(model.id, info.delayMs, info.status, model.provider);
      },
    });
    void stream.result().then((msg) => {
      const u = msg.usage;
      if (msg.stopReason !== 'error' && msg.stopReason !== 'aborted') cachedPrefix = u.cacheRead + u.cacheWrite;
      if (slot === undefined) return;
      channel.usage(
        slot,
        model.id,
        {
          input: u.input,
          output: u.output,
          cacheRead: u.cacheRead,
          cacheWrite: u.cacheWrite,
          totalTokens: u.totalTokens,
          cost: u.cost.total,
          ...(u.cacheRead + u.cacheWrite > 0 ? { cacheSaved: cacheSavings(model, u) } : {}),
          ...(u.estimated ? { estimated: true } : {}),
        },
        model.provider,
      );
      slot = undefined;
    });
    return stream;
  };
}

/**
 * A call's estimate from its payload: input is the JSON's size in tokens (chars / 4, as the
 * providers' own rule of thumb), of which what the last reply cached is expected from the cache;
 * the output is the max_tokens asked for (whichever field the API uses).
 */
export function estimateCall(payload: unknown, cachedPrefix: number): CallEstimate {
  let input = 0;
  try {
    input = Math.ceil(JSON.stringify(payload).length / 4);
  } catch {
    input = 0;
  }
  const p = (payload ?? {}) as Record<string, unknown>;
  const maxOutput = [p.max_tokens, p.max_completion_tokens, p.max_output_tokens].find(
    (v): v is number => typeof v === 'number' && v > 0,
  );
  const cachedInput = Math.min(input, Math.max(0, cachedPrefix));
  return { uncachedInput: input - cachedInput, cachedInput, maxOutput: maxOutput ?? 0 };
}
