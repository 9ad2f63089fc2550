// Public API of the session layer: the append-only session tree, context rebuild, compaction
// and branch summaries.
export {
  SESSION_DEFAULTS,
  DEFAULT_COMPACTION_SETTINGS,
  type CompactionSettings,
  type RetrySettings,
} from './defaults.js';
export type {
  SessionHeader,
  SessionEntry,
  SessionEntryType,
  EntryBase,
  MessageEntry,
  ModelChangeEntry,
  ThinkingLevelChangeEntry,
  CompactionEntry,
  BranchSummaryEntry,
  CustomEntry,
  CustomMessageEntry,
  LabelEntry,
  SessionInfoEntry,
  CompactionJobEntry,
  LeafLine,
  FileLists,
  ModelRef,
  SessionContext,
} from './types.js';
export { KEPT_NOTHING } from './types.js';
export { SessionStore, type SessionStoreOptions, type CompactionJobFields } from './session-store.js';
export { MemoryStorage, type SessionStorage, type ReadSummary, type LineHandler } from './storage.js';
export { JsonlFileStorage, type JsonlFileStorageOptions } from './jsonl-file-storage.js';
export { migrateEntries, type MigrationResult } from './migrate.js';
export { buildSessionContext, buildContextFromPath, entryToMessage, latestCompactionIndex } from './build-context.js';
export { findCutPoint, isValidCutPoint, type CutPoint } from './find-cut-point.js';
export {
  prepareCompaction,
  prepareCompactionOrReason,
  shouldCompact,
  compactionThreshold,
  effectiveKeepRecentTokens,
  type CompactionPreparation,
  type NoCompactionReason,
  type PrepareOptions,
} from './prepare-compaction.js';
export {
  compact,
  generateSummary,
  buildSummaryPrompt,
  buildInConversationInstructions,
  isRetryableSummaryError,
  SUMMARY_SECTIONS,
  SUMMARIZER_SYSTEM_PROMPT,
  IN_CONVERSATION_SUMMARY_OPENING,
  type CompleteFunction,
  type SummaryConversation,
  type SummarizeOptions,
  type CompactionResult,
  type SummaryOutcome,
} from './summarize.js';
export { serializeConversation } from './serialize-conversation.js';
export {
  collectFileOperations,
  createFileOperations,
  fileListsOf,
  formatFileLists,
  stripFileLists,
  type FileOperations,
} from './file-operations.js';
export {
  runCompaction,
  findIncompleteCompactionJob,
  type RunCompactionOptions,
  type CompactionOutcome,
  type CompactionHookDecision,
} from './compaction-job.js';
export { parseSummary, renderSummary, type StructuredSummary, type KeyDecision } from './parse-summary.js';
export {
  navigateTree,
  generateBranchSummary,
  prepareBranchEntries,
  collectEntriesForBranchSummary,
  BRANCH_SUMMARY_PREAMBLE,
  type BranchSummaryOptions,
  type NavigateOptions,
  type NavigateOutcome,
} from './branch-summary.js';
export {
  estimateTextTokens,
  estimateMessageTokens,
  estimateContextTokens,
  calculateContextTokens,
  type ContextTokenEstimate,
} from '../ai/token-estimate.js';
export { createRedactor, deepMap, type Redactor, type SecretValue } from './redact.js';
