// The interactive mode's state and behaviour, apart from how it is drawn: it owns the editor,
// the transcript and the pickers, maps keys to actions, and drives the AgentSession through its
// public API (prompt, steer, followUp, abort, compact, navigate, fork, setModel, stats). The ink
// component only renders `state` and forwards keys.
//
// The conversation goes to the terminal's own scrollback: an item is printed once (ink's Static)
// as soon as it and every item before it are finished, and is never drawn again; only the rest
// (the reply being streamed, running tools, what came after them) is redrawn below it with the
// editor. What is printed cannot be taken back, so a rewind, fork or new session prints a
// separator line and goes on below it.
import type { AgentSession } from '../../runtime/agent-session.js';
import { isRunStoppedError } from '../../runtime/run-limits.js';
import { CompactionNotDoneError } from '../../session/compaction-job.js';
import { cutOffTurn, type CutOffTurn } from '../../runtime/session-resume.js';
import type { SessionStats } from '../../runtime/stats.js';
import type { AgentSessionEvent } from '../../runtime/session-events.js';
import { formatCost, formatTokens } from '../format-units.js';
import {
  backspace,
  deleteForward,
  emptyEditor,
  insertText,
  lineEnd,
  lineStart,
  moveDown,
  moveLeft,
  moveRight,
  moveUp,
  newline,
  pressEnter,
  remember,
  setText,
  type EditorState,
} from './editor-state.js';
import { helpText, parseInput } from './slash-commands.js';
import { addNotice, applyEvent, transcriptFromMessages, type Transcript, type TranscriptItem } from './transcript.js';
import { treeRows, userRowsOnPath, type TreeRow } from './tree-entries.js';
import type { InteractiveState, KeyPress, PrintedEntry, SeparatorItem } from './interactive-state.js';

export type {
  InteractiveState,
  KeyPress,
  Picker,
  PrintedEntry,
  QueuedMessage,
  SeparatorItem,
} from './interactive-state.js';

export interface ControllerOptions {
  /** Opens a fresh session for /new (unset: /new says it is not available). */
  newSession?: () => Promise<AgentSession>;
  /** Called once when the user quits. */
  onExit: () => void;
}

/** Items of a reopened session printed at start; the earlier ones are counted in one line. */
export const RESUMED_ITEMS_PRINTED = 100;

/** Finished: drawn for the last time, so it can go to the scrollback. */
function isFinished(item: TranscriptItem): boolean {
  if (item.kind === 'assistant') return !item.streaming;
  if (item.kind === 'tool') return item.state === 'done' || item.state === 'error';
  return true;
}

export class InteractiveController {
  state: InteractiveState;
  private session: AgentSession;
  private unsubscribe: () => void;
  private readonly listeners = new Set<() => void>();
  private exited = false;
  /** Cancels the /tree branch summary in flight (Esc). */
  private summaryAbort: AbortController | undefined;
  /** transcript.items[0, printedUpTo) as they were printed: a printed item that changes later is printed again. */
  private printedItems: TranscriptItem[] = [];
  private printedKeys = 0;

  constructor(
    session: AgentSession,
    private readonly options: ControllerOptions,
  ) {
    this.session = session;
    this.state = { ...this.freshState(session, emptyEditor(promptHistory(session))), printed: [], printedUpTo: 0 };
    this.state = { ...this.state, ...this.printResumed(this.state.transcript) };
    this.unsubscribe = session.subscribe((e) => this.onEvent(e));
  }

  get currentSession(): AgentSession {
    return this.session;
  }

  /** For useSyncExternalStore. */
  subscribe = (listener: () => void): (() => void) => {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  };
  getState = (): InteractiveState => this.state;

  private freshState(session: AgentSession, editor: EditorState): Omit<InteractiveState, 'printed' | 'printedUpTo'> {
    return {
      transcript: transcriptFromMessages(session.messages),
      editor,
      activity: 'idle',
      queued: [],
      stats: session.stats(),
      model: session.model.id,
      expanded: false,
      confirmExit: false,
    };
  }

