// The interactive mode's state and behaviour, apart from how it is drawn: it owns the editor,
// the transcript and the pickers, maps keys to actions, and drives the AgentSession through its
// public API (prompt, steer, followUp, abort, compact, navigate, fork, setModel, stats). The ink
// component only renders `state` and forwards keys.
import type { AgentSession } from '../../runtime/agent-session.js';
import { isRunStoppedError } from '../../runtime/run-limits.js';
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
import { addNotice, applyEvent, transcriptFromMessages, type Transcript } from './transcript.js';
import { treeRows, userRowsOnPath, type TreeRow } from './tree-entries.js';

/** The keys the controller reads (ink's Key, narrowed to what is used). */
export interface KeyPress {
  upArrow?: boolean;
  downArrow?: boolean;
  leftArrow?: boolean;
  rightArrow?: boolean;
  pageUp?: boolean;
  pageDown?: boolean;
  home?: boolean;
  end?: boolean;
  return?: boolean;
  escape?: boolean;
  ctrl?: boolean;
  shift?: boolean;
  meta?: boolean;
  tab?: boolean;
  backspace?: boolean;
  delete?: boolean;
}

export interface QueuedMessage {
  kind: 'steer' | 'followUp';
  text: string;
}

export interface Picker {
  kind: 'tree' | 'fork';
  rows: TreeRow[];
  index: number;
}

export interface InteractiveState {
  transcript: Transcript;
  editor: EditorState;
  activity: 'idle' | 'working' | 'compacting' | 'summarizing';
  queued: QueuedMessage[];
  stats: SessionStats;
  model: string;
  /** Tool results shown in full (Ctrl+O). */
  expanded: boolean;
  /** Items hidden below the bottom of the view (PageUp scrolls back). */
  scroll: number;
  confirmExit: boolean;
  picker?: Picker;
}

export interface ControllerOptions {
  /** Opens a fresh session for /new (unset: /new says it is not available). */
  newSession?: () => Promise<AgentSession>;
  /** Called once when the user quits. */
  onExit: () => void;
}

/** Items one PageUp / PageDown moves. */
const SCROLL_STEP = 5;

export class InteractiveController {
  state: InteractiveState;
  private session: AgentSession;
  private unsubscribe: () => void;
  private readonly listeners = new Set<() => void>();
  private exited = false;
  /** Cancels the /tree branch summary in flight (Esc). */
  private summaryAbort: AbortController | undefined;

