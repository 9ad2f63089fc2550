// Where a compaction cuts the path: everything before the cut is summarized, everything from it
// on is kept verbatim. Cuts land only where a turn may begin or continue (a user, assistant or
// summary/custom message), never on a tool result, so a tool call always stays with its result.
import { estimateMessageTokens } from '../ai/token-estimate.js';
import type { SessionEntry } from './types.js';

export interface CutPoint {
  /** Index of the first kept entry. */
  firstKeptIndex: number;
  /** Index of the user message that starts the turn the cut falls in; -1 when not split. */
  turnStartIndex: number;
  /** The cut falls inside a turn: its beginning is summarized separately as a turn prefix. */
  isSplitTurn: boolean;
}

const CUT_ROLES: ReadonlySet<string> = new Set([
  'user',
  'assistant',
  'bashExecution',
  'custom',
  'branchSummary',
  'compactionSummary',
  'peer',
]);
const TURN_START_ROLES: ReadonlySet<string> = new Set(['user', 'bashExecution', 'peer']);

export function isValidCutPoint(entry: SessionEntry): boolean {
  if (entry.type === 'message') return CUT_ROLES.has(entry.message.role);
  return entry.type === 'branch_summary' || entry.type === 'custom_message';
}

function isTurnStart(entry: SessionEntry): boolean {
  if (entry.type === 'message') return TURN_START_ROLES.has(entry.message.role);
  return entry.type === 'branch_summary' || entry.type === 'custom_message';
}

/**
 * Chooses the cut in entries[start, end). Walking back from the newest message, the kept part
 * grows until it holds at least `keepRecentTokens`; the cut is the first valid cut point at or
 * after that entry. It then moves back over state/metadata entries directly before it (model
 * changes, labels...), which belong with what follows. With no valid cut point the cut is
 * `start` (nothing to summarize); when everything fits, the first valid cut point (keep all);
 * when the newest messages alone pass the budget and no cut point follows them, the last one.
 * keepRecentTokens <= 0 keeps nothing: the cut is `end`.
 */
export function findCutPoint(
  entries: readonly SessionEntry[],
  start: number,
  end: number,
  keepRecentTokens: number,
): CutPoint {
  // Keep nothing: everything in [start, end) is history, and no turn is split.
  if (keepRecentTokens <= 0) return { firstKeptIndex: end, turnStartIndex: -1, isSplitTurn: false };
  const cuts: number[] = [];
  for (let i = start; i < end; i++) if (isValidCutPoint(entries[i]!)) cuts.push(i);
  if (cuts.length === 0) return { firstKeptIndex: start, turnStartIndex: -1, isSplitTurn: false };

  let cut = cuts[0]!;
  let kept = 0;
  for (let i = end - 1; i >= start; i--) {
    const e = entries[i]!;
    if (e.type !== 'message') continue;
    kept += estimateMessageTokens(e.message);
    if (kept >= keepRecentTokens) {
      // No cut point at or after it (the newest message is a tool result bigger than the tail):
      // keep the smallest tail there is, never everything.
      cut = cuts.find((c) => c >= i) ?? cuts[cuts.length - 1]!;
      break;
    }
  }
  return cutAt(entries, start, cut);
}

/**
 * The cut that keeps only the last turn: the newest assistant message and everything after it
 * (its tool results, a steering message). A tool call never leaves its results behind, because
 * every result follows the reply that asked for it. Undefined when [start, end) holds no reply.
 */
export function lastTurnCutPoint(entries: readonly SessionEntry[], start: number, end: number): CutPoint | undefined {
  for (let i = end - 1; i >= start; i--) {
    const e = entries[i]!;
    if (e.type === 'message' && e.message.role === 'assistant') return cutAt(entries, start, i);
  }
  return undefined;
}

/** The cut at a valid cut point, moved back over the metadata before it, with its split turn. */
function cutAt(entries: readonly SessionEntry[], start: number, at: number): CutPoint {
  let cut = at;
  // Decide "split turn" on the message at the cut, before extending over metadata: a model change
  // right before a user message must not make the previous turn look split (a reference quirk).
  const anchor = entries[cut]!;
  while (cut > start) {
    const prev = entries[cut - 1]!;
    if (prev.type === 'message' || prev.type === 'compaction' || isValidCutPoint(prev)) break;
    cut--;
  }
  if (isTurnStart(anchor)) return { firstKeptIndex: cut, turnStartIndex: -1, isSplitTurn: false };
  for (let i = cut - 1; i >= start; i--) {
    if (isTurnStart(entries[i]!)) return { firstKeptIndex: cut, turnStartIndex: i, isSplitTurn: true };
  }
  return { firstKeptIndex: cut, turnStartIndex: -1, isSplitTurn: false };
}
