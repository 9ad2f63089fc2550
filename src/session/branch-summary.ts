// Leaving a branch of the tree: optionally summarize the part being abandoned (from the common
// ancestor to the old leaf, within a token budget) and attach the summary at the start of the
// new branch, so the conversation that continues there knows what was tried.
import { estimateMessageTokens } from '../ai/token-estimate.js';
import type { AgentMessage } from '../agent/types.js';
import { compactionSummaryMessage, entryToMessage } from './build-context.js';
import { SESSION_DEFAULTS } from './defaults.js';
import {
  collectFileOperations,
  createFileOperations,
  fileListsOf,
  formatFileLists,
  type FileOperations,
} from './file-operations.js';
import type { SessionStore } from './session-store.js';
import { serializeConversation } from './serialize-conversation.js';
import { summaryMaxTokens, type SummarizeOptions, type SummaryOutcome } from './summarize.js';
import { complete as registryComplete } from '../ai/registry.js';
import type { AssistantMessage, Context, StreamOptions } from '../ai/types.js';
import type { FileLists, SessionEntry } from './types.js';

export interface BranchSummaryOptions extends SummarizeOptions {
  /** Tokens kept free of the model's window (default 16,384). */
  reserveTokens?: number;
  /** `customInstructions` replace the default instructions instead of adding focus. */
  replaceInstructions?: boolean;
}

export const BRANCH_SUMMARY_PREAMBLE =
  'The user explored a different branch of this conversation and came back to this point.\nSummary of that branch:\n\n';

const BRANCH_INSTRUCTIONS = `Summarize the conversation above: it is a branch the user has just left. Another assistant continues from an earlier point and needs to know what was tried here.

Use exactly this format (write "(none)" under a heading with nothing to say):

## Goal
What the user was trying to achieve on this branch.

## Constraints & Preferences
- Requirements and preferences stated

## Progress
### Done
- [x] Finished work
### In Progress
- [ ] Unfinished work
### Blocked
- Problems met, with exact errors

## Key Decisions
- **Decision**: why

## Next Steps
1. What would have come next

Be brief. Keep exact file paths, names and error messages.`;

/** Entries on the path to `oldLeafId` below its common ancestor with `targetId`, oldest first. */
export function collectEntriesForBranchSummary(
  store: SessionStore,
  oldLeafId: string | null,
  targetId: string | null,
): { entries: SessionEntry[]; commonAncestorId: string | null } {
  const commonAncestorId = store.commonAncestor(oldLeafId, targetId);
  const path = store.getPath(oldLeafId);
  let start = 0;
  if (commonAncestorId !== null) start = path.findIndex((e) => e.id === commonAncestorId) + 1;
  return { entries: path.slice(start), commonAncestorId };
}

function branchMessage(entry: SessionEntry): AgentMessage | undefined {
  if (entry.type === 'compaction') return compactionSummaryMessage(entry);
  const m = entryToMessage(entry);
  // Tool results are the bulk of a branch and the calls already say what was done.
  return m && m.role !== 'toolResult' ? m : undefined;
}

/**
 * Newest-first selection under `budgetTokens`: messages are taken while they fit; a summary
 * entry that does not fit is still taken while under 90 % of the budget (it is dense); then stop.
 */
export function prepareBranchEntries(
  entries: readonly SessionEntry[],
  budgetTokens: number,
): { messages: AgentMessage[]; fileOps: FileOperations; totalTokens: number } {
  const fileOps = createFileOperations();
  for (const e of entries) {
    if (e.type === 'branch_summary' && !e.fromHook && e.details) {
      for (const p of e.details.readFiles) fileOps.read.add(p);
      for (const p of e.details.modifiedFiles) fileOps.edited.add(p);
    }
  }
  const picked: AgentMessage[] = [];
  let total = 0;
  for (let i = entries.length - 1; i >= 0; i--) {
    const e = entries[i]!;
    const m = branchMessage(e);
    if (!m) continue;
    const tokens = estimateMessageTokens(m);
    if (total + tokens > budgetTokens) {
      const isSummary = e.type === 'compaction' || e.type === 'branch_summary';
      if (isSummary && total < budgetTokens * SESSION_DEFAULTS.branchSummary.summaryEntriesUntilShare) {
        picked.push(m);
        total += tokens;
      }
      break;
    }
    picked.push(m);
    total += tokens;
  }
  picked.reverse();
  collectFileOperations(picked, fileOps);
  return { messages: picked, fileOps, totalTokens: total };
}

