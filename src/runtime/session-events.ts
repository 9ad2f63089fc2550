// The event stream of an AgentSession: every AgentEvent of the loop, plus what the session itself
// does around runs (auto-compaction, retries, navigation, model changes). Displays, the JSON and
// RPC modes and the orchestrator's workers consume this one union; it is JSON-serializable.
import type { AgentEvent, AgentThinkingLevel } from '../agent/types.js';
import type { FileLists } from '../session/types.js';
import type { HookRunEvent } from './hook-session.js';

/** What a finished compaction produced (also the data of the RPC `compact` response). */
export interface CompactionResult {
  /** The summary text as stored (file lists included). */
  summary: string;
  firstKeptEntryId: string;
  tokensBefore: number;
  details: FileLists;
  /** Id of the compaction entry in the session. */
  entryId: string;
  /** Where the summary came from: a model call, the extractive builder, or a hook/extension. */
  source: 'model' | 'extractive' | 'hook';
}

export type CompactionReason = 'threshold' | 'overflow' | 'manual';

export type AgentSessionEvent =
  | AgentEvent
  /** Compaction started on its own (after a run, or to recover from an overflow). */
  | { type: 'auto_compaction_start'; reason: 'threshold' | 'overflow' }
  | {
      type: 'auto_compaction_end';
      reason: 'threshold' | 'overflow';
      result?: CompactionResult;
      aborted: boolean;
      /** The failed turn is re-run after an overflow compaction. */
      willRetry: boolean;
      errorMessage?: string;
    }
  /** A manual compact() call. */
  | { type: 'compaction_start'; reason: 'manual' }
  | { type: 'compaction_end'; reason: 'manual'; result?: CompactionResult; aborted: boolean; errorMessage?: string }
  /** A transient provider error; the turn runs again after delayMs. */
  | { type: 'auto_retry_start'; attempt: number; maxAttempts: number; delayMs: number; errorMessage: string }
  | { type: 'auto_retry_end'; success: boolean; attempt: number; finalError?: string }
  /** The leaf moved (rewind, navigate); with a branch summary when one was written. */
  | {
      type: 'session_navigate';
      fromLeafId: string | null;
      toLeafId: string | null;
      summaryEntryId?: string;
      editorText?: string;
    }
  /** fork(): the session continues in a new file holding the path up to the fork point. */
  | { type: 'session_fork'; fromSessionFile?: string; sessionFile?: string; sessionId: string }
  | { type: 'model_change'; provider: string; modelId: string; previous: { provider: string; modelId: string } }
  | { type: 'thinking_level_change'; thinkingLevel: AgentThinkingLevel }
  /** A guard or a cap ended the run (the prompt rejects with a RunStoppedError of the same kind). */
  | { type: 'run_stopped'; kind: 'loop' | 'max_turns' | 'budget' | 'compaction'; message: string }
  /** The loop detector saw the model repeat itself and told it so (a steering message follows). */
  | { type: 'loop_warning'; pattern: 'identical_calls' | 'cycle' | 'repeated_text'; detail: string }
  /** A command hook ran (hook-session.ts): its event, exit code, duration, and whether it blocked. */
  | HookRunEvent
  /** An extension handler threw; the session went on. */
  | { type: 'extension_error'; extensionPath: string; event: string; error: string };

export type AgentSessionEventType = AgentSessionEvent['type'];

export type AgentSessionListener = (event: AgentSessionEvent) => void;
