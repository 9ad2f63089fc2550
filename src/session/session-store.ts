// SessionStore: an append-only session tree over a storage (JSONL file or memory).
//
// Persistence rule: a new session writes nothing until its first assistant message is appended;
// then the header and every entry so far go out in ONE write. After that, lines are written in
// batches (see "When an entry reaches storage" below). Lines are never rewritten, except by a
// format migration or a header recovery, both of which keep a backup copy of the original file.
//
// When an entry reaches storage (the durability point), writeMode 'batched', the default:
//   - the entry is in the tree (context, paths, children) as soon as append*() returns;
//   - its line is written, together with every line appended in the same synchronous stretch of
//     code, in ONE write at the next microtask checkpoint: before any I/O callback, timer or
//     message is handled, and before the appending code resumes from its next await;
//   - earlier when the staged lines pass SESSION_DEFAULTS.writeBatchBytes, on persist(), flush()
//     and close(), and on process exit (the 'exit' event, so also after process.exit()).
//   A logical step (one append*() call, moveLeaf, branchWithSummary) is never split between two
//   writes. A process killed in that window loses only the entries of the stretch it was killed
//   in: the file is still a prefix of the session, as if the kill had come a moment earlier.
//   Callers that act outside the process on an entry (run a tool whose call it records, report a
//   result) call persist() first; the runtime does (src/runtime/agent-session.ts).
// writeMode 'immediate' writes every append*() before it returns (one write(2) per call).
// Either way a written line survives the process being killed; power loss needs `fsync: true`
// (jsonl-file-storage.ts).
import { join } from 'node:path';
import type { ImageContent, TextContent } from '../ai/types.js';
import type { AgentMessage, AgentThinkingLevel } from '../agent/types.js';
import { SESSION_DEFAULTS } from './defaults.js';
import { EntryIdSequence, newSessionId } from './entry-ids.js';
import { JsonlFileStorage, type JsonlFileStorageOptions } from './jsonl-file-storage.js';
import { loadSession } from './load-session.js';
import { fileTimestamp, newHeader, openStoredSession } from './open-session.js';
import type { Redactor } from './redact.js';
import { SessionTree } from './session-tree.js';
import { StagedLines } from './staged-lines.js';
import { jsonBytes } from './stringify-json.js';
import { MemoryStorage, type SessionStorage } from './storage.js';
import type {
  BranchSummaryEntry,
  CompactionEntry,
  CompactionJobEntry,
  CustomEntry,
  CustomMessageEntry,
  FileLists,
  LabelEntry,
  LeafLine,
  MessageEntry,
  ModelChangeEntry,
  SessionContext,
  SessionEntry,
  SessionHeader,
  SessionInfoEntry,
  ThinkingLevelChangeEntry,
} from './types.js';
import { KEPT_NOTHING } from './types.js'; // a value; the list above is types only

export interface SessionStoreOptions extends JsonlFileStorageOptions {
  /** Working directory recorded in a new header (default: process.cwd()). */
  cwd?: string;
  /**
   * Keeps secrets out of the file: every line (entries and header) is serialized through it (see
   * redact.ts). The entries in memory, and so the agent's context, keep the original text.
   */
  redact?: Pick<Redactor, 'serializeBytes'>;
  /** Path of the session this one was branched from. */
  parentSession?: string;
  /** When appended lines are written; see the top of this file. Default 'batched'. */
  writeMode?: 'batched' | 'immediate';
}

/** Fields of a new entry; the store fills id, parentId and timestamp. */
type NewEntry<T extends SessionEntry> = T extends SessionEntry ? Omit<T, 'id' | 'parentId' | 'timestamp'> : never;

/** Distributes over the job-stage union so each stage keeps its own fields. */
export type CompactionJobFields = NewEntry<CompactionJobEntry>;

/** Stores with lines staged for writing: written on process exit if nothing wrote them before. */
const unwrittenAtExit = new Set<() => void>();
let exitHookInstalled = false;
function writeAtExit(write: () => void): void {
  unwrittenAtExit.add(write);
  installExitHook();
}

function installExitHook(): void {
  if (exitHookInstalled) return;
  exitHookInstalled = true;
  process.once('exit', () => {
    for (const w of unwrittenAtExit) {
      try {
        w();
      } catch {
        // The process is ending; the file keeps every line written before.
      }
    }
  });
}

/** ISO time of now; the string is reused within a millisecond (formatting costs more than an append's bookkeeping). */
let isoMs = -1;
let iso = '';
function isoNow(): string {
  const ms = Date.now();
  if (ms !== isoMs) {
    isoMs = ms;
    iso = new Date(ms).toISOString();
  }
  return iso;
}

