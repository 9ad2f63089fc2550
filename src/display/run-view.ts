// The live view you can drive: the live view (live-view.ts: same in-place drawing, cursor and
// signal handling) plus keys read from a terminal in raw mode. Used by `orchestrate <recipe>` on a
// TTY and by `orchestrate watch`.
//
//   ↑ ↓ PgUp PgDn Home End  select an instance (the list scrolls to keep it in view)
//   Enter                   open its conversation, following it live (the reply being written
//                           too, peeked from the coordinator); Esc (or ←) back
//   s                       steer it: type a message, Enter sends, Esc drops it
//   c                       cancel it (it ends `cancelled`; the run goes on)
//   r                       retry it (a failed or cancelled instance)
//   a / x                   approve / reject it at its approval gate (an instance `waiting` there)
//   q                       quit (watch only); Ctrl-C: the caller's interrupt (the run's Ctrl-C)
//   Ctrl-Z                  suspend as usual (raw mode turns it into a key); fg continues
//
// A background job (`&`) shows the view without taking the keyboard (that would stop it) and
// takes it once `fg` brings it to the foreground.
//
// Actions go through a RunControl (the run's control socket); the coordinator records each as a
// `control` event, which comes back through the log and shows in the conversation and the log.
// Without a control (a finished run, no coordinator) the view is read-only and says why.
//
// A campaign (a recipe with publish:) shows its changesets and their burndown under the list
// (changesets-view.ts), from the run folder's files as `publish` and `status` update them.
import type { ControlAction, RunControl } from '../run/run-control.js';
import { ChangesetsSection } from './changesets-view.js';
import { ConversationCache } from './conversation-cache.js';
import { LiveView, type LiveOutput, type LiveViewOptions } from './live-view.js';
import { sessionFileOf } from './run-folder.js';
import { conversationFrame, listFrame, listOrder, type RunViewModel } from './run-view-frame.js';
import { isFinished, type InstanceState } from '../run/run-fold.js';
import type { Conversation } from './session-conversation.js';
import { inForeground } from './terminal-foreground.js';
import { parseKeys, type Key } from './terminal-keys.js';

/** The keyboard: a TTY read stream (process.stdin). */
export interface KeyInput {
  isTTY?: boolean;
  setRawMode?(mode: boolean): unknown;
  setEncoding?(encoding: BufferEncoding): unknown;
  on(event: 'data', fn: (chunk: string | Buffer) => void): unknown;
  off(event: 'data', fn: (chunk: string | Buffer) => void): unknown;
  resume(): unknown;
  pause(): unknown;
}

export interface RunViewOptions extends LiveViewOptions {
  input: KeyInput;
  /** The run folder: session files are found from it. */
  runDir: string;
  /** Carries actions to the run's coordinator; absent: read-only. */
  control?: RunControl;
  /** Why the view is read-only (shown instead of the keys); always so when `control` is absent. */
  readOnly?: string;
  /** Who acts, as the control events record it: "view (ana)", "watch (pid 12, ana)". */
  by: string;
  /** Ctrl-C. The run's view interrupts the run (SIGINT); watch quits. */
  onInterrupt: () => void;
  /** q: quit the view (watch). Absent: q does nothing (the run's own view ends with the run). */
  onQuit?: () => void;
  /** Whether the process is its terminal's foreground job (default: asks the system; tests pass one). */
  inForeground?: () => boolean;
}

/** How often a background job looks whether `fg` brought it to the foreground. */
const FOREGROUND_POLL_MS = 300;

/** How often an open conversation looks at its session file for new entries (and peeks at the reply being written). */
const SESSION_POLL_MS = 200;

export class RunView extends LiveView {
  readonly model: RunViewModel;
  private ended = false;
  private inputTaken = false;
  private foregroundPoll: NodeJS.Timeout | undefined;
  /** A line still being appended is no damage while the run is live: the next read has it whole. */
  private readonly conversations = new ConversationCache({ whileLive: true });
  private poller: NodeJS.Timeout | undefined;
  /** The reply being written by the open conversation's agent (last peek), and the session items then. */
  private writing: { key: string; text: string; items: number } | undefined;
  private peeking = false;
  private readonly changesets: ChangesetsSection;
  private readonly onData = (chunk: string | Buffer) => {
    for (const key of parseKeys(typeof chunk === 'string' ? chunk : chunk.toString('utf8'))) this.press(key);
  };

