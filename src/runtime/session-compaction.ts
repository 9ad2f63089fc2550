// One compaction of a session: the session layer's staged job, with the summary supplied by
// (in order) the host's beforeCompact hook, extension before_compact handlers, the extractive
// builder (scripted runs), or else a model call through the session's own stream function: asked
// inside the conversation (a prompt-cache read) when summaryConversation allows it.
import { convertToLlm } from '../agent/convert-to-llm.js';
import { toLlmTools } from '../agent/tool-schema.js';
import type { AgentThinkingLevel, AnyAgentTool } from '../agent/types.js';
import { ANTHROPIC_API } from '../ai/models.js';
import type { CacheRetention, Model, StreamOptions } from '../ai/types.js';
import {
  CompactionNotDoneError,
  runCompaction,
  type CompactionHookDecision,
  type CompactionOutcome,
} from '../session/compaction-job.js';
import type { CompactionSettings } from '../session/defaults.js';
import type { CompactionPreparation, NoCompactionReason } from '../session/prepare-compaction.js';
import type { SessionStore } from '../session/session-store.js';
import type { CompleteFunction, SummaryConversation } from '../session/summarize.js';
import { chainSuppliers, extractiveSupplier, type SummarySupplier } from './auto-compaction.js';
import { errorText, type SessionEventBus } from './event-bus.js';
import type { LoadedExtensions } from './extensions.js';
import type { CompactionResult } from './session-events.js';

/** Options of a manual compaction. */
export interface CompactOptions {
  /**
   * Keep this many recent tokens instead of the configured amount; 0 summarizes everything up
   * to the last message (a handoff summary of a whole short session).
   */
  keepRecentTokens?: number;
}

export interface SessionCompactionContext {
  store: SessionStore;
  model: Model;
  complete: CompleteFunction;
  streamOptions: Omit<StreamOptions, 'signal' | 'maxTokens' | 'reasoning'>;
  settings: CompactionSettings;
  /** Tokens every request carries besides its messages (system prompt, tool definitions). */
  overheadTokens?: number;
  summaryRetry?: { maxAttempts?: number; baseDelayMs?: number; maxDelayMs?: number };
  summaries: 'model' | 'extractive';
  beforeCompact?: SummarySupplier;
  extensions: LoadedExtensions;
  bus: SessionEventBus;
  /** The conversation as the loop sends it (summaryConversation): summaries are asked for inside it. */
  conversation?: SummaryConversation;
}

export interface SummaryConversationInput {
  model: Model;
  systemPrompt: string;
  tools: readonly AnyAgentTool[];
  thinkingLevel: AgentThinkingLevel;
  /** A transformContext hook reshapes what the loop sends: the summary could not repeat it. */
  transformsContext: boolean;
  cacheRetention?: CacheRetention;
  /** Summaries go through another stream function (another provider) than the turns. */
  separateSummaryStream: boolean;
}

/**
 * The conversation a history summary is asked for in, or undefined for the transcript path:
 * only on a provider with prompt caching (Anthropic, caching on), and only when the summary
 * request can repeat the loop's requests exactly (default message conversion, same stream).
 */
export function summaryConversation(o: SummaryConversationInput): SummaryConversation | undefined {
  if (o.model.api !== ANTHROPIC_API || o.cacheRetention === 'none' || o.transformsContext || o.separateSummaryStream)
    return undefined;
  const conversation: SummaryConversation = { systemPrompt: o.systemPrompt, convertToLlm };
  if (o.tools.length > 0) conversation.tools = toLlmTools(o.tools);
  if (o.thinkingLevel !== 'off') conversation.reasoning = o.thinkingLevel;
  return conversation;
}

export type SessionCompactionOutcome =
  | { status: 'compacted'; result: CompactionResult }
  | { status: 'skipped'; reason: NoCompactionReason; message: string }
  | { status: 'aborted' | 'failed' | 'cancelled'; message: string };

/** The error a compaction asked for throws when it did not happen (its skip reason as a field). */
export function compactionNotDone(outcome: Exclude<SessionCompactionOutcome, { status: 'compacted' }>): Error {
  return new CompactionNotDoneError(
    outcome.status,
    outcome.message,
    outcome.status === 'skipped' ? outcome.reason : undefined,
  );
}

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

export async function compactSession(
  c: SessionCompactionContext,
  customInstructions: string | undefined,
  signal: AbortSignal | undefined,
): Promise<SessionCompactionOutcome> {
  let source: CompactionResult['source'] = 'model';
  const mark = (label: 'extractive' | 'hook', supply: SummarySupplier | undefined): SummarySupplier[] =>
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
    ...mark('extractive', c.summaries === 'extractive' ? extractiveSupplier() : undefined),
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
      overheadTokens: c.overheadTokens,
      retry: c.summaryRetry,
      beforeCompact: chainSuppliers(suppliers),
      ...(c.conversation ? { conversation: c.conversation } : {}),
    });
  } catch (err) {
    return { status: 'failed', message: errorText(err) };
  }
  if (outcome.status === 'skipped') return { status: 'skipped', reason: outcome.reason, message: outcome.message };
  if (outcome.status !== 'compacted') return { status: outcome.status, message: outcome.message };
  return {
    status: 'compacted',
    result: { ...outcome.result, entryId: outcome.entryId, source: outcome.fromHook ? source : 'model' },
  };
}