export class SessionStore {
  /** Problems found while opening (damage, recovery, migration); empty for a clean file. */
  readonly warnings: string[];
  private readonly tree: SessionTree;
  private headerValue: SessionHeader;
  /** True once lines may be written: the header is in storage, or first in `unwritten`. */
  private released: boolean;
  /** Lines not in storage yet, in order: staged for the next write, or held until the first reply. */
  private readonly unwritten = new StagedLines();
  private writeScheduled = false;
  /** The last write failed; its lines are still in `unwritten`. */
  private writeError: Error | undefined;
  private readonly immediate: boolean;
  private readonly ids = new EntryIdSequence();
  /** The tree holds ids this store did not make (read from storage or adopted): new ids are checked against them. */
  private foreignIds: boolean;
  private readonly redact: Pick<Redactor, 'serializeBytes'> | undefined;
  private readonly writeErrorListeners = new Set<(error: Error) => void>();
  private readonly writeAtCheckpoint = (): void => {
    this.writeScheduled = false;
    try {
      this.writeUnwritten();
    } catch (err) {
      for (const listener of this.writeErrorListeners) listener(err as Error);
    }
  };
  private readonly writeOnExit = (): void => this.writeUnwritten();

  private constructor(
    readonly storage: SessionStorage,
    header: SessionHeader,
    tree: SessionTree,
    released: boolean,
    warnings: string[],
    options: SessionStoreOptions,
  ) {
    this.headerValue = header;
    this.tree = tree;
    this.foreignIds = tree.size > 0;
    this.released = released;
    this.warnings = warnings;
    this.redact = options.redact;
    this.immediate = options.writeMode === 'immediate';
  }

  /**
   * One line of the file for `value` as UTF-8, without its newline (redacted when the store has a
   * redactor). Usually a view that the next serialization overwrites: stage it at once.
   */
  private line(value: object): Uint8Array {
    return this.redact ? this.redact.serializeBytes(value) : jsonBytes(value);
  }

  // ---- opening ----------------------------------------------------------------------------------

  /** Opens a session file, or starts a new one at `path` when it does not exist. Never fails on content. */
  static open(path: string, options: SessionStoreOptions = {}): SessionStore {
    return SessionStore.fromStorage(new JsonlFileStorage(path, options), options);
  }

  /**
   * Starts a new session. `pathOrDir` ending in ".jsonl" is the file; otherwise a file named
   * `<timestamp>_<session id>.jsonl` is chosen in that folder. Nothing is written yet (see the rule above).
   */
  static create(pathOrDir: string, options: SessionStoreOptions = {}): SessionStore {
    const id = newSessionId();
    const path = pathOrDir.endsWith('.jsonl') ? pathOrDir : join(pathOrDir, `${fileTimestamp()}_${id}.jsonl`);
    const storage = new JsonlFileStorage(path, options);
    const probe = loadSession(storage);
    if (probe.exists && probe.headerProblem !== 'empty') {
      throw new Error(`Session file ${path} already exists; open it with SessionStore.open(path) instead of create().`);
    }
    return new SessionStore(storage, newHeader(options, id), new SessionTree(), false, [], options);
  }

  /** A session that never touches disk. */
  static inMemory(options: SessionStoreOptions = {}): SessionStore {
    return SessionStore.fromStorage(new MemoryStorage(), options);
  }

  /** Loads whatever `storage` holds, repairing what it must (header, old versions); see open-session.ts. */
  static fromStorage(storage: SessionStorage, options: SessionStoreOptions = {}): SessionStore {
    const opened = openStoredSession(storage, options);
    const store = new SessionStore(storage, opened.header, opened.tree, opened.released, opened.warnings, options);
    store.prepareFirstAppend();
    return store;
  }

  /**
   * Pays at open what the first append would pay once per process (the clock's ISO formatting,
   * the exit hook, the serializer's first run), so the first rewind or append after opening a
   * session costs what the next ones do. The session tree keeps room for the same reason.
   * Serializing the last entry once (a message, usually) and touching the rewind code compiles
   * what a rewind + append runs: cold, that took 2-3 ms of the first rewind at 100k entries.
   */
  private prepareFirstAppend(): void {
    isoNow();
    installExitHook();
    this.line(this.headerValue);
    const entries = this.tree.entries;
    if (entries.length > 0) this.line(entries[entries.length - 1]!);
    const leaf: LeafLine = { type: 'leaf', targetId: this.tree.leafId, timestamp: isoNow() };
    this.line(leaf);
    this.newId(); // an id drawn and dropped: the sequence only promises ids that never repeat
    this.tree.prepareRewind();
  }