  /**
   * Applies `change`, then prints what became final. `flush` prints the live items too, finished
   * or not (a run is over: a tool call that got no result will not get one from this run).
   */
  private set(change: Partial<InteractiveState>, flush = false): void {
    const next = { ...this.state, ...change };
    this.state = { ...next, ...this.printFinished(next, flush) };
    for (const l of this.listeners) l();
  }

  private entry(item: TranscriptItem | SeparatorItem, expanded: boolean): PrintedEntry {
    return { key: `p${this.printedKeys++}`, item, expanded };
  }

  private separator(text: string): SeparatorItem {
    return { kind: 'separator', key: `sep${this.printedKeys}`, text };
  }

  /** The printed entries and boundary after `s`: a finished prefix of the live items is printed. */
  private printFinished(s: InteractiveState, flush: boolean): Pick<InteractiveState, 'printed' | 'printedUpTo'> {
    const items = s.transcript.items;
    const add: PrintedEntry[] = [];
    // A printed item that changed since (a tool call printed unanswered at the end of a run that
    // got its result later) cannot be redrawn where it is: it is printed again, as it is now.
    for (let i = 0; i < this.printedItems.length; i++) {
      const now = items[i];
      // (Events also replace items with equal copies: the tool result comes as tool_execution_end and message_end.)
      if (now && now !== this.printedItems[i] && isFinished(now)) {
        const changed = JSON.stringify(now) !== JSON.stringify(this.printedItems[i]);
        this.printedItems[i] = now;
        if (changed) add.push(this.entry(now, s.expanded));
      }
    }
    let upTo = this.printedItems.length;
    while (upTo < items.length && (flush || isFinished(items[upTo]!))) {
      this.printedItems.push(items[upTo]!);
      add.push(this.entry(items[upTo]!, s.expanded));
      upTo++;
    }
    if (add.length === 0 && upTo === s.printedUpTo) return { printed: s.printed, printedUpTo: s.printedUpTo };
    return { printed: add.length === 0 ? s.printed : [...s.printed, ...add], printedUpTo: upTo };
  }

  /**
   * A reopened session's history, at most its last RESUMED_ITEMS_PRINTED items. The tool calls of
   * a turn a kill cut off (after the last prompt) stay live: start() finishes them. An unanswered
   * call further back never will be, and is printed as it is.
   */
  private printResumed(t: Transcript): Pick<InteractiveState, 'printed' | 'printedUpTo'> {
    const lastPrompt = t.items.findLastIndex((i) => i.kind === 'user');
    const unfinished = t.items.findIndex((i, at) => at > lastPrompt && !isFinished(i));
    const upTo = unfinished === -1 ? t.items.length : unfinished;
    const skipped = Math.max(0, upTo - RESUMED_ITEMS_PRINTED);
    this.printedItems = t.items.slice(0, upTo);
    const printed: PrintedEntry[] = [];
    if (skipped > 0)
      printed.push(
        this.entry(this.separator(`… ${skipped} earlier items of this session not shown (/tree lists them)`), false),
      );
    for (const item of t.items.slice(skipped, upTo)) printed.push(this.entry(item, false));
    return { printed, printedUpTo: upTo };
  }

  /**
   * The conversation is replaced (rewind, fork, new session, compaction): what is still live is
   * printed as it is, then `separator` and `shown` (items of the new transcript worth printing;
   * the rest of it is already in the scrollback above), and the new transcript goes on from there.
   */
  private replaceTranscript(
    transcript: Transcript,
    separator: string | undefined,
    shown: TranscriptItem[],
    change: Partial<InteractiveState> = {},
  ): void {
    const flushed = { ...this.state, ...this.printFinished(this.state, true) };
    const add = [...(separator === undefined ? [] : [this.separator(separator)]), ...shown].map((i) =>
      this.entry(i, flushed.expanded),
    );
    this.printedItems = transcript.items.slice();
    this.state = {
      ...flushed,
      ...change,
      transcript,
      printed: [...flushed.printed, ...add],
      printedUpTo: transcript.items.length,
    };
    for (const l of this.listeners) l();
  }

