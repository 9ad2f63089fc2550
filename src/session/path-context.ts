// The current root-to-leaf path together with what it contributes to context, maintained
// incrementally. Rewinding truncates, appending pushes, so rebuilding the context is two array
// slices instead of a scan over every entry on the path (entries parsed from JSON have many
// shapes, and a scan over 100k of them costs ~10 ms; the slices cost ~0.1 ms).
//
// buildContextFromPath (build-context.ts) is the reference definition; this cache must always
// agree with it (a test compares both on random trees).
//
// A rewind only moves counts: the arrays keep their room, so the first appends after opening a
// long session and rewinding it write into space that is already there.
import type { AgentMessage, AgentThinkingLevel } from '../agent/types.js';
import { compactionSummaryMessage, entryToMessage } from './build-context.js';
import type { CompactionEntry, ModelRef, SessionContext, SessionEntry } from './types.js';

/**
 * Growable list of depths (ascending) with a logical length: truncating never frees or copies,
 * so the first appends after a deep rewind write into room the list already has.
 */
class DepthList {
  private items = new Int32Array(64);
  length = 0;

  push(depth: number): void {
    if (this.length === this.items.length) {
      const bigger = new Int32Array(this.items.length * 2);
      bigger.set(this.items);
      this.items = bigger;
    }
    this.items[this.length++] = depth;
  }

  /** The last depth, or undefined when empty. */
  last(): number | undefined {
    return this.length > 0 ? this.items[this.length - 1] : undefined;
  }

  /** Drops every depth >= `limit` (binary search: the list is ascending). */
  dropFrom(limit: number): void {
    let lo = 0;
    let hi = this.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (this.items[mid]! < limit) lo = mid + 1;
      else hi = mid;
    }
    this.length = lo;
  }
}

export class PathContext {
  /** `depthOf` gives an entry's depth in the tree (-1 when unknown): kept-range lookups in O(1). */
  constructor(private readonly depthOf: (id: string) => number) {}

  /**
   * entries[d] is the entry at depth d, for d < depth. Like the other arrays here it is never
   * shortened (a rewind moves the count; pushes overwrite), so no rewind makes V8 trim it and the
   * next append copy it whole.
   */
  private readonly entries: SessionEntry[] = [];
  private depth = 0;
  /** An exact copy of the path for readers (currentPath()), made on demand and kept up on pushes. */
  private exact: SessionEntry[] | undefined;
  /**
   * Messages contributed by the path, ignoring compaction: the first `messageCount` items. The
   * array is not shortened on a rewind (V8 would trim it and the next push copy it whole); the
   * items past the count are overwritten by the next pushes.
   */
  private readonly messages: AgentMessage[] = [];
  private messageCount = 0;
  /**
   * The first context's array, made at open (prepareFirstBuild) and kept equal to `messages` on
   * its first `messageCount` items by every push; the next build() trims it in place and hands it
   * over. A context of 50k messages is a 400 KB array, and on the 2-core VM of the bench fresh
   * memory of that size cost ~1.5 ms (page faults), most of a cold rewind at 100k entries. Only
   * the first build after opening gets it; later builds copy (one slice).
   */
  private spare: AgentMessage[] | undefined;
  /** messageEnd[d] = message count after path[d]. */
  private messageEnd = new Int32Array(64);
  /** Depths of entries that set the model / the thinking level / compact, ascending. */
  private readonly modelAt = new DepthList();
  private readonly thinkingAt = new DepthList();
  private readonly compactionAt = new DepthList();

  get length(): number {
    return this.depth;
  }

  /** The entry at depth `d` (d < length). */
  at(d: number): SessionEntry | undefined {
    return d < this.depth ? this.entries[d] : undefined;
  }

  /**
   * The path as an exact array, shared: callers must not mutate it. It follows appends; after a
   * rewind the next call returns a new array (one copy of the path).
   */
  path(): readonly SessionEntry[] {
    this.exact ??= this.entries.slice(0, this.depth);
    return this.exact;
  }

  /** A fresh copy of the path. */
  copy(): SessionEntry[] {
    return this.entries.slice(0, this.depth);
  }

