// Fallback models: a stream function that sends a call to the first model of a chain (the agent's
// own model, then its `fallback:` entries) that is not cooling down, and moves the call to the next
// entry when one fails for good before any content arrived: overloaded, a 5xx, the connection down
// or a rate limit, with the provider's own retries already spent. A model that failed so is skipped
// by the next calls for a cool-down (aiDefaults.fallbackCooldownMs), then tried again first.
// Each call served by an entry other than the first is reported (onRoute) with why, so the run log
// says where it went. Wrap the permit-taking stream function, so each request takes the permit,
// budget and price of the model that really serves it.
import { aiDefaults } from './defaults.js';
import { AssistantMessageEventStream } from './event-stream.js';
import type { AssistantMessage, AssistantMessageEvent, Model, ProviderErrorKind, StreamFunction } from './types.js';

/** One entry of a chain besides the first: its model and the key to send it (undefined: its provider's key variable). */
export interface FallbackEntry {
  model: Model;
  apiKey?: string;
}

/** Where one call went instead of the first model of its chain, and why. */
export interface CallRoute {
  /** The model the call was meant for (the agent's own). */
  primary: Pick<Model, 'provider' | 'id'>;
  /** The model that served it (or failed last, when `failed`). */
  served: Pick<Model, 'provider' | 'id'>;
  /** Why the models before it were not used (their failure, or that they are cooling down). */
  reason: string;
  /** The failure class of the last model that failed during this call (absent: skipped while cooling down). */
  kind?: ProviderErrorKind;
  status?: number;
  /** Every entry of the chain failed: the call failed with the last one's error. */
  failed?: boolean;
}

export interface FallbackOptions {
  cooldownMs?: number;
  /** Called once per call that did not end on the first model. */
  onRoute?: (route: CallRoute) => void;
  now?: () => number;
}

/** "provider/model", as the recipe's `fallback:` writes it. */
export function modelLabel(m: Pick<Model, 'provider' | 'id'>): string {
  return `${m.provider}/${m.id}`;
}

/** A failure another model may not have: transient, with no retry left and nothing streamed yet. */
function movesOn(message: AssistantMessage, signal: AbortSignal | undefined): boolean {
  return (
    message.stopReason === 'error' &&
    message.errorKind !== undefined &&
    message.errorRetryable !== true &&
    signal?.aborted !== true
  );
}

const BUFFERED = new Set<AssistantMessageEvent['type']>(['start']);

/**
 * `base` with fallbacks. The chain of one call is the model it is called with, then `entries`
 * (an entry equal to that model is left out). Cool-downs are kept per wrapped function: one
 * agent's calls share them.
 */
export function withFallback(
  base: StreamFunction,
  entries: readonly FallbackEntry[],
  options: FallbackOptions = {},
): StreamFunction {
  if (entries.length === 0) return base;
  const cooldownMs = options.cooldownMs ?? aiDefaults.fallbackCooldownMs;
  const now = options.now ?? Date.now;
  /** Label -> until when it is skipped, and the failure that put it there. */
  const cooling = new Map<string, { until: number; reason: string }>();

  return (model, context, callOptions = {}) => {
    const chain: FallbackEntry[] = [
      { model, ...(callOptions.apiKey !== undefined ? { apiKey: callOptions.apiKey } : {}) },
      ...entries.filter((e) => modelLabel(e.model) !== modelLabel(model)),
    ];
    const outer = new AssistantMessageEventStream(model);
    const reasons: string[] = [];
    /** The failure that moved this call on last (its class and status go into the route). */
    let lastFailure: AssistantMessage | undefined;
    let first = chain.findIndex((e) => (cooling.get(modelLabel(e.model))?.until ?? 0) <= now());
    if (first < 0) first = 0; // all cooling: the chain in order, as if none were
    for (const skipped of chain.slice(0, first)) {
      const c = cooling.get(modelLabel(skipped.model))!;
      reasons.push(
        `${modelLabel(skipped.model)} skipped while cooling down for ${Math.ceil((c.until - now()) / 1000)} s more (it failed: ${c.reason})`,
      );
    }

    const attempt = async (i: number): Promise<void> => {
      const entry = chain[i]!;
      const { apiKey: _primaryKey, ...rest } = callOptions;
      const inner = base(entry.model, context, entry.apiKey !== undefined ? { ...rest, apiKey: entry.apiKey } : rest);
      const held: AssistantMessageEvent[] = [];
      let flowing = false;
      for await (const event of inner) {
        if (flowing) {
          outer.push(event);
          continue;
        }
        if (BUFFERED.has(event.type)) {
          held.push(event);
          continue;
        }
        if (event.type === 'error' && i + 1 < chain.length && movesOn(event.error, callOptions.signal)) {
          const label = modelLabel(entry.model);
          const why = event.error.errorMessage ?? 'failed';
          cooling.set(label, { until: now() + cooldownMs, reason: why });
          reasons.push(`${label} failed: ${why}`);
          lastFailure = event.error;
          return attempt(i + 1);
        }
        flowing = true;
        if (i > 0 || reasons.length > 0) report(entry, event);
        for (const h of held) outer.push(h);
        // The last entry failed too: its error also says what happened to the ones before it.
        if (event.type === 'error' && event.reason === 'error' && reasons.length > 0)
          outer.push({
            ...event,
            error: {
              ...event.error,
              errorMessage: `${event.error.errorMessage ?? 'failed'} (after ${reasons.join('; ')})`,
            },
          });
        else outer.push(event);
      }
      if (!flowing) {
        for (const h of held) outer.push(h);
        outer.end();
      }
    };

    const report = (entry: FallbackEntry, event: AssistantMessageEvent): void => {
      const failedNow = event.type === 'error' && event.reason === 'error';
      // It served this call: the next calls start from it again at the latest once the others cool down.
      if (!failedNow) cooling.delete(modelLabel(entry.model));
      const last = failedNow ? event.error : lastFailure;
      options.onRoute?.({
        primary: { provider: model.provider, id: model.id },
        served: { provider: entry.model.provider, id: entry.model.id },
        reason: reasons.join('; '),
        ...(last?.errorKind !== undefined ? { kind: last.errorKind } : {}),
        ...(last?.errorStatus !== undefined ? { status: last.errorStatus } : {}),
        ...(failedNow ? { failed: true } : {}),
      });
    };

    // A stream function never throws; should one, the call ends as an error instead of hanging.
    attempt(first).catch(() => outer.end());
    return outer;
  };
}
