// What a compaction will do, decided from the path alone (no model call): where to cut, what to
// summarize, the previous summary to update, and the files touched so far.
//
// Our decision 5: the summarize range starts at the previous compaction's FIRST KEPT entry, not
// after the compaction entry, so messages the previous compaction kept are either kept again or
// summarized now; none silently drops out of context.
//
// The last turn survives: when the recent tail cannot be cut small (one reply whose tool results
// are huge), that last reply and its results are still kept whenever they fit the window beside
// the system prompt and the reserve. Keeping nothing there made a model that needs its last
// results redo them, fill the window again and compact again, until the compaction cap.
import { estimateContextTokens, estimateMessageTokens } from '../ai/token-estimate.js';
import type { AgentMessage } from '../agent/types.js';
import { buildContextFromPath, entryToMessage, firstKeptIndex, latestCompactionIndex } from './build-context.js';
import { DEFAULT_COMPACTION_SETTINGS, SESSION_DEFAULTS, type CompactionSettings } from './defaults.js';
import { collectFileOperations, createFileOperations, type FileOperations } from './file-operations.js';
import { findCutPoint, lastTurnCutPoint } from './find-cut-point.js';
import { KEPT_NOTHING, type CompactionEntry, type SessionEntry } from './types.js';

export interface CompactionPreparation {
  firstKeptEntryId: string;
  /** History before the cut (or before the split turn's start). */
  messagesToSummarize: AgentMessage[];
  /** The beginning of a turn the cut falls in (split turn only). */
  turnPrefixMessages: AgentMessage[];
  isSplitTurn: boolean;
  /** Estimated context tokens before compacting. */
  tokensBefore: number;
  previousSummary?: string;
  fileOps: FileOperations;
  /** Settings in effect (keepRecentTokens possibly clamped). */
  settings: CompactionSettings;
  /** Ids of the entries whose messages are summarized (history and turn prefix). */
  summarizedEntryIds: string[];
}

export type NoCompactionReason = 'already_compacted' | 'nothing_to_compact';

export interface PrepareOptions {
  /** When given, keepRecentTokens is clamped below the threshold so compaction makes progress. */
  contextWindow?: number;
  /**
   * Tokens every request carries besides its messages (system prompt, tool definitions): a last
   * turn is kept only if it fits the threshold beside them.
   */
  overheadTokens?: number;
}

/** Tokens above which a context should be compacted. */
export function compactionThreshold(
  contextWindow: number,
  settings: CompactionSettings = DEFAULT_COMPACTION_SETTINGS,
): number {
  return contextWindow - settings.reserveTokens;
}

export function shouldCompact(
  tokens: number,
  contextWindow: number,
  settings: CompactionSettings = DEFAULT_COMPACTION_SETTINGS,
): boolean {
  return settings.enabled && tokens > compactionThreshold(contextWindow, settings);
}

/**
 * The most a kept tail may hold: a share of the threshold (the rest is room for new turns). Only
 * a last turn that cannot be cut smaller is kept beyond it (see prepareCompactionOrReason).
 */
export function maxKeptTokens(settings: CompactionSettings, contextWindow: number): number {
  return Math.floor(
    Math.max(0, compactionThreshold(contextWindow, settings)) * SESSION_DEFAULTS.compaction.maxKeepShareOfThreshold,
  );
}

/**
 * keepRecentTokens, clamped to a share of the threshold (a reference quirk could summarize
 * nothing forever) and to a share of the window (a fixed tail would fill a small window again
 * within a few turns, and compaction would thrash).
 */
export function effectiveKeepRecentTokens(settings: CompactionSettings, contextWindow?: number): number {
  if (contextWindow === undefined) return settings.keepRecentTokens;
  const windowCap = Math.floor(contextWindow * SESSION_DEFAULTS.compaction.maxKeepShareOfWindow);
  return Math.min(settings.keepRecentTokens, maxKeptTokens(settings, contextWindow), windowCap);
}

/** Estimated tokens of the messages in path[from, end). */
function tokensFrom(path: readonly SessionEntry[], from: number): number {
  let tokens = 0;
  for (let i = from; i < path.length; i++) {
    const e = path[i]!;
    if (e.type === 'message') tokens += estimateMessageTokens(e.message);
  }
  return tokens;
}