  /** Called when /new replaced the session (the old one is disposed here). */
  onSessionChange?: (session: AgentSession) => void;

  /** A line in the conversation (also how the session's own notices reach the screen). */
  notify(text: string, tone: 'info' | 'warn' | 'error' = 'info'): void {
    this.notice(text, tone);
  }

  private notice(text: string, tone: 'info' | 'warn' | 'error' = 'info'): void {
    this.set({ transcript: addNotice(this.state.transcript, text, tone) });
  }

  private onEvent(e: AgentSessionEvent): void {
    const change: Partial<InteractiveState> = { transcript: applyEvent(this.state.transcript, e) };
    if (e.type === 'message_start' && e.message.role === 'user' && this.state.queued.length > 0) {
      // A queued message entered the context: it is no longer waiting.
      const content = e.message.content;
      const text =
        typeof content === 'string' ? content : content.map((b) => (b.type === 'text' ? b.text : '')).join('');
      const at = this.state.queued.findIndex((q) => q.text === text);
      if (at !== -1) change.queued = this.state.queued.filter((_, i) => i !== at);
    }
    if (
      e.type === 'message_end' ||
      e.type === 'agent_end' ||
      e.type === 'compaction_end' ||
      e.type === 'auto_compaction_end' ||
      e.type === 'model_change'
    ) {
      change.stats = this.session.stats();
      change.model = this.session.model.id;
    }
    this.set(change);
  }

  // ---- keys ------------------------------------------------------------------------------------

  handleKey(input: string, key: KeyPress): void {
    const ctrlC = key.ctrl === true && input === 'c';
    if (ctrlC) {
      if (this.state.confirmExit) return void this.quit();
      this.set({
        confirmExit: true,
        editor: this.state.editor.text === '' ? this.state.editor : setText(this.state.editor, ''),
      });
      return;
    }
    if (this.state.confirmExit) this.set({ confirmExit: false });
    if (this.state.picker) return void this.pickerKey(key);

    const ed = this.state.editor;
    if (key.escape && !key.return) {
      if (this.state.activity === 'working' || this.state.activity === 'compacting') void this.abort();
      else if (this.state.activity === 'summarizing') this.summaryAbort?.abort();
      return;
    }
    if (key.return) {
      // Shift+Enter (kitty keyboard protocol) adds a line; Alt+Enter queues a follow-up.
      if (key.shift) return void this.setEditor(newline(ed));
      const r = pressEnter(ed);
      if (r.kind === 'edit') return void this.setEditor(r.state);
      this.submit(r.text, key.meta === true ? 'followUp' : 'steer');
      return;
    }
    if (key.ctrl && input === 'o') return void this.set({ expanded: !this.state.expanded });
    if (key.ctrl && input === 'a') return void this.setEditor(lineStart(ed));
    if (key.ctrl && input === 'e') return void this.setEditor(lineEnd(ed));
    if (key.ctrl && input === 'u') return void this.setEditor(setText(ed, ''));
    if (key.upArrow) return void this.setEditor(moveUp(ed));
    if (key.downArrow) return void this.setEditor(moveDown(ed));
    if (key.leftArrow) return void this.setEditor(moveLeft(ed));
    if (key.rightArrow) return void this.setEditor(moveRight(ed));
    if (key.home) return void this.setEditor(lineStart(ed));
    if (key.end) return void this.setEditor(lineEnd(ed));
    // Terminals send Backspace as DEL, which ink reports as `delete` like the Delete key itself:
    // both erase before the cursor; Ctrl+D deletes the character under it (as in readline).
    if (key.backspace || key.delete) return void this.setEditor(backspace(ed));
    if (key.ctrl && input === 'd') return void this.setEditor(deleteForward(ed));
    if (key.ctrl || key.tab) return;
    if (input !== '') this.setEditor(insertText(ed, input));
  }

  private setEditor(editor: EditorState): void {
    this.set({ editor });
  }