  constructor(
    session: AgentSession,
    private readonly options: ControllerOptions,
  ) {
    this.session = session;
    this.state = this.freshState(session, emptyEditor(promptHistory(session)));
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

  private freshState(session: AgentSession, editor: EditorState): InteractiveState {
    return {
      transcript: transcriptFromMessages(session.messages),
      editor,
      activity: 'idle',
      queued: [],
      stats: session.stats(),
      model: session.model.id,
      expanded: false,
      scroll: 0,
      confirmExit: false,
    };
  }

  private set(change: Partial<InteractiveState>): void {
    this.state = { ...this.state, ...change };
    for (const l of this.listeners) l();
  }

  /** Called when /new replaced the session (the old one is disposed here). */
  onSessionChange?: (session: AgentSession) => void;

  /** A line in the conversation (also how the session's own notices reach the screen). */
  notify(text: string, tone: 'info' | 'warn' | 'error' = 'info'): void {
    this.notice(text, tone);
  }

  private notice(text: string, tone: 'info' | 'warn' | 'error' = 'info'): void {
    this.set({ transcript: addNotice(this.state.transcript, text, tone), scroll: 0 });
  }

  private onEvent(e: AgentSessionEvent): void {
    const change: Partial<InteractiveState> = { transcript: applyEvent(this.state.transcript, e) };
    if (e.type === 'message_start' && e.message.role === 'user' && this.state.queued.length > 0) {
      // A queued message entered the context: it is no longer waiting.
      const content = e.message.content;
      const text = typeof content === 'string' ? content : content.map((b) => (b.type === 'text' ? b.text : '')).join('');
      const at = this.state.queued.findIndex((q) => q.text === text);
      if (at !== -1) change.queued = this.state.queued.filter((_, i) => i !== at);
    }
    if (e.type === 'message_end' || e.type === 'agent_end' || e.type === 'compaction_end' || e.type === 'auto_compaction_end' || e.type === 'model_change') {
      change.stats = this.session.stats();
      change.model = this.session.model.id;
    }
    if (e.type === 'message_start') change.scroll = 0;
    this.set(change);
  }

  // ---- keys ------------------------------------------------------------------------------------

  handleKey(input: string, key: KeyPress): void {
    const ctrlC = key.ctrl === true && input === 'c';
    if (ctrlC) {
      if (this.state.confirmExit) return void this.quit();
      this.set({ confirmExit: true, editor: this.state.editor.text === '' ? this.state.editor : setText(this.state.editor, '') });
      return;
    }
    if (this.state.confirmExit) this.set({ confirmExit: false });
    if (this.state.picker) return this.pickerKey(key);

    const ed = this.state.editor;
    if (key.escape && !key.return) {
      if (this.state.activity === 'working' || this.state.activity === 'compacting') void this.abort();
      else if (this.state.activity === 'summarizing') this.summaryAbort?.abort();
      return;
    }
    if (key.return) {
      // Shift+Enter (kitty keyboard protocol) adds a line; Alt+Enter queues a follow-up.
      if (key.shift) return this.setEditor(newline(ed));
      const r = pressEnter(ed);
      if (r.kind === 'edit') return this.setEditor(r.state);
      return this.submit(r.text, key.meta === true ? 'followUp' : 'steer');
    }
    if (key.ctrl && input === 'o') return this.set({ expanded: !this.state.expanded });
    if (key.ctrl && input === 'a') return this.setEditor(lineStart(ed));
    if (key.ctrl && input === 'e') return this.setEditor(lineEnd(ed));
    if (key.ctrl && input === 'u') return this.setEditor(setText(ed, ''));
    if (key.pageUp) return this.set({ scroll: Math.min(this.state.scroll + SCROLL_STEP, Math.max(0, this.state.transcript.items.length - 1)) });
    if (key.pageDown) return this.set({ scroll: Math.max(0, this.state.scroll - SCROLL_STEP) });
    if (key.upArrow) return this.setEditor(moveUp(ed));
    if (key.downArrow) return this.setEditor(moveDown(ed));
    if (key.leftArrow) return this.setEditor(moveLeft(ed));
    if (key.rightArrow) return this.setEditor(moveRight(ed));
    if (key.home) return this.setEditor(lineStart(ed));
    if (key.end) return this.setEditor(lineEnd(ed));
    // Terminals send Backspace as DEL, which ink reports as `delete` like the Delete key itself:
    // both erase before the cursor; Ctrl+D deletes the character under it (as in readline).
    if (key.backspace || key.delete) return this.setEditor(backspace(ed));
    if (key.ctrl && input === 'd') return this.setEditor(deleteForward(ed));
    if (key.ctrl || key.tab) return;
    if (input !== '') this.setEditor(insertText(ed, input));
  }

  private setEditor(editor: EditorState): void {
    this.set({ editor });
  }

  private pickerKey(key: KeyPress): void {
    const p = this.state.picker!;
    if (key.escape) return this.set({ picker: undefined });
    if (key.upArrow) return this.set({ picker: { ...p, index: Math.max(0, p.index - 1) } });
    if (key.downArrow) return this.set({ picker: { ...p, index: Math.min(p.rows.length - 1, p.index + 1) } });
    if (key.pageUp) return this.set({ picker: { ...p, index: Math.max(0, p.index - 10) } });
    if (key.pageDown) return this.set({ picker: { ...p, index: Math.min(p.rows.length - 1, p.index + 10) } });
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
    this.set({ editor: remember(this.state.editor, raw), scroll: 0 });
    if (parsed.kind === 'empty') return;
    if (parsed.kind === 'command') return void this.command(parsed.name, parsed.args);
    const text = parsed.kind === 'prompt' ? parsed.text : raw.trim();
    if (parsed.kind === 'other-command' && !this.session.commands.some((c) => c.name === parsed.name) && !parsed.name.startsWith('skill:')) {
      this.notice(`Unknown command /${parsed.name}. /help lists the commands; start with // to send a text that begins with "/".`, 'error');
      return;
    }
    // Extension commands run at once, even mid-run (the session dispatches them).
    if (parsed.kind === 'other-command' && this.state.activity !== 'idle') {
      this.session.prompt(text).catch((err: unknown) => this.notice(err instanceof Error ? err.message : String(err), 'error'));
      return;
    }
    if (this.state.activity !== 'idle') {
      if (this.state.activity === 'summarizing') return this.notice('Wait until the branch summary is written, or press Esc to cancel the rewind.', 'warn');
      if (this.state.activity !== 'working') return this.notice('Wait until the compaction is over, or press Esc to cancel it.', 'warn');
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
      this.set({ activity: 'idle', stats: this.session.stats(), model: this.session.model.id });
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
    if (id === '') return this.notice(`Model: ${this.session.model.id} (${this.session.model.provider}). Switch with /model ID.`);
    if (this.state.activity !== 'idle') return this.notice('The model can be changed while the agent is idle: press Esc first, or wait.', 'warn');
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
        if (!(err instanceof Error) || !/^Nothing to compact/.test(err.message)) throw err;
        all = true;
        return this.session.compact(custom, { keepRecentTokens: 0 });
      });
      this.set({ transcript: transcriptFromMessages(this.session.messages) });
      const whole = all ? ' (all of it: the session was shorter than the part normally kept)' : '';
      this.notice(`Compacted ${formatTokens(r.tokensBefore)} tokens of conversation into a summary${whole}. Ctrl+O shows it in full.`);
    });
  }

  private openPicker(kind: 'tree' | 'fork'): void {
    if (this.state.activity !== 'idle') return this.notice(`/${kind} works while the agent is idle: press Esc first, or wait.`, 'warn');
    const store = this.session.store;
    const rows = kind === 'tree' ? treeRows(store) : userRowsOnPath(store);
    if (rows.length === 0) return this.notice(kind === 'tree' ? 'The session has no entries yet.' : 'No prompt to fork from yet.', 'warn');
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
      if (!r) return this.notice('Rewind cancelled while the branch summary was being written: the session is unchanged. /tree starts over.', 'warn');
      const editor = r.editorText !== undefined ? setText(this.state.editor, r.editorText) : this.state.editor;
      this.set({ transcript: transcriptFromMessages(this.session.messages), editor, queued: [] });
      const what = r.editorText !== undefined ? 'before that prompt (it is in the editor to change and send again)' : 'to that entry';
      this.notice(`Rewound ${what}.${r.summaryEntryId ? ' The branch left behind is summarized above.' : ''}`);
    });
  }

  private async forkFrom(row: TreeRow): Promise<void> {
    await this.run('working', async () => {
      const r = await this.session.fork(row.id);
      this.set({ transcript: transcriptFromMessages(this.session.messages), editor: setText(this.state.editor, r.text), queued: [] });
      this.notice(`Forked into a new session${r.sessionFile ? `: ${r.sessionFile}` : ''}. The prompt is in the editor.`);
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
    this.state = this.freshState(next, remember(this.state.editor, ''));
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
    return [typeof m.content === 'string' ? m.content : m.content.map((b) => (b.type === 'text' ? b.text : '')).join('')];
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