// Entries that neither add context nor change what a compaction would summarize.
const PASSIVE: ReadonlySet<string> = new Set([
  'label',
  'session_info',
  'custom',
  'compaction_job',
  'model_change',
  'thinking_level_change',
]);

export function prepareCompactionOrReason(
  path: readonly SessionEntry[],
  settings: CompactionSettings = DEFAULT_COMPACTION_SETTINGS,
  options: PrepareOptions = {},
): { preparation: CompactionPreparation } | { reason: NoCompactionReason } {
  for (let i = path.length - 1; i >= 0; i--) {
    const t = path[i]!.type;
    if (t === 'compaction') return { reason: 'already_compacted' };
    if (!PASSIVE.has(t)) break;
  }
  const prev = latestCompactionIndex(path);
  const prevEntry = prev === -1 ? undefined : (path[prev] as CompactionEntry);
  let start = 0;
  if (prev !== -1) {
    const kept = firstKeptIndex(path, prev);
    start = kept !== -1 ? kept : prev + 1;
  }
  const effective: CompactionSettings = {
    ...settings,
    keepRecentTokens: effectiveKeepRecentTokens(settings, options.contextWindow),
  };
  let cut = findCutPoint(path, start, path.length, effective.keepRecentTokens);
  // A tail that cannot be cut that small (a last reply with huge tool results): keep the last turn
  // alone when it fits the threshold beside the system prompt and tools (the reserve still holds
  // the summary and the next reply), so the model goes on from its results instead of redoing
  // them; the next compaction summarizes it. A last turn that does not fit: keep nothing.
  if (
    options.contextWindow !== undefined &&
    effective.keepRecentTokens > 0 &&
    tokensFrom(path, cut.firstKeptIndex) > maxKeptTokens(settings, options.contextWindow)
  ) {
    const last = lastTurnCutPoint(path, start, path.length);
    const room = compactionThreshold(options.contextWindow, settings) - (options.overheadTokens ?? 0);
    // Keeping a last turn that is all there is to compact would summarize nothing: no progress.
    if (last && last.firstKeptIndex > start && tokensFrom(path, last.firstKeptIndex) <= room) cut = last;
    else {
      effective.keepRecentTokens = 0;
      cut = findCutPoint(path, start, path.length, 0);
    }
  }
  // No entry at the cut: the cut is the end of the path and nothing is kept (an empty range is caught below).
  const firstKept = path[cut.firstKeptIndex];

  const historyEnd = cut.isSplitTurn ? cut.turnStartIndex : cut.firstKeptIndex;
  const summarizedEntryIds: string[] = [];
  const collect = (from: number, to: number): AgentMessage[] => {
    const out: AgentMessage[] = [];
    for (let i = from; i < to; i++) {
      const m = entryToMessage(path[i]!);
      if (m) {
        out.push(m);
        summarizedEntryIds.push(path[i]!.id);
      }
    }
    return out;
  };
  const messagesToSummarize = collect(start, historyEnd);
  const turnPrefixMessages = cut.isSplitTurn ? collect(cut.turnStartIndex, cut.firstKeptIndex) : [];
  if (messagesToSummarize.length === 0 && turnPrefixMessages.length === 0) return { reason: 'nothing_to_compact' };

  const fileOps = createFileOperations(prevEntry && !prevEntry.fromHook ? prevEntry.details : undefined);
  collectFileOperations(messagesToSummarize, fileOps);
  collectFileOperations(turnPrefixMessages, fileOps);

  const preparation: CompactionPreparation = {
    firstKeptEntryId: firstKept ? firstKept.id : KEPT_NOTHING,
    messagesToSummarize,
    turnPrefixMessages,
    isSplitTurn: cut.isSplitTurn,
    tokensBefore: estimateContextTokens(buildContextFromPath(path).messages).tokens,
    fileOps,
    settings: effective,
    summarizedEntryIds,
  };
  if (prevEntry) preparation.previousSummary = prevEntry.summary;
  return { preparation };
}

/** The plan for compacting `path` (root to leaf), or undefined when there is nothing to do. */
export function prepareCompaction(
  path: readonly SessionEntry[],
  settings: CompactionSettings = DEFAULT_COMPACTION_SETTINGS,
  options: PrepareOptions = {},
): CompactionPreparation | undefined {
  const r = prepareCompactionOrReason(path, settings, options);
  return 'preparation' in r ? r.preparation : undefined;
}
