// Writing an AgentSession's messages to its SessionStore as the agent produces them, the error a
// failed write becomes, and what it does (SessionWriter: the session stops its run and refuses
// further work).
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

/** What a SessionWriter needs from its session: the store in use (fork() replaces it), a notice, a stop. */
export interface SessionWriterHost {
  store(): SessionStore;
  notify(text: string): void;
  /** Stops the run in progress (its retry waits, compactions and the agent). */
  stopRun(): void;
}

/**
 * An AgentSession's writes to its session file: each message as it ends, everything at a run's
 * end. The first failed write is kept and reported once, and it stops the run: going on would
 * leave work the file does not hold (resume would lose it silently), so no further prompt starts.
 */
export class SessionWriter {
  private failure: Error | undefined;

  constructor(private readonly host: SessionWriterHost) {}

  /** The error of the first failed write, once one failed. */
  get error(): Error | undefined {
    return this.failure;
  }

  /** message_end -> session entry (persistMessage); a failure is kept, not thrown. */
  write(message: AgentMessage): void {
    try {
      persistMessage(this.host.store(), message);
    } catch (err) {
      this.failed(err);
    }
  }

  /** A run ends with everything on disk (the store batches entries within a turn). */
  flush(): void {
    try {
      this.host.store().persist();
    } catch (err) {
      this.failed(err);
    }
  }

  /** The session file cannot be written: stop the run and refuse further work. */
  failed(err: unknown): void {
    if (this.failure) return;
    this.failure = storageError(err, this.host.store().path);
    this.host.notify(
      `${this.failure.message} The run was stopped; the session file holds everything up to the last entry that was written.`,
    );
    this.host.stopRun();
  }

  /** Throws once a write failed: the session cannot take more work. */
  assertWritable(): void {
    if (this.failure)
      throw new Error(`${this.failure.message} This session cannot go on; fix the problem and reopen it.`);
  }
}
