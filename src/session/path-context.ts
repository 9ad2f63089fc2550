// The current root-to-leaf path together with what it contributes to context, maintained
// incrementally. Rewinding truncates, appending pushes, so rebuilding the context is two array
// slices instead of a scan over every entry on the path (entries parsed from JSON have many
// shapes, and a scan over 100k of them costs ~10 ms; the slices cost ~0.1 ms).
//
// buildContextFromPath (build-context.ts) is the reference definition; this cache must always
// agree with it (a test compares both on random trees).
import type { AgentMessage, AgentThinkingLevel } from '../agent/types.js';
import { compactionSummaryMessage, entryToMessage } from './build-context.js';
import type { CompactionEntry, ModelRef, SessionContext, SessionEntry } from './types.js';

export class PathContext {
  /** `depthOf` gives an entry's depth in the tree (-1 when unknown): kept-range lookups in O(1). */
  constructor(private readonly depthOf: (id: string) => number) {}

  /** path[d] is the entry at depth d. */
  readonly path: SessionEntry[] = [];
  /** Messages contributed by the path, ignoring compaction. */
  private readonly messages: AgentMessage[] = [];
  /** messageEnd[d] = messages.length after path[d]. */
  private readonly messageEnd: number[] = [];
  /** Depths of entries that set the model / the thinking level / compact, ascending. */
  private readonly modelAt: number[] = [];
  private readonly thinkingAt: number[] = [];
  private readonly compactionAt: number[] = [];

  get length(): number {
    return this.path.length;
  }

  truncate(length: number): void {
    if (length >= this.path.length) return;
    this.path.length = length;
    this.messageEnd.length = length;
    this.messages.length = length > 0 ? this.messageEnd[length - 1]! : 0;
    popAbove(this.modelAt, length);
    popAbove(this.thinkingAt, length);
    popAbove(this.compactionAt, length);
  }

  push(entry: SessionEntry): void {
    const depth = this.path.length;
    this.path.push(entry);
    switch (entry.type) {
      case 'message':
        this.messages.push(entry.message);
        if (entry.message.role === 'assistant') this.modelAt.push(depth);
        break;
      case 'custom_message':
      case 'branch_summary': {
        const m = entryToMessage(entry);
        if (m) this.messages.push(m);
        break;
      }
      case 'model_change':
        this.modelAt.push(depth);
        break;
      case 'thinking_level_change':
        this.thinkingAt.push(depth);
        break;
      case 'compaction':
        this.compactionAt.push(depth);
        break;
    }
    this.messageEnd.push(this.messages.length);
  }

  private model(): ModelRef | null {
    const d = this.modelAt[this.modelAt.length - 1];
    if (d === undefined) return null;
    const e = this.path[d]!;
    if (e.type === 'model_change') return { provider: e.provider, modelId: e.modelId };
    if (e.type === 'message' && e.message.role === 'assistant')
      return { provider: e.message.provider, modelId: e.message.model };
    return null;
  }

  private thinkingLevel(): AgentThinkingLevel {
    const d = this.thinkingAt[this.thinkingAt.length - 1];
    const e = d === undefined ? undefined : this.path[d];
    return e && e.type === 'thinking_level_change' ? e.thinkingLevel : 'off';
  }

  private messagesBefore(depth: number): number {
    return depth > 0 ? this.messageEnd[depth - 1]! : 0;
  }

  build(): SessionContext {
    const model = this.model();
    const thinkingLevel = this.thinkingLevel();
    const c = this.compactionAt[this.compactionAt.length - 1];
    if (c === undefined) return { messages: this.messages.slice(), model, thinkingLevel };
    const compaction = this.path[c] as CompactionEntry;
    const kept = this.depthOf(compaction.firstKeptEntryId);
    const onPath = kept >= 0 && kept <= c && this.path[kept]!.id === compaction.firstKeptEntryId;
    // Earlier compactions inside the kept range contribute no message, so plain slices are right.
    const from = onPath ? this.messagesBefore(kept) : this.messageEnd[c]!;
    const messages = [compactionSummaryMessage(compaction)].concat(this.messages.slice(from));
    return { messages, model, thinkingLevel };
  }
}

function popAbove(depths: number[], length: number): void {
  while (depths.length > 0 && depths[depths.length - 1]! >= length) depths.pop();
}
