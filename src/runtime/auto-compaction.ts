// When an AgentSession compacts (kernel-spec 5.3) and how the summary is supplied.
//
// Checked after every run (with its last assistant reply) and before every prompt (with the last
// reply in state, aborted ones included):
//   overflow   the provider said the context is too long: compact, then re-run the turn (the
//              session's run guard stops a prompt whose turn right after a compaction overflows)
//   threshold  the reply's context tokens exceed contextWindow - reserveTokens: compact, no re-run
// Usage from before the latest compaction is stale and never triggers anything.
import { toLlmTools } from '../agent/tool-schema.js';
import type { AgentMessage, AnyAgentTool } from '../agent/types.js';
import { isContextOverflow } from '../ai/overflow.js';
import {
  calculateContextTokens,
  estimateContextTokens,
  estimateMessageTokens,
  estimateTextTokens,
} from '../ai/token-estimate.js';
import type { AssistantMessage, Model } from '../ai/types.js';
import type { CompactionHookDecision } from '../session/compaction-job.js';
import {
  compactionThreshold,
  maxKeptTokens,
  shouldCompact,
  type CompactionPreparation,
} from '../session/prepare-compaction.js';
import type { CompactionSettings } from '../session/defaults.js';
import type { SessionEntry } from '../session/types.js';
import { buildExtractiveSummary } from './extractive-summary.js';

export type CompactionCheck =
  | { action: 'none' }
  /** Compact, then re-run the failed turn. */
  | { action: 'overflow' }
  | { action: 'threshold'; tokens: number };

export interface CompactionCheckInput {
  message: AssistantMessage;
  model: Model;
  settings: CompactionSettings;
  /** Messages in the agent's state (for estimating after an error reply). */
  messages: readonly AgentMessage[];
  /** True when a reply predates the latest compaction (its usage describes a context that is gone). */
  isStale: (message: AssistantMessage) => boolean;
  /** The check before a prompt: aborted replies count, overflows are left to the run. */
  beforePrompt?: boolean;
}

/** Decides what to do after a reply. Pure. */
export function checkCompaction(input: CompactionCheckInput): CompactionCheck {
  const { message, model, settings } = input;
  if (!settings.enabled) return { action: 'none' };
  if (message.stopReason === 'aborted' && !input.beforePrompt) return { action: 'none' };
  if (input.isStale(message)) return { action: 'none' };

  const fromCurrentModel = message.provider === model.provider && message.model === model.id;
  if (!input.beforePrompt && fromCurrentModel && isContextOverflow(message, model.contextWindow)) {
    return { action: 'overflow' };
  }

  let tokens: number;
  if (message.stopReason === 'error' || message.stopReason === 'aborted') {
    // An error reply has no usable usage: estimate from the last successful one, if it is current.
    const estimate = estimateContextTokens(input.messages);
    if (estimate.lastUsageIndex === -1) return { action: 'none' };
    const source = input.messages[estimate.lastUsageIndex] as AssistantMessage;
    if (input.isStale(source)) return { action: 'none' };
    tokens = estimate.tokens;
  } else {
    tokens = calculateContextTokens(message.usage);
  }
  return shouldCompact(tokens, model.contextWindow, settings) ? { action: 'threshold', tokens } : { action: 'none' };
}

/**
 * Whether `message` predates the latest compaction on `path`: true unless its entry comes after
 * that compaction. Decided by position, not by timestamps, which can tie within a millisecond.
 */
export function predatesLatestCompaction(path: readonly SessionEntry[], message: AssistantMessage): boolean {
  for (let i = path.length - 1; i >= 0; i--) {
    const e = path[i]!;
    if (e.type === 'compaction') return true;
    if (e.type === 'message' && e.message === message) return false;
  }
  return false;
}

/** A hook that supplies the compaction summary (or vetoes); undefined defers to the next one. */
export type SummarySupplier = (
  preparation: CompactionPreparation,
  signal: AbortSignal | undefined,
  // biome-ignore lint/suspicious/noConfusingVoidType: a hook that returns nothing (typed `void`) must fit; `undefined` would refuse it
) => CompactionHookDecision | void | Promise<CompactionHookDecision | void>;

/**
 * The extractive supplier: a summary built from the conversation itself (no model call). It
 * takes no focus: with no model to follow one, writing it into the summary would only show the
 * product's instruction to whoever reads the summary (a pull request body, a plan).
 */
export function extractiveSupplier(): SummarySupplier {
  return (preparation) => {
    const { summary, details } = buildExtractiveSummary({
      messages: [...preparation.messagesToSummarize, ...preparation.turnPrefixMessages],
      previousSummary: preparation.previousSummary,
      fileOps: preparation.fileOps,
    });
    return { summary, details };
  };
}

/**
 * Runs suppliers in order: the first cancel wins; otherwise the first summary wins. Returns
 * undefined when none decided (the session layer then asks the model).
 */
export function chainSuppliers(suppliers: readonly SummarySupplier[]): SummarySupplier {
  return async (preparation, signal) => {
    for (const supply of suppliers) {
      const decision = await supply(preparation, signal);
      if (decision) return decision;
    }
    return undefined;
  };
}

/** Tokens every request carries besides its messages: the system prompt and the tool definitions. */
export function requestOverheadTokens(systemPrompt: string, tools: readonly AnyAgentTool[]): number {
  const definitions = tools.length > 0 ? estimateTextTokens(JSON.stringify(toLlmTools(tools))) : 0;
  return estimateTextTokens(systemPrompt) + definitions;
}

/**
 * How full a compaction left the context, as the run guard judges "freed too little": the system
 * prompt, the summary and the kept messages, these counted only up to the tail a compaction
 * normally keeps. A last turn kept beyond that (its tool results too big to cut) is summarized by
 * the very next compaction, so it does not make compacting again useless.
 */
export function compactionFill(
  messages: readonly AgentMessage[],
  systemPrompt: string,
  contextWindow: number,
  settings: CompactionSettings,
): { tokensAfter: number; threshold: number } {
  let summary = 0;
  let kept = 0;
  for (const m of messages) {
    if (m.role === 'compactionSummary') summary += estimateMessageTokens(m);
    else kept += estimateMessageTokens(m);
  }
  const tail = Math.min(kept, maxKeptTokens(settings, contextWindow));
  return {
    tokensAfter: estimateTextTokens(systemPrompt) + summary + tail,
    threshold: compactionThreshold(contextWindow, settings),
  };
}