  private pickerKey(key: KeyPress): void {
    const p = this.state.picker!;
    if (key.escape) return void this.set({ picker: undefined });
    if (key.upArrow) return void this.set({ picker: { ...p, index: Math.max(0, p.index - 1) } });
    if (key.downArrow) return void this.set({ picker: { ...p, index: Math.min(p.rows.length - 1, p.index + 1) } });
    if (key.pageUp) return void this.set({ picker: { ...p, index: Math.max(0, p.index - 10) } });
    if (key.pageDown) return void this.set({ picker: { ...p, index: Math.min(p.rows.length - 1, p.index + 10) } });
    if (key.return) {
      const row = p.rows[p.index];
      this.set({ picker: undefined });
      if (row) void (p.kind === 'tree' ? this.rewindTo(row) : this.forkFrom(row));
    }
  }

  // ---- actions -----------------------------------------------------------------------------------

  /**
   * Once the screen is up: a turn a kill cut off (tool calls without results, a prompt without a
   * reply) is finished first, then `initialPrompt` is sent. Resumed at once rather than offered:
   * reopening the session says "go on with it", and the kernel's resume (AgentSession.resume,
   * session-resume.ts) is safe to start unasked: a cut-off call with side effects is never run
   * again (the model is told it was interrupted), only read-only ones are; Esc stops it like any
   * run. (`orchestrate resume` continues a run's agents through the same resume.)
   */
  async start(initialPrompt?: string): Promise<void> {
    const cut = cutOffTurn(this.session.messages);
    if (cut) {
      this.notice(cutOffText(cut), 'warn');
      await this.run('working', () => this.session.resume());
    }
    if (initialPrompt !== undefined && initialPrompt !== '' && !this.exited) this.submit(initialPrompt);
  }

  /** Sends the editor's text: a prompt, a queued message while the agent works, or a command. */
  submit(raw: string, whileWorking: 'steer' | 'followUp' = 'steer'): void {
    const parsed = parseInput(raw);
    this.set({ editor: remember(this.state.editor, raw) });
    if (parsed.kind === 'empty') return;
    if (parsed.kind === 'command') return void this.command(parsed.name, parsed.args);
    const text = parsed.kind === 'prompt' ? parsed.text : raw.trim();
    if (
      parsed.kind === 'other-command' &&
      !this.session.commands.some((c) => c.name === parsed.name) &&
      !parsed.name.startsWith('skill:')
    ) {
      this.notice(
        `Unknown command /${parsed.name}. /help lists the commands; start with // to send a text that begins with "/".`,
        'error',
      );
      return;
    }
    // Extension commands run at once, even mid-run (the session dispatches them).
    if (parsed.kind === 'other-command' && this.state.activity !== 'idle') {
      this.session
        .prompt(text)
        .catch((err: unknown) => this.notice(err instanceof Error ? err.message : String(err), 'error'));
      return;
    }
    if (this.state.activity !== 'idle') {
      if (this.state.activity === 'summarizing')
        return void this.notice('Wait until the branch summary is written, or press Esc to cancel the rewind.', 'warn');
      if (this.state.activity !== 'working')
        return void this.notice('Wait until the compaction is over, or press Esc to cancel it.', 'warn');
      if (whileWorking === 'followUp') this.session.followUp(text);
      else this.session.steer(text);
      this.set({ queued: [...this.state.queued, { kind: whileWorking, text }] });
      return;
    }
    void this.run('working', () => this.session.prompt(text));
  }

  /** Runs one session operation with the activity shown; its failure becomes a notice. */
  private async run(activity: InteractiveState['activity'], work: () => Promise<unknown>): Promise<void> {
    this.set({ activity });
    try {
      await work();
    } catch (err) {
      // A guard's stop was shown by its run_stopped event already.
      if (!isRunStoppedError(err)) this.notice(err instanceof Error ? err.message : String(err), 'error');
    } finally {
      this.set({ activity: 'idle', stats: this.session.stats(), model: this.session.model.id }, true);
    }
  }

  /** Esc: stops the run; the session keeps what was said and done up to here. */
  async abort(): Promise<void> {
    const was = this.state.activity;
    await this.session.abort();
    if (was === 'working') this.notice('Aborted. The session keeps everything up to here; type to go on.', 'warn');
  }

