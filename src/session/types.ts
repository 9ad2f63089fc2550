// The session file format: a header line, then one entry per line. Entries form a tree through
// parentId; a leaf pointer selects the current path. Nothing is ever rewritten or deleted.
import type { ImageContent, TextContent } from '../ai/types.js';
import type { AgentMessage, AgentThinkingLevel } from '../agent/types.js';

export interface SessionHeader {
  type: 'session';
  version: number;
  /** Full UUID. */
  id: string;
  timestamp: string;
  cwd: string;
  /** Path of the session this one was branched from. */
  parentSession?: string;
}

export interface EntryBase {
  /** 8 hex chars, unique within the session. */
  id: string;
  /** The leaf at append time; null for a root. */
  parentId: string | null;
  /** ISO-8601. */
  timestamp: string;
}

export interface MessageEntry extends EntryBase {
  type: 'message';
  message: AgentMessage;
}

export interface ModelChangeEntry extends EntryBase {
  type: 'model_change';
  provider: string;
  modelId: string;
}

export interface ThinkingLevelChangeEntry extends EntryBase {
  type: 'thinking_level_change';
  thinkingLevel: AgentThinkingLevel;
}

/** Files touched by the summarized part; both lists sorted, read excludes modified. */
export interface FileLists {
  readFiles: string[];
  modifiedFiles: string[];
}

export interface CompactionEntry extends EntryBase {
  type: 'compaction';
  summary: string;
  /**
   * Context resumes at this entry (kept verbatim) after the summary. The compaction's own id
   * means it kept nothing (everything before it is summarized; see KEPT_NOTHING).
   */
  firstKeptEntryId: string;
  tokensBefore: number;
  details?: FileLists;
  /** Supplied by a host hook rather than generated; its file lists are not trusted downstream. */
  fromHook?: boolean;
  /** The staged job that produced it. */
  jobId?: string;
}

export interface BranchSummaryEntry extends EntryBase {
  type: 'branch_summary';
  /** Leaf of the branch that was left (what the summary describes), or "root". */
  fromId: string;
  summary: string;
  details?: FileLists;
  fromHook?: boolean;
}

/** Application state; never part of the model's context. */
export interface CustomEntry extends EntryBase {
  type: 'custom';
  customType: string;
  data?: unknown;
}

/** Application content that enters the model's context as a `custom` message. */
export interface CustomMessageEntry extends EntryBase {
  type: 'custom_message';
  customType: string;
  content: string | (TextContent | ImageContent)[];
  display: boolean;
  details?: unknown;
}

export interface LabelEntry extends EntryBase {
  type: 'label';
  targetId: string;
  /** Undefined clears the label. */
  label?: string;
}

export interface SessionInfoEntry extends EntryBase {
  type: 'session_info';
  /** Display name; the latest wins. */
  name?: string;
}

/**
 * One stage of a compaction job. The job's entries precede its compaction entry on the path; a
 * job without a compaction entry (crash, give-up) leaves the context exactly as it was.
 */
export type CompactionJobEntry = EntryBase & { type: 'compaction_job'; jobId: string } & (
    | {
        stage: 'cut_point';
        firstKeptEntryId: string;
        tokensBefore: number;
        isSplitTurn: boolean;
        summarizeCount: number;
        /** An earlier job on this path that never finished; this one replaces it. */
        restartsJobId?: string;
      }
    | { stage: 'summary_requested'; attempt: number; provider: string; modelId: string }
    | { stage: 'attempt_failed'; attempt: number; error: string; retryInMs: number }
    | { stage: 'gave_up'; attempts: number; reason: string }
  );

export type SessionEntry =
  | MessageEntry
  | ModelChangeEntry
  | ThinkingLevelChangeEntry
  | CompactionEntry
  | BranchSummaryEntry
  | CustomEntry
  | CustomMessageEntry
  | LabelEntry
  | SessionInfoEntry
  | CompactionJobEntry;

export type SessionEntryType = SessionEntry['type'];

/**
 * A leaf move (rewind) is persisted as this pointer line, not as an entry: it has no id and is
 * not part of the tree. On open, the leaf is whichever comes last in the file: the last entry
 * or the last leaf line.
 */
export interface LeafLine {
  type: 'leaf';
  targetId: string | null;
  timestamp: string;
}

export interface ModelRef {
  provider: string;
  modelId: string;
}

/** What an agent needs to continue from the current leaf. */
export interface SessionContext {
  messages: AgentMessage[];
  model: ModelRef | null;
  thinkingLevel: AgentThinkingLevel;
}

export const ENTRY_TYPES: ReadonlySet<string> = new Set<SessionEntryType>([
  'message',
  'model_change',
  'thinking_level_change',
  'compaction',
  'branch_summary',
  'custom',
  'custom_message',
  'label',
  'session_info',
  'compaction_job',
]);

/**
 * firstKeptEntryId of a compaction preparation that keeps nothing verbatim (keepRecentTokens 0:
 * a whole session summarized, as for an orchestrator handoff). It is not an entry id; the store
 * writes the compaction's own id in its place, the form migrations also use for "kept nothing".
 */
export const KEPT_NOTHING = '(kept-nothing)';
