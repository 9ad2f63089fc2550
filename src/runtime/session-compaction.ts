// One compaction of a session: the session layer's staged job, with the summary supplied by
// (in order) the host's beforeCompact hook, extension before_compact handlers, the extractive
// builder (scripted runs), or else a model call through the session's own stream function.
import type { Model, StreamOptions } from '../ai/types.js';
import { runCompaction, type CompactionHookDecision, type CompactionOutcome } from '../session/compaction-job.js';
import type { CompactionSettings } from '../session/defaults.js';
import type { CompactionPreparation } from '../session/prepare-compaction.js';
import type { SessionStore } from '../session/session-store.js';
import type { CompleteFunction } from '../session/summarize.js';
import { chainSuppliers, extractiveSupplier, type SummarySupplier } from './auto-compaction.js';
import { errorText, type SessionEventBus } from './event-bus.js';
import type { LoadedExtensions } from './extensions.js';
import type { CompactionResult } from './session-events.js';

export interface SessionCompactionContext {
  store: SessionStore;
  model: Model;
  complete: CompleteFunction;
  streamOptions: Omit<StreamOptions, 'signal' | 'maxTokens' | 'reasoning'>;
  settings: CompactionSettings;
  summaryRetry?: { maxAttempts?: number; baseDelayMs?: number; maxDelayMs?: number };
  summaries: 'model' | 'extractive';
  beforeCompact?: SummarySupplier;
  extensions: LoadedExtensions;
  bus: SessionEventBus;
}

export type SessionCompactionOutcome =
  | { status: 'compacted'; result: CompactionResult }
  | { status: 'aborted' | 'failed' | 'skipped' | 'cancelled'; message: string };

/** Extension handlers as one supplier: the first cancel wins, otherwise the last summary. */
function extensionSupplier(extensions: LoadedExtensions, bus: SessionEventBus): SummarySupplier | undefined {
  const handlers = extensions.handlers.before_compact;
  if (handlers.length === 0) return undefined;
  return async (preparation: CompactionPreparation, signal) => {
    let decision: CompactionHookDecision | undefined;
    for (const h of handlers) {
      try {
        const d = await h.handler({ preparation, signal });
        if (d && 'cancel' in d) return d;
        if (d) decision = d;
      } catch (err) {
        bus.reportExtensionError(h.source, 'before_compact', err);
      }
    }
    return decision;
  };
}

export async function compactSession(c: SessionCompactionContext, customInstructions: string | undefined, signal: AbortSignal | undefined): Promise<SessionCompactionOutcome> {
  let source: CompactionResult['source'] = 'model';
  const mark =
    (label: 'extractive' | 'hook', supply: SummarySupplier | undefined): SummarySupplier[] =>
      supply
        ? [
            async (preparation, s) => {
              const decision = await supply(preparation, s);
              if (decision) source = label;
              return decision;
            },
          ]
        : [];
  const suppliers = [
    ...mark('hook', c.beforeCompact),
    ...mark('hook', extensionSupplier(c.extensions, c.bus)),
    ...mark('extractive', c.summaries === 'extractive' ? extractiveSupplier(customInstructions) : undefined),
  ];
  let outcome: CompactionOutcome;
  try {
    outcome = await runCompaction(c.store, {
      model: c.model,
      complete: c.complete,
      signal,
      customInstructions,
      streamOptions: c.streamOptions,
      settings: c.settings,
      retry: c.summaryRetry,
      beforeCompact: chainSuppliers(suppliers),
    });
  } catch (err) {
    return { status: 'failed', message: errorText(err) };
  }
  if (outcome.status !== 'compacted') return { status: outcome.status, message: outcome.message };
  return { status: 'compacted', result: { ...outcome.result, entryId: outcome.entryId, source: outcome.fromHook ? source : 'model' } };
}