  private async command(name: string, args: string): Promise<void> {
    switch (name) {
      case 'help':
        return this.notice(helpText());
      case 'exit':
        return this.quit();
      case 'session':
        return this.notice(sessionText(this.session.stats(), this.session));
      case 'model':
        return this.model(args);
      case 'compact':
        return this.compact(args);
      case 'tree':
        return this.openPicker('tree');
      case 'fork':
        return this.openPicker('fork');
      case 'new':
        return this.newSession();
    }
  }

  private model(id: string): void {
    if (id === '')
      return void this.notice(
        `Model: ${this.session.model.id} (${this.session.model.provider}). Switch with /model ID.`,
      );
    if (this.state.activity !== 'idle')
      return void this.notice('The model can be changed while the agent is idle: press Esc first, or wait.', 'warn');
    try {
      const m = this.session.setModel(id);
      this.set({ model: m.id, stats: this.session.stats() });
      this.notice(`Model: ${m.id} from the next prompt on.`);
    } catch (err) {
      this.notice(err instanceof Error ? err.message : String(err), 'error');
    }
  }

  private async compact(instructions: string): Promise<void> {
    if (this.state.activity === 'working') await this.session.abort();
    await this.run('compacting', async () => {
      const custom = instructions === '' ? undefined : instructions;
      let all = false;
      const r = await this.session.compact(custom).catch((err: unknown) => {
        // Asked for explicitly, a short session is summarized whole rather than refused.
        if (!(err instanceof CompactionNotDoneError) || err.reason !== 'nothing_to_compact') throw err;
        all = true;
        return this.session.compact(custom, { keepRecentTokens: 0 });
      });
      // The conversation kept is in the scrollback already: only the summary (first) is printed.
      const transcript = transcriptFromMessages(this.session.messages);
      const summary = transcript.items[0]?.kind === 'summary' ? [transcript.items[0]] : [];
      this.replaceTranscript(transcript, undefined, summary);
      const whole = all ? ' (all of it: the session was shorter than the part normally kept)' : '';
      const full = this.state.expanded ? '' : ' Ctrl+O prints summaries and tool results in full from now on.';
      this.notice(`Compacted ${formatTokens(r.tokensBefore)} tokens of conversation into a summary${whole}.${full}`);
    });
  }

  private openPicker(kind: 'tree' | 'fork'): void {
    if (this.state.activity !== 'idle')
      return void this.notice(`/${kind} works while the agent is idle: press Esc first, or wait.`, 'warn');
    const store = this.session.store;
    const rows = kind === 'tree' ? treeRows(store) : userRowsOnPath(store);
    if (rows.length === 0)
      return void this.notice(
        kind === 'tree' ? 'The session has no entries yet.' : 'No prompt to fork from yet.',
        'warn',
      );
    const leafAt = rows.findIndex((r) => r.isLeaf);
    this.set({ picker: { kind, rows, index: leafAt === -1 ? rows.length - 1 : leafAt } });
  }

  /**
   * Rewinds with a summary of the branch left. Esc while the summary is written cancels the
   * whole rewind (the session stays as it was): Esc means "stop what I asked for", and a rewind
   * quietly done without its summary would lose what the abandoned branch tried. /tree again
   * starts over.
   */
  private async rewindTo(row: TreeRow): Promise<void> {
    const cancel = new AbortController();
    this.summaryAbort = cancel;
    await this.run('summarizing', async () => {
      const r = await this.session
        .navigate(row.id, { summarize: true, signal: cancel.signal })
        .catch((err: unknown) => {
          if (!cancel.signal.aborted) throw err;
          return undefined;
        })
        .finally(() => {
          if (this.summaryAbort === cancel) this.summaryAbort = undefined;
        });
      if (!r)
        return this.notice(
          'Rewind cancelled while the branch summary was being written: the session is unchanged. /tree starts over.',
          'warn',
        );
      const editor = r.editorText !== undefined ? setText(this.state.editor, r.editorText) : this.state.editor;
      // The path kept is printed above already; the branch summary (the last item) is new.
      const transcript = transcriptFromMessages(this.session.messages);
      const last = transcript.items.at(-1);
      const summary = r.summaryEntryId && last?.kind === 'summary' ? [last] : [];
      const before = r.editorText !== undefined ? 'before ' : '';
      this.replaceTranscript(transcript, `── rewound to ${before}${row.text} ──`, summary, { editor, queued: [] });
      const what =
        r.editorText !== undefined
          ? 'before that prompt (it is in the editor to change and send again)'
          : 'to that entry';
      this.notice(`Rewound ${what}.${r.summaryEntryId ? ' The branch left behind is summarized above.' : ''}`);
    });
  }