  constructor(
    out: LiveOutput,
    private readonly view: RunViewOptions,
  ) {
    super(out, view);
    this.changesets = new ChangesetsSection(view.runDir);
    this.model = { mode: 'list', listTop: 0, bodyLines: 0, bodyRoom: 1, canQuit: view.onQuit !== undefined };
    if (!view.control || view.readOnly) this.model.readOnly = view.readOnly ?? 'no coordinator is running this run';
  }

  override start(): void {
    super.start();
    process.on('SIGCONT', this.onContinue);
    // A background job (`orchestrate recipe.yaml &`) only shows: touching the keyboard would
    // stop it (SIGTTOU). `fg` of a running job sends no signal, so look now and then.
    this.takeInputWhenForeground();
  }

  private takeInputWhenForeground(): void {
    if (this.foreground()) {
      this.takeInput();
      return;
    }
    if (this.foregroundPoll || this.ended) return;
    this.foregroundPoll = setInterval(() => {
      if (!this.foreground()) return;
      this.stopForegroundPoll();
      this.takeInput();
    }, FOREGROUND_POLL_MS);
    this.foregroundPoll.unref();
  }

  private stopForegroundPoll(): void {
    if (this.foregroundPoll) clearInterval(this.foregroundPoll);
    this.foregroundPoll = undefined;
  }

  override stop(): void {
    if (!this.ended) {
      // The last frame is the plain live frame: it stays on screen above the summary.
      this.ended = true;
      process.off('SIGCONT', this.onContinue);
      this.stopForegroundPoll();
      this.releaseInput();
    }
    super.stop();
  }

  private foreground(): boolean {
    return (this.view.inForeground ?? inForeground)();
  }

  private takeInput(): void {
    if (this.inputTaken || this.ended) return;
    this.inputTaken = true;
    const input = this.view.input;
    input.setRawMode?.(true);
    input.setEncoding?.('utf8');
    input.on('data', this.onData);
    input.resume();
  }

  /** Ctrl-Z: raw mode swallows it, so give the terminal back and stop as the shell expects. */
  private suspend(): void {
    this.releaseInput();
    this.showCursorWhileAway();
    process.kill(process.pid, 'SIGTSTP');
  }

  private readonly onContinue = () => {
    if (this.ended) return;
    this.redrawFromHere();
    this.takeInputWhenForeground();
  };

  /**
   * Actions stop working (the run ended, its coordinator went away): say why, keep browsing.
   * Undefined: they work again (a coordinator took the run up), when the view has a control.
   */
  setReadOnly(reason: string | undefined): void {
    if (reason === undefined && !this.view.control) return;
    if (this.model.readOnly === reason) return;
    this.model.readOnly = reason;
    this.schedule();
  }

  override frame(): string[] {
    if (this.ended) return super.frame();
    const o = this.frameOptions();
    const inst = this.model.selected;
    if (this.model.mode === 'conversation' && inst) {
      const conv = this.conversationOf(inst);
      // Once the session file has more (the finished reply), the peeked text is stale.
      const w = this.writing;
      const writing = w && w.key === inst.key && conv.items.length <= w.items && !isFinished(inst) ? w.text : undefined;
      return conversationFrame(this.state, inst, conv, this.model, o, writing);
    }
    // A campaign's changesets and burndown sit under the list (a third of the screen at most).
    const section = this.changesets.lines(o, Math.max(3, Math.floor(o.height / 3)), this.state);
    if (section.length === 0) return listFrame(this.state, this.model, o);
    const list = listFrame(this.state, this.model, { ...o, height: o.height - section.length - 1 });
    return [...list.slice(0, -1), '', ...section, list[list.length - 1]!];
  }