  /** Room for a path of `length` entries without growing (a session opened at that length). */
  reserve(length: number): void {
    if (length <= this.messageEnd.length) return;
    const bigger = new Int32Array(length);
    bigger.set(this.messageEnd);
    this.messageEnd = bigger;
  }

  truncate(length: number): void {
    if (length >= this.depth) {
      if (length === 0) return;
      // Nothing to drop; the lists' searches still run (the first rewind after opening finds them compiled).
      this.modelAt.dropFrom(this.depth);
      this.thinkingAt.dropFrom(this.depth);
      this.compactionAt.dropFrom(this.depth);
      return;
    }
    this.depth = length;
    this.exact = undefined;
    this.messageCount = length > 0 ? this.messageEnd[length - 1]! : 0;
    this.modelAt.dropFrom(length);
    this.thinkingAt.dropFrom(length);
    this.compactionAt.dropFrom(length);
  }

  private pushMessage(message: AgentMessage): void {
    if (this.messageCount < this.messages.length) this.messages[this.messageCount] = message;
    else this.messages.push(message);
    const spare = this.spare;
    if (spare !== undefined) {
      if (this.messageCount < spare.length) spare[this.messageCount] = message;
      else spare.push(message);
    }
    this.messageCount++;
  }

  /** Prepares the array the next build() returns (see `spare`); called once a session is opened. */
  prepareFirstBuild(): void {
    if (this.messageCount > 0) this.spare = this.messages.slice(0, this.messageCount);
  }

  push(entry: SessionEntry): void {
    const depth = this.depth;
    if (depth < this.entries.length) this.entries[depth] = entry;
    else this.entries.push(entry);
    this.depth++;
    this.exact?.push(entry);
    switch (entry.type) {
      case 'message':
        this.pushMessage(entry.message);
        if (entry.message.role === 'assistant') this.modelAt.push(depth);
        break;
      case 'custom_message':
      case 'branch_summary': {
        const m = entryToMessage(entry);
        if (m) this.pushMessage(m);
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
    if (depth === this.messageEnd.length) {
      const bigger = new Int32Array(depth * 2);
      bigger.set(this.messageEnd);
      this.messageEnd = bigger;
    }
    this.messageEnd[depth] = this.messageCount;
  }

  private model(): ModelRef | null {
    const d = this.modelAt.last();
    if (d === undefined) return null;
    const e = this.entries[d]!;
    if (e.type === 'model_change') return { provider: e.provider, modelId: e.modelId };
    if (e.type === 'message' && e.message.role === 'assistant')
      return { provider: e.message.provider, modelId: e.message.model };
    return null;
  }

  private thinkingLevel(): AgentThinkingLevel {
    const d = this.thinkingAt.last();
    const e = d === undefined ? undefined : this.entries[d];
    return e && e.type === 'thinking_level_change' ? e.thinkingLevel : 'off';
  }

  private messagesBefore(depth: number): number {
    return depth > 0 ? this.messageEnd[depth - 1]! : 0;
  }

  build(): SessionContext {
    const model = this.model();
    const thinkingLevel = this.thinkingLevel();
    const c = this.compactionAt.last();
    const spare = this.spare;
    this.spare = undefined;
    if (c === undefined) {
      if (spare === undefined) return { messages: this.messages.slice(0, this.messageCount), model, thinkingLevel };
      spare.length = this.messageCount; // trims in place: no new memory
      return { messages: spare, model, thinkingLevel };
    }
    const compaction = this.entries[c] as CompactionEntry;
    const kept = this.depthOf(compaction.firstKeptEntryId);
    const onPath = kept >= 0 && kept <= c && this.entries[kept]!.id === compaction.firstKeptEntryId;
    // Earlier compactions inside the kept range contribute no message, so plain slices are right.
    const from = onPath ? this.messagesBefore(kept) : this.messageEnd[c]!;
    // (A compacted context is a kept tail, small enough to be copied into young memory.)
    const messages = [compactionSummaryMessage(compaction)].concat(this.messages.slice(from, this.messageCount));
    return { messages, model, thinkingLevel };
  }
}