  private async forkFrom(row: TreeRow): Promise<void> {
    await this.run('working', async () => {
      const r = await this.session.fork(row.id);
      this.replaceTranscript(transcriptFromMessages(this.session.messages), `── forked from ${row.text} ──`, [], {
        editor: setText(this.state.editor, r.text),
        queued: [],
      });
      this.notice(
        `Forked into a new session${r.sessionFile ? `: ${r.sessionFile}` : ''}. The prompt is in the editor.`,
      );
    });
  }

  private async newSession(): Promise<void> {
    if (!this.options.newSession) return this.notice('/new is not available here.', 'warn');
    if (this.state.activity !== 'idle') await this.session.abort();
    let next: AgentSession;
    try {
      next = await this.options.newSession();
    } catch (err) {
      return this.notice(`Could not start a new session: ${err instanceof Error ? err.message : String(err)}`, 'error');
    }
    const old = this.session;
    this.unsubscribe();
    this.session = next;
    this.unsubscribe = next.subscribe((e) => this.onEvent(e));
    const fresh = this.freshState(next, remember(this.state.editor, ''));
    this.replaceTranscript(fresh.transcript, '── new session ──', [], { ...fresh, expanded: this.state.expanded });
    this.onSessionChange?.(next);
    this.notice(`New session${next.sessionFile ? `: ${next.sessionFile}` : ''}.`);
    await old.dispose();
  }

  /** Stops what runs and leaves; the caller disposes the session. */
  quit(): void {
    if (this.exited) return;
    this.exited = true;
    this.summaryAbort?.abort();
    this.unsubscribe();
    this.set({ confirmExit: false });
    void this.session.abort().finally(() => this.options.onExit());
  }
}

/** The line shown when a reopened session's last turn was cut off. */
function cutOffText(cut: CutOffTurn): string {
  const what =
    cut.kind === 'dangling'
      ? `its ${cut.calls.map((c) => c.name).join(', ')} call${cut.calls.length === 1 ? ' has' : 's have'} no result`
      : 'the last prompt has no reply';
  return `The last turn of this session was interrupted (${what}): finishing it now. Esc stops.`;
}

function promptHistory(session: AgentSession): string[] {
  return session.messages.flatMap((m) => {
    if (m.role !== 'user') return [];
    return [
      typeof m.content === 'string' ? m.content : m.content.map((b) => (b.type === 'text' ? b.text : '')).join(''),
    ];
  });
}

function sessionText(s: SessionStats, session: AgentSession): string {
  const t = s.tokens;
  return [
    `Session ${s.sessionId}`,
    `  file:     ${s.sessionFile ?? '(in memory)'}`,
    `  model:    ${session.model.id} (${session.model.provider})`,
    `  messages: ${s.userMessages} prompts, ${s.assistantMessages} replies, ${s.toolCalls} tool calls`,
    `  tokens:   ${formatTokens(t.input)} in, ${formatTokens(t.output)} out, ${formatTokens(t.cacheRead)} cache read, ${formatTokens(t.cacheWrite)} cache write`,
    `  context:  ${formatTokens(s.context.tokens)} of ${formatTokens(s.context.contextWindow)} (${s.context.percent}%)`,
    `  cost:     ${formatCost(s.cost)}`,
  ].join('\n');
}