/** Summary text (preamble + model text + file lists) of the abandoned entries. */
export async function generateBranchSummary(
  entries: readonly SessionEntry[],
  options: BranchSummaryOptions,
): Promise<SummaryOutcome<{ summary: string; details: FileLists }>> {
  const d = SESSION_DEFAULTS.branchSummary;
  const reserve = options.reserveTokens ?? d.reserveTokens;
  const budget = (options.model.contextWindow || d.fallbackContextWindow) - reserve;
  const { messages, fileOps } = prepareBranchEntries(entries, budget);
  if (messages.length === 0) return { ok: false, error: 'No content to summarize.', retryable: false, aborted: false };

  const custom = options.customInstructions?.trim();
  const instructions =
    custom && options.replaceInstructions
      ? custom
      : custom
        ? `${BRANCH_INSTRUCTIONS}\n\nAdditional focus: ${custom}`
        : BRANCH_INSTRUCTIONS;
  const context: Context = {
    systemPrompt: 'You summarize conversations between a user and an AI coding assistant. Reply with the summary only.',
    messages: [
      {
        role: 'user',
        content: [
          {
            type: 'text',
            text: `<conversation>\n${serializeConversation(messages)}\n</conversation>\n\n${instructions}`,
          },
        ],
        timestamp: Date.now(),
      },
    ],
  };
  const streamOptions: StreamOptions = {
    ...options.streamOptions,
    maxTokens: summaryMaxTokens(options.model, d.maxTokens, 1),
  };
  if (options.signal) streamOptions.signal = options.signal;
  let reply: AssistantMessage;
  try {
    reply = await (options.complete ?? registryComplete)(options.model, context, streamOptions);
  } catch (err) {
    const aborted = options.signal?.aborted === true;
    return {
      ok: false,
      error: `Branch summary failed: ${err instanceof Error ? err.message : String(err)}`,
      retryable: !aborted,
      aborted,
    };
  }
  if (reply.stopReason === 'aborted' || options.signal?.aborted)
    return { ok: false, error: 'Branch summary was aborted.', retryable: false, aborted: true };
  if (reply.stopReason === 'error')
    return {
      ok: false,
      error: `Branch summary failed: ${reply.errorMessage ?? 'unknown provider error'}`,
      retryable: true,
      aborted: false,
    };
  const text = reply.content
    .map((b) => (b.type === 'text' ? b.text : ''))
    .join('')
    .trim();
  const details = fileListsOf(fileOps);
  return { ok: true, value: { summary: BRANCH_SUMMARY_PREAMBLE + text + formatFileLists(details), details } };
}

export interface NavigateOptions {
  /** Summarize the branch being left with this model. */
  summarize?: BranchSummaryOptions;
  /** A summary supplied by the host instead of a model call (recorded with fromHook). */
  providedSummary?: { summary: string; details?: FileLists };
  /** Label for the summary entry (or for the target when there is no summary). */
  label?: string;
}

export type NavigateOutcome =
  | { status: 'noop'; leafId: string | null }
  | { status: 'moved'; leafId: string | null; editorText?: string; summaryEntryId?: string }
  | { status: 'aborted'; message: string }
  | { status: 'failed'; message: string };

function textOfMessage(entry: SessionEntry): string | undefined {
  const content =
    entry.type === 'message' && entry.message.role === 'user'
      ? entry.message.content
      : entry.type === 'custom_message'
        ? entry.content
        : undefined;
  if (content === undefined) return undefined;
  if (typeof content === 'string') return content;
  return content.map((b) => (b.type === 'text' ? b.text : '')).join('');
}

/**
 * Moves to `targetId`. A user (or custom) message target puts the leaf at its parent and returns
 * its text for re-editing; any other target becomes the leaf. With a summary, it is appended as
 * a child of the new leaf (and becomes the leaf) in the same append. Aborting or failing the
 * summary leaves the session untouched.
 */
export async function navigateTree(
  store: SessionStore,
  targetId: string,
  options: NavigateOptions = {},
): Promise<NavigateOutcome> {
  const oldLeafId = store.leafId;
  if (targetId === oldLeafId) return { status: 'noop', leafId: oldLeafId };
  const target = store.getEntry(targetId);
  if (!target) return { status: 'failed', message: `Cannot navigate to ${targetId}: no such entry in this session.` };
  const editorText = textOfMessage(target);
  const newLeafId = editorText !== undefined ? target.parentId : targetId;

  let summary: { summary: string; details?: FileLists; fromHook: boolean } | undefined;
  if (options.providedSummary) summary = { ...options.providedSummary, fromHook: true };
  else if (options.summarize) {
    const { entries } = collectEntriesForBranchSummary(store, oldLeafId, targetId);
    if (entries.length > 0) {
      const r = await generateBranchSummary(entries, options.summarize);
      if (!r.ok && r.aborted)
        return {
          status: 'aborted',
          message: 'Navigation cancelled: the branch summary was aborted. The session is unchanged.',
        };
      if (!r.ok)
        return {
          status: 'failed',
          message: `${r.error} The session is unchanged; navigate again without a summary to skip it.`,
        };
      summary = { ...r.value, fromHook: false };
    }
  }
  if (store.leafId !== oldLeafId)
    return { status: 'failed', message: 'The session changed while summarizing; navigation was cancelled.' };

  let summaryEntryId: string | undefined;
  if (summary)
    summaryEntryId = store.branchWithSummary(newLeafId, oldLeafId, summary.summary, summary.details, summary.fromHook);
  else store.moveLeaf(newLeafId);
  if (options.label !== undefined) store.appendLabel(summaryEntryId ?? targetId, options.label);

  const out: NavigateOutcome = { status: 'moved', leafId: store.leafId };
  if (editorText !== undefined) out.editorText = editorText;
  if (summaryEntryId) out.summaryEntryId = summaryEntryId;
  return out;
}