  // ---- reading -----------------------------------------------------------------------------------

  get header(): Readonly<SessionHeader> {
    return this.headerValue;
  }

  get id(): string {
    return this.headerValue.id;
  }

  get path(): string | undefined {
    return this.storage.path;
  }

  get cwd(): string {
    return this.headerValue.cwd;
  }

  get leafId(): string | null {
    return this.tree.leafId;
  }

  /**
   * True once the session's lines go to storage: a new session stays unwritten until its first
   * reply. (With batched writes the lines reach the file at the next write point.)
   */
  get isPersisted(): boolean {
    return this.released;
  }

  /** All entries in file order (every branch). */
  get entries(): readonly SessionEntry[] {
    return this.tree.entries;
  }

  get sessionName(): string | undefined {
    return this.tree.sessionName;
  }

  getEntry(id: string): SessionEntry | undefined {
    return this.tree.get(id);
  }

  getLeafEntry(): SessionEntry | undefined {
    const id = this.tree.leafId;
    return id === null ? undefined : this.tree.get(id);
  }

  /** Children in append order; `null` lists the roots. */
  getChildren(id: string | null): SessionEntry[] {
    return this.tree.children(id);
  }

  /** Root-to-entry path (default: the leaf). */
  getPath(leafId: string | null = this.tree.leafId): SessionEntry[] {
    return this.tree.pathTo(leafId);
  }

  /** The tip of every branch (entries without children), in file order. */
  getBranches(): SessionEntry[] {
    return this.tree.leaves();
  }

  getLabel(id: string): string | undefined {
    return this.tree.label(id);
  }

  commonAncestor(a: string | null, b: string | null): string | null {
    return this.tree.commonAncestor(a, b);
  }

  /** Context at the current leaf, from an index kept up to date on every append and leaf move. */
  buildContext(): SessionContext {
    return this.tree.context();
  }

  /**
   * The current path without copying (read-only view for hot paths such as compaction checks). It
   * follows appends; after a leaf move, call again (the first call after a move copies the path once).
   */
  currentPath(): readonly SessionEntry[] {
    return this.tree.currentPath();
  }

  // ---- appending ---------------------------------------------------------------------------------

  private newId(): string {
    return this.ids.next(this.foreignIds ? this.tree : undefined);
  }

  private makeEntry<T extends SessionEntry>(fields: NewEntry<T>, parentId: string | null = this.tree.leafId): T {
    // Key order only matters to people reading the file: type first, then the tree fields.
    const head = { type: fields.type, id: this.newId(), parentId, timestamp: isoNow() };
    return Object.assign(head, fields) as unknown as T;
  }

  /**
   * Stages `lines` (held back until the first reply unless `releasesPending`), indexes `entries`,
   * and writes now in 'immediate' mode or past the batch size, else at the next checkpoint. A
   * write that fails here undoes this call (nothing indexed, its lines dropped) and throws.
   */
  private commit(lines: readonly object[], entries: readonly SessionEntry[], releasesPending: boolean): void {
    if (this.writeError) this.writeUnwritten(); // retry a failed write first; throws while storage still fails
    const staged = this.unwritten;
    const mark = staged.size;
    const markCount = staged.count;
    try {
      for (const value of lines) staged.push(this.line(value));
    } catch (err) {
      staged.truncate(mark, markCount); // a value JSON cannot hold (a cycle, a BigInt): nothing of this call stays
      throw err;
    }
    const releasing = !this.released && releasesPending;
    let headerBytes = 0;
    if (releasing) {
      const sizeBefore = staged.size;
      staged.unshift(this.line(this.headerValue));
      headerBytes = staged.size - sizeBefore;
      this.released = true;
    }
    if (this.released && (this.immediate || staged.size >= SESSION_DEFAULTS.writeBatchBytes)) {
      try {
        this.writeUnwritten();
      } catch (err) {
        // Undo this call: its lines, and the header if it put it first.
        staged.truncate(mark + headerBytes, markCount + (releasing ? 1 : 0));
        if (releasing) {
          staged.shift();
          this.released = false;
        }
        if (staged.count === 0 || !this.released) this.writeError = undefined; // nothing older waits
        throw err;
      }
    } else if (this.released) {
      this.scheduleWrite();
    }
    for (const e of entries) this.tree.add(e);
  }

