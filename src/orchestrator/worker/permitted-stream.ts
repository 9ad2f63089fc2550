// Worker side of permits: wraps a stream function so every provider request attempt first
// takes a permit from the coordinator, reports when its response starts, and settles its usage.
// The agent loop is unchanged; only its stream function is wrapped.
import type { StreamFunction } from '../../ai/types.js';
import { cacheSavings } from '../../ai/usage.js';
import type { BudgetScope, UsageSummary } from '../../run/usage-summary.js';

export type PermitKind = 'turn' | 'summary' | 'compaction';

/** `provider`: the provider serving the model (Model.provider): its rate limits and budget apply, and its costs are grouped under it. */
export interface PermitChannel {
  request(
    model: string,
    kind: PermitKind,
    signal?: AbortSignal,
    provider?: string,
  ): Promise<{ ok: true; slotId: number } | { ok: false; reason: string; budget?: BudgetScope }>;
  started(slotId: number, at: number): void;
  usage(slotId: number, model: string, usage: UsageSummary, provider?: string): void;
  rateLimited(model: string, delayMs: number, status?: number, provider?: string): void;
}

/** Thrown from beforeAttempt when the coordinator refuses; the provider turns it into an error message. `budget`: whose budget refused. */
export class PermitDenied extends Error {
  constructor(
    reason: string,
    readonly budget?: BudgetScope,
  ) {
    super(budget ? `Budget exhausted: ${reason}` : `Permit refused: ${reason}`);
  }
}

export function withPermits(base: StreamFunction, channel: PermitChannel, kind: PermitKind = 'turn'): StreamFunction {
  return (model, context, options = {}) => {
    let slot: number | undefined;
    const stream = base(model, context, {
      ...options,
      beforeAttempt: async (info) => {
        await options.beforeAttempt?.(info);
        const p = await channel.request(model.id, kind, options.signal, model.provider);
        if (!p.ok) throw new PermitDenied(p.reason, p.budget);
        slot = p.slotId;
      },
      onAttemptEnd: (info) => {
        options.onAttemptEnd?.(info);
        if (slot !== undefined) channel.started(slot, Date.now());
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
      if (slot === undefined) return;
      const u = msg.usage;
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