  /** One key press (exposed for tests that drive the view without a terminal). */
  press(key: Key): void {
    if (this.ended) return;
    if (key.name === 'ctrl-c') {
      this.view.onInterrupt();
      return;
    }
    if (key.name === 'ctrl-z') {
      this.suspend();
      return;
    }
    if (this.model.input) this.typeInPrompt(key);
    else {
      this.model.status = undefined;
      if (this.model.mode === 'list') this.listKey(key);
      else this.conversationKey(key);
    }
    this.schedule();
  }

  private typeInPrompt(key: Key): void {
    const input = this.model.input!;
    if (key.name === 'escape') {
      this.model.input = undefined;
      this.model.status = 'steer: dropped';
    } else if (key.name === 'enter') {
      this.model.input = undefined;
      const text = input.text.trim();
      if (text === '') this.model.status = 'steer: nothing to send';
      else void this.act({ action: 'steer', instance: input.instance.key, text, by: this.view.by }, input.instance);
    } else if (key.name === 'backspace') {
      input.text = [...input.text].slice(0, -1).join('');
    } else if (key.name === 'char' && key.ch) input.text += key.ch;
  }

  private move(by: number): void {
    const all = listOrder(this.state);
    if (all.length === 0) return;
    const at = this.model.selected ? all.indexOf(this.model.selected) : 0;
    this.model.selected = all[Math.max(0, Math.min(all.length - 1, Math.max(at, 0) + by))];
  }

  private pageSize(): number {
    const rows = this.out.rows && this.out.rows > 0 ? this.out.rows : 24;
    return Math.max(1, rows - 6);
  }

  private listKey(key: Key): void {
    const inst = this.model.selected;
    switch (key.name) {
      case 'up':
        this.move(-1);
        return;
      case 'down':
        this.move(1);
        return;
      case 'pageup':
        this.move(-this.pageSize());
        return;
      case 'pagedown':
        this.move(this.pageSize());
        return;
      case 'home':
        this.move(-Infinity);
        return;
      case 'end':
        this.move(Infinity);
        return;
      case 'enter':
      case 'right':
        if (inst) this.openConversation();
        return;
      case 'char':
        if (key.ch === 'q' && this.view.onQuit) return void this.view.onQuit();
        if (inst) this.actionKey(key.ch ?? '', inst);
        return;
      default:
        return;
    }
  }

  private conversationKey(key: Key): void {
    const inst = this.model.selected!;
    switch (key.name) {
      case 'escape':
      case 'left':
        this.model.mode = 'list';
        this.stopPolling();
        return;
      case 'up':
        this.scroll(-1);
        return;
      case 'down':
        this.scroll(1);
        return;
      case 'pageup':
        this.scroll(-this.model.bodyRoom);
        return;
      case 'pagedown':
        this.scroll(this.model.bodyRoom);
        return;
      case 'home':
        this.model.pinnedTop = 0;
        return;
      case 'end':
        this.model.pinnedTop = undefined;
        return;
      case 'char':
        if (key.ch === 'q') {
          this.model.mode = 'list';
          this.stopPolling();
          return;
        }
        this.actionKey(key.ch ?? '', inst);
        return;
      default:
        return;
    }
  }

  /** Moves the conversation by `lines`; reaching the end follows it again (the frame decides). */
  private scroll(lines: number): void {
    const lastTop = Math.max(0, this.model.bodyLines - this.model.bodyRoom);
    const top = Math.min(lastTop, this.model.pinnedTop ?? lastTop) + lines;
    this.model.pinnedTop = lines > 0 && top >= lastTop ? undefined : Math.max(0, Math.min(lastTop, top));
  }