  private scheduleWrite(): void {
    if (this.writeScheduled) return;
    this.writeScheduled = true;
    queueMicrotask(this.writeAtCheckpoint);
    writeAtExit(this.writeOnExit);
  }

  /** Writes every released unwritten line in one write; on failure keeps them and throws. */
  private writeUnwritten(): void {
    if (!this.released || this.unwritten.count === 0) return;
    try {
      this.storage.append(this.unwritten.view());
    } catch (err) {
      this.writeError = err instanceof Error ? err : new Error(String(err));
      throw this.writeError;
    }
    this.unwritten.clear();
    this.writeError = undefined;
    unwrittenAtExit.delete(this.writeOnExit);
  }

  private appendEntry<T extends SessionEntry>(fields: NewEntry<T>): string {
    const entry = this.makeEntry<T>(fields);
    const isReply = entry.type === 'message' && entry.message.role === 'assistant';
    this.commit([entry], [entry], isReply);
    return entry.id;
  }

  appendMessage(message: AgentMessage): string {
    // The hot path: built as one literal (same keys and order as makeEntry gives).
    const entry: MessageEntry = {
      type: 'message',
      id: this.newId(),
      parentId: this.tree.leafId,
      timestamp: isoNow(),
      message,
    };
    const entries = [entry];
    this.commit(entries, entries, message.role === 'assistant');
    return entry.id;
  }

  appendModelChange(provider: string, modelId: string): string {
    return this.appendEntry<ModelChangeEntry>({ type: 'model_change', provider, modelId });
  }

  appendThinkingLevelChange(thinkingLevel: AgentThinkingLevel): string {
    return this.appendEntry<ThinkingLevelChangeEntry>({ type: 'thinking_level_change', thinkingLevel });
  }

  /** Application state that never enters the model's context. */
  appendCustom(customType: string, data?: unknown): string {
    return this.appendEntry<CustomEntry>(
      data === undefined ? { type: 'custom', customType } : { type: 'custom', customType, data },
    );
  }

  /** Application content that enters the model's context (as a `custom` message). */
  appendCustomMessage(
    customType: string,
    content: string | (TextContent | ImageContent)[],
    display = true,
    details?: unknown,
  ): string {
    const fields: NewEntry<CustomMessageEntry> = { type: 'custom_message', customType, content, display };
    if (details !== undefined) fields.details = details;
    return this.appendEntry<CustomMessageEntry>(fields);
  }

  /** Sets (or, with undefined, clears) a label on an entry. Throws for an unknown target. */
  appendLabel(targetId: string, label: string | undefined): string {
    if (!this.tree.has(targetId)) throw new Error(`Cannot label ${targetId}: no such entry in the session.`);
    return this.appendEntry<LabelEntry>(
      label === undefined ? { type: 'label', targetId } : { type: 'label', targetId, label },
    );
  }

  appendSessionInfo(name: string): string {
    return this.appendEntry<SessionInfoEntry>({ type: 'session_info', name: name.trim() });
  }

  /** A compaction at the leaf; firstKeptEntryId KEPT_NOTHING becomes its own id (it kept nothing). */
  appendCompaction(
    summary: string,
    firstKeptEntryId: string,
    tokensBefore: number,
    details?: FileLists,
    fromHook?: boolean,
    jobId?: string,
  ): string {
    const fields: NewEntry<CompactionEntry> = { type: 'compaction', summary, firstKeptEntryId, tokensBefore };
    if (details) fields.details = details;
    if (fromHook) fields.fromHook = true;
    if (jobId) fields.jobId = jobId;
    const entry = this.makeEntry<CompactionEntry>(fields);
    if (entry.firstKeptEntryId === KEPT_NOTHING) entry.firstKeptEntryId = entry.id;
    this.commit([entry], [entry], false);
    return entry.id;
  }

  /** A branch summary at the current leaf; `fromId` is the leaf of the branch it describes. */
  appendBranchSummary(fromId: string | null, summary: string, details?: FileLists, fromHook?: boolean): string {
    return this.appendEntry<BranchSummaryEntry>(this.branchSummaryFields(fromId, summary, details, fromHook));
  }

  /** One stage of a staged compaction job (see compaction-job.ts). */
  appendCompactionJob(fields: CompactionJobFields): string {
    return this.appendEntry<CompactionJobEntry>(fields);
  }

  private branchSummaryFields(
    fromId: string | null,
    summary: string,
    details?: FileLists,
    fromHook?: boolean,
  ): NewEntry<BranchSummaryEntry> {
    const fields: NewEntry<BranchSummaryEntry> = { type: 'branch_summary', fromId: fromId ?? 'root', summary };
    if (details) fields.details = details;
    if (fromHook) fields.fromHook = true;
    return fields;
  }

