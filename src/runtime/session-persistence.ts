// Writing an AgentSession's messages to its SessionStore as the agent produces them, and the
// error a failed write becomes (the session then stops its run and refuses further work).
import type { AgentMessage } from '../agent/types.js';
import type { SessionStore } from '../session/session-store.js';
import { errorText } from './event-bus.js';

/**
 * message_end -> session entry. A new session's first write happens with its first reply. A
 * reply is written before this returns: its tool calls run next, and a run's last reply ends
 * it. Other entries go out with the store's next batch, within the same event-loop turn.
 * Throws when the store cannot write.
 */
export function persistMessage(store: SessionStore, message: AgentMessage): void {
  if (message.role === 'custom') {
    store.appendCustomMessage(message.customType, message.content, message.display, message.details);
  } else if (message.role !== 'compactionSummary' && message.role !== 'branchSummary') {
    // Summaries come from session entries (compaction, branch_summary) and are never stored twice.
    store.appendMessage(message);
  }
  if (message.role === 'assistant') store.persist();
}

/** The error of a failed write to `file` (the storage's message names the file already, or not). */
export function storageError(err: unknown, file: string | undefined): Error {
  const text = errorText(err);
  const name = file ?? '(memory)';
  return new Error(text.includes(name) ? text : `Could not write to the session file ${name}: ${text}`);
}