  private actionKey(ch: string, inst: InstanceState): void {
    if (ch !== 's' && ch !== 'c' && ch !== 'r' && ch !== 'a' && ch !== 'x') return;
    if (this.model.readOnly || !this.view.control) {
      this.model.status = `read-only: ${this.model.readOnly ?? 'no coordinator'}`;
      return;
    }
    if (ch === 'a' || ch === 'x') {
      const action = ch === 'a' ? 'approve' : 'reject';
      const publishWaits = [...this.state.publishGates.values()].some((g) => g.state === 'waiting');
      // Every task settled and a publish gate waits: the keys answer it, whatever is selected.
      if (publishWaits && (inst.approval?.state !== 'waiting' || isFinished(inst)))
        void this.act(
          { action, task: '*', gate: 'publish', by: this.view.by, via: this.view.onQuit ? 'watch' : 'view' },
          inst,
        );
      else if (inst.approval?.state !== 'waiting' || isFinished(inst))
        this.model.status = `${action}: ${inst.label} is not waiting at an approval gate`;
      // The view answers for its selected instance; watch (it can quit) and the run's own view are the channels.
      else
        void this.act(
          {
            action,
            task: inst.task,
            instance: inst.key,
            by: this.view.by,
            via: this.view.onQuit ? 'watch' : 'view',
          },
          inst,
        );
    } else if (ch === 's') {
      if (isFinished(inst)) this.model.status = `steer: ${inst.label} has finished (${inst.status})`;
      else this.model.input = { instance: inst, text: '' };
    } else if (ch === 'c') {
      if (isFinished(inst)) this.model.status = `cancel: ${inst.label} has finished already (${inst.status})`;
      else void this.act({ action: 'cancel', instance: inst.key, by: this.view.by }, inst);
    } else if (inst.status !== 'failed' && inst.status !== 'cancelled') {
      this.model.status = `retry: only a failed or cancelled instance; ${inst.label} is ${inst.status}`;
    } else void this.act({ action: 'retry', instance: inst.key, by: this.view.by }, inst);
  }

  private async act(action: ControlAction, inst: InstanceState): Promise<void> {
    const control = this.view.control;
    if (!control) return;
    this.model.status = `${action.action} ${inst.label}: sending…`;
    this.schedule();
    let text: string;
    try {
      const reply = await control.send(action);
      text = reply.ok
        ? `${action.action} ${inst.label}: ${reply.message}`
        : `${action.action} ${inst.label} refused: ${reply.error}`;
    } catch (e) {
      text = `${action.action} ${inst.label} failed: ${e instanceof Error ? e.message : String(e)}`;
    }
    if (this.ended) return;
    this.model.status = text;
    this.schedule();
  }

  private openConversation(): void {
    this.model.mode = 'conversation';
    this.model.pinnedTop = undefined;
    this.conversations.forget();
    this.stopPolling();
    // Session entries arrive without a run event on every line: look at the file a few times a second.
    this.poller = setInterval(() => {
      this.peekWriting();
      this.schedule();
    }, SESSION_POLL_MS);
    this.poller.unref();
    this.peekWriting();
  }

  private stopPolling(): void {
    if (this.poller) clearInterval(this.poller);
    this.poller = undefined;
    this.writing = undefined;
  }

  /**
   * Asks the coordinator what the open conversation's agent is writing now (a `peek`: read only,
   * not logged); one request at a time. Not for a read-only view or a finished instance.
   */
  private peekWriting(): void {
    const control = this.view.control;
    const inst = this.model.selected;
    if (!control || this.model.readOnly || this.model.mode !== 'conversation' || !inst || isFinished(inst)) {
      this.writing = undefined;
      return;
    }
    if (this.peeking) return;
    this.peeking = true;
    const items = this.conversationOf(inst).items.length;
    control.send({ action: 'peek', instance: inst.key }).then(
      (reply) => {
        this.peeking = false;
        if (this.ended || this.model.mode !== 'conversation' || this.model.selected !== inst) return;
        const text = reply.ok ? reply.message : '';
        const before = this.writing?.text;
        this.writing = text ? { key: inst.key, text, items } : undefined;
        if (before !== text) this.schedule();
      },
      () => {
        this.peeking = false;
      },
    );
  }

  /** The instance's conversation, read again only when its session file changed. */
  private conversationOf(inst: InstanceState): Conversation {
    return this.conversations.read(sessionFileOf(this.view.runDir, inst));
  }

  private releaseInput(): void {
    this.stopPolling();
    if (!this.inputTaken) return;
    this.inputTaken = false;
    const input = this.view.input;
    input.off('data', this.onData);
    input.setRawMode?.(false);
    // A paused stdin no longer keeps the process alive.
    input.pause();
  }
}