  /**
   * Moves the leaf to `newLeafId` and attaches a branch summary there, as one append: the summary
   * is a child of the new leaf and becomes the leaf. `fromId` names the branch that was left.
   */
  branchWithSummary(
    newLeafId: string | null,
    fromId: string | null,
    summary: string,
    details?: FileLists,
    fromHook?: boolean,
  ): string {
    if (newLeafId !== null && !this.tree.has(newLeafId))
      throw new Error(`Cannot branch from ${newLeafId}: no such entry in the session.`);
    const entry = this.makeEntry<BranchSummaryEntry>(
      this.branchSummaryFields(fromId, summary, details, fromHook),
      newLeafId,
    );
    this.commit([entry], [entry], false);
    return entry.id;
  }

  /**
   * Rewinds (or moves) the leaf to any entry; null = before the first entry, so the next append
   * starts a new root. Persisted as a leaf line so it survives reopening. Moving to the current
   * leaf does nothing. Throws for an unknown id.
   */
  moveLeaf(id: string | null): void {
    if (id === this.tree.leafId) return;
    if (id !== null && !this.tree.has(id))
      throw new Error(`Cannot move the leaf to ${id}: no such entry in the session.`);
    const line: LeafLine = { type: 'leaf', targetId: id, timestamp: new Date().toISOString() };
    this.commit([line], [], false);
    this.tree.setLeaf(id);
  }

  // ---- branching into a new file ---------------------------------------------------------------

  /**
   * A new session holding only the root-to-`leafId` path (same entry ids), with `parentSession`
   * pointing here and labels of path entries re-applied after the leaf. Written at once if the
   * path holds an assistant reply, otherwise deferred like any new session.
   */
  createBranchedSession(leafId: string | null, pathOrDir: string, options: SessionStoreOptions = {}): SessionStore {
    // A branch keeps the redaction of the session it comes from unless told otherwise.
    const opts: SessionStoreOptions = { cwd: this.cwd, ...(this.redact ? { redact: this.redact } : {}), ...options };
    if (this.path !== undefined) opts.parentSession = this.path;
    const target = pathOrDir === ':memory:' ? SessionStore.inMemory(opts) : SessionStore.create(pathOrDir, opts);
    const path = this.tree.pathTo(leafId);
    const labels: [string, string][] = [];
    for (const e of path) {
      const label = this.tree.label(e.id);
      if (label !== undefined) labels.push([e.id, label]);
    }
    const copy = path.filter((e) => e.type !== 'label');
    target.adopt(copy);
    for (const [id, label] of labels) target.appendLabel(id, label);
    return target;
  }

  /** Takes over existing entries (a branched copy) in one append. */
  private adopt(entries: SessionEntry[]): void {
    if (entries.length === 0) return;
    const chained: SessionEntry[] = [];
    let parent: string | null = null;
    for (const e of entries) {
      chained.push({ ...e, parentId: parent } as SessionEntry);
      parent = e.id;
    }
    const hasReply = chained.some((e) => e.type === 'message' && e.message.role === 'assistant');
    this.foreignIds = true;
    this.commit(chained, chained, hasReply);
  }

  // ---- lifecycle -----------------------------------------------------------------------------------

  /**
   * Writes every entry appended so far now, in one write; throws (naming the file) if storage
   * fails, and the lines stay staged for the next try. Lines of a new session waiting for its
   * first reply stay unwritten (flush() writes those too).
   */
  persist(): void {
    this.writeUnwritten();
  }

  /**
   * `listener` hears of a batched write that failed at a checkpoint, where no caller could catch
   * it. The lines stay staged; the next append*() or persist() retries them and throws while
   * storage still fails. Returns the unsubscribe function.
   */
  onWriteError(listener: (error: Error) => void): () => void {
    this.writeErrorListeners.add(listener);
    return () => this.writeErrorListeners.delete(listener);
  }

  /** Writes everything now, even the lines of a new session that has no assistant reply yet. */
  flush(): void {
    if (!this.released) this.commit([], [], true);
    this.writeUnwritten();
  }

  /**
   * Writes the staged lines and releases the file. Lines still held back (a session that never
   * got a reply) are dropped on purpose: such a session leaves no file. Call flush() first to
   * keep them. Throws if the last write fails (the file is released all the same).
   */
  close(): void {
    try {
      this.writeUnwritten();
    } finally {
      unwrittenAtExit.delete(this.writeOnExit);
      this.storage.close();
    }
  }
}
