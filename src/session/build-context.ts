// Context rebuild: what the agent sees at a leaf. The root-to-leaf path is scanned once; messages
// enter the list, state entries set the model and thinking level, metadata is skipped, and the
// latest compaction on the path replaces everything before its first kept entry by its summary.
import type { AgentMessage, AgentThinkingLevel } from '../agent/types.js';
import type { CompactionEntry, ModelRef, SessionContext, SessionEntry } from './types.js';

/** The message an entry contributes to context, if any (compactions only through their summary). */
export function entryToMessage(entry: SessionEntry): AgentMessage | undefined {
  switch (entry.type) {
    case 'message':
      return entry.message;
    case 'custom_message': {
      const m: AgentMessage = {
        role: 'custom',
        customType: entry.customType,
        content: entry.content,
        display: entry.display,
        timestamp: Date.parse(entry.timestamp),
      };
      if (entry.details !== undefined) m.details = entry.details;
      return m;
    }
    case 'branch_summary':
      return entry.summary
        ? {
            role: 'branchSummary',
            summary: entry.summary,
            fromId: entry.fromId,
            timestamp: Date.parse(entry.timestamp),
          }
        : undefined;
    default:
      return undefined;
  }
}

export function compactionSummaryMessage(entry: CompactionEntry): AgentMessage {
  return {
    role: 'compactionSummary',
    summary: entry.summary,
    tokensBefore: entry.tokensBefore,
    timestamp: Date.parse(entry.timestamp),
  };
}

function pushMessages(path: readonly SessionEntry[], from: number, to: number, out: AgentMessage[]): void {
  for (let i = from; i < to; i++) {
    const e = path[i]!;
    if (e.type === 'message') out.push(e.message);
    else if (e.type === 'custom_message' || e.type === 'branch_summary') {
      const m = entryToMessage(e);
      if (m) out.push(m);
    }
  }
}

/** Index of the latest compaction on the path, -1 when none. */
export function latestCompactionIndex(path: readonly SessionEntry[]): number {
  for (let i = path.length - 1; i >= 0; i--) if (path[i]!.type === 'compaction') return i;
  return -1;
}

/** Index of a compaction's first kept entry on the path (searching back from it), -1 when absent. */
export function firstKeptIndex(path: readonly SessionEntry[], compactionIndex: number): number {
  const id = (path[compactionIndex] as CompactionEntry).firstKeptEntryId;
  for (let i = compactionIndex; i >= 0; i--) if (path[i]!.id === id) return i;
  return -1;
}

/** Context at the end of a root-to-leaf path. */
export function buildContextFromPath(path: readonly SessionEntry[]): SessionContext {
  let model: ModelRef | null = null;
  let thinkingLevel: AgentThinkingLevel = 'off';
  let compaction = -1;
  for (let i = 0; i < path.length; i++) {
    const e = path[i]!;
    switch (e.type) {
      case 'message':
        if (e.message.role === 'assistant') model = { provider: e.message.provider, modelId: e.message.model };
        break;
      case 'model_change':
        model = { provider: e.provider, modelId: e.modelId };
        break;
      case 'thinking_level_change':
        thinkingLevel = e.thinkingLevel;
        break;
      case 'compaction':
        compaction = i;
        break;
    }
  }
  const messages: AgentMessage[] = [];
  if (compaction === -1) {
    pushMessages(path, 0, path.length, messages);
  } else {
    messages.push(compactionSummaryMessage(path[compaction] as CompactionEntry));
    const kept = firstKeptIndex(path, compaction);
    if (kept !== -1) pushMessages(path, kept, compaction, messages);
    pushMessages(path, compaction + 1, path.length, messages);
  }
  return { messages, model, thinkingLevel };
}

/**
 * Context at `leafId` over a flat entry list (any order). null → empty context; undefined or an
 * unknown id → the last entry. Orphans end the walk (their path starts at them).
 */
export function buildSessionContext(entries: readonly SessionEntry[], leafId?: string | null): SessionContext {
  if (leafId === null || entries.length === 0) return { messages: [], model: null, thinkingLevel: 'off' };
  const byId = new Map<string, SessionEntry>();
  for (const e of entries) byId.set(e.id, e);
  let leaf = leafId === undefined ? undefined : byId.get(leafId);
  leaf ??= entries[entries.length - 1]!;
  const path: SessionEntry[] = [];
  const seen = new Set<string>();
  for (
    let e: SessionEntry | undefined = leaf;
    e && !seen.has(e.id);
    e = e.parentId === null ? undefined : byId.get(e.parentId)
  ) {
    seen.add(e.id);
    path.push(e);
  }
  path.reverse();
  return buildContextFromPath(path);
}
