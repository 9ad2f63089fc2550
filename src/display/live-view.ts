// The live view on a TTY (stderr): redraws the frame from live-frame.ts in place, at most
// ~10 times a second, rewriting only the lines that changed.
//
// Drawing: the cursor sits just below the last frame. A redraw moves it up over that frame and,
// line by line, skips unchanged lines and clears and rewrites changed ones; leftover lines of a
// taller previous frame are cleared. The whole redraw goes out in ONE write so the terminal never
// shows half a frame. Cursor moves and clears use node's readline helpers (cursorTo, moveCursor,
// clearLine, clearScreenDown); the only escapes written by hand are hide/show cursor (DECTCEM),
// for which node has no helper.
//
// The cursor is hidden while the view is live and shown again on stop(), on process exit and on
// SIGINT/SIGTERM (when nothing else handles those signals the default action runs afterwards).
import { clearLine, clearScreenDown, cursorTo, moveCursor } from 'node:readline';
import type { RunEvent } from '../run/run-events.js';
import { DISPLAY_DEFAULTS } from './defaults.js';
import { buildFrame, type FrameOptions } from './live-frame.js';
import { applyEvent, createRunState, type RunState } from '../run/run-fold.js';
import { makePainter, type Painter } from './terminal-text.js';

const HIDE_CURSOR = '\x1b[?25l';
const SHOW_CURSOR = '\x1b[?25h';

/** What the view needs of its output: a TTY write stream (columns/rows read on every frame). */
export interface LiveOutput {
  write(s: string): boolean;
  columns?: number;
  rows?: number;
  on?(event: 'resize', fn: () => void): unknown;
  off?(event: 'resize', fn: () => void): unknown;
}

export interface LiveViewOptions {
  color: boolean;
  budgetUsd?: number;
  now?: () => number;
  /** Install exit/signal handlers that restore the cursor (default true; tests turn it off). */
  restoreOnExit?: boolean;
  frameIntervalMs?: number;
  tickIntervalMs?: number;
}

/** Collects what readline's helpers write so a redraw leaves as a single write. */
class EscapeBuffer {
  text = '';
  write(s: string): boolean {
    this.text += s;
    return true;
  }
}

// readline's helpers only call stream.write(data); they accept our collector.
const asStream = (b: EscapeBuffer) => b as unknown as NodeJS.WritableStream;

export class LiveView {
  readonly state: RunState = createRunState();
  protected readonly painter: Painter;
  private readonly now: () => number;
  private previous: string[] = [];
  private lastDraw = 0;
  private timer: NodeJS.Timeout | undefined;
  private ticker: NodeJS.Timeout | undefined;
  private started = false;
  private stopped = false;
  private cursorHidden = false;
  private readonly onExit = () => this.restoreCursor();
  private readonly onSignal = (signal: NodeJS.Signals) => {
    this.restoreCursor();
    // Alone on this signal: behave as if we had not listened (default action: terminate).
    if (process.listenerCount(signal) === 1) {
      this.removeHandlers();
      process.kill(process.pid, signal);
    }
  };
  private readonly onResize = () => {
    // Lines of the old frame may have re-wrapped: clear from its top and draw from scratch.
    const b = new EscapeBuffer();
    if (this.previous.length > 0) moveCursor(asStream(b), 0, -this.previous.length);
    cursorTo(asStream(b), 0);
    clearScreenDown(asStream(b));
    this.out.write(b.text);
    this.previous = [];
    this.draw();
  };

  constructor(
    protected readonly out: LiveOutput,
    protected readonly options: LiveViewOptions,
  ) {
    this.painter = makePainter(options.color);
    this.now = options.now ?? Date.now;
  }

  start(): void {
    if (this.started) return;
    this.started = true;
    this.out.write(HIDE_CURSOR);
    this.cursorHidden = true;
    if (this.options.restoreOnExit !== false) {
      process.on('exit', this.onExit);
      process.on('SIGINT', this.onSignal);
      process.on('SIGTERM', this.onSignal);
    }
    this.out.on?.('resize', this.onResize);
    this.ticker = setInterval(() => this.draw(), this.options.tickIntervalMs ?? DISPLAY_DEFAULTS.tickIntervalMs);
    this.ticker.unref();
    this.draw();
  }

  /** Folds an event from before the view started (a resumed run's history) without drawing. */
  absorb(e: RunEvent): void {
    applyEvent(this.state, e);
  }

  handle(e: RunEvent): void {
    applyEvent(this.state, e);
    this.schedule();
  }

  /** Draws the final frame, shows the cursor and releases timers and handlers. The frame stays on screen. */
  stop(): void {
    if (this.stopped) return;
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    if (this.ticker) clearInterval(this.ticker);
    this.timer = undefined;
    this.ticker = undefined;
    if (this.started) this.draw(true);
    this.restoreCursor();
    this.removeHandlers();
  }

  /**
   * Prints a message above the frame (an interrupt notice, a warning): the frame is cleared, the
   * text written, and the frame drawn again below it, so neither corrupts the other.
   */
  note(text: string): void {
    const b = new EscapeBuffer();
    if (this.previous.length > 0) moveCursor(asStream(b), 0, -this.previous.length);
    cursorTo(asStream(b), 0);
    clearScreenDown(asStream(b));
    b.write(text.endsWith('\n') ? text : `${text}\n`);
    this.out.write(b.text);
    this.previous = [];
    if (this.started) this.draw(true);
  }

  /**
   * Draws the whole frame afresh at the cursor, forgetting what is on screen (after the process
   * was stopped and continued: the shell wrote below the old frame). Hides the cursor again.
   */
  protected redrawFromHere(): void {
    if (!this.started || this.stopped) return;
    this.out.write(HIDE_CURSOR);
    this.cursorHidden = true;
    this.previous = [];
    this.draw(true);
  }

  /** Shows the cursor while the process is stopped (Ctrl-Z); redrawFromHere hides it again. */
  protected showCursorWhileAway(): void {
    this.restoreCursor();
  }

  /** The lines the next draw would show (tests, and the final frame). */
  frame(): string[] {
    return buildFrame(this.state, this.frameOptions());
  }

  /** Size, clock and painter of the next frame. */
  protected frameOptions(): FrameOptions {
    const width = this.out.columns && this.out.columns > 0 ? this.out.columns : DISPLAY_DEFAULTS.fallbackColumns;
    const height = this.out.rows && this.out.rows > 0 ? this.out.rows : DISPLAY_DEFAULTS.fallbackRows;
    return { width, height, now: this.now(), budgetUsd: this.options.budgetUsd, painter: this.painter };
  }

  /** Draws soon (at most one frame per frame interval). */
  protected schedule(): void {
    if (!this.started || this.stopped || this.timer) return;
    const interval = this.options.frameIntervalMs ?? DISPLAY_DEFAULTS.frameIntervalMs;
    const wait = Math.max(0, this.lastDraw + interval - this.now());
    this.timer = setTimeout(() => {
      this.timer = undefined;
      this.draw();
    }, wait);
    this.timer.unref();
  }

  private draw(force = false): void {
    if (this.stopped && !force) return;
    const lines = this.frame();
    this.lastDraw = this.now();
    const prev = this.previous;
    if (lines.length === prev.length && lines.every((l, i) => l === prev[i])) return;
    const b = new EscapeBuffer();
    const s = asStream(b);
    if (prev.length > 0) moveCursor(s, 0, -prev.length);
    cursorTo(s, 0);
    lines.forEach((line, i) => {
      if (i < prev.length && prev[i] === line) {
        moveCursor(s, 0, 1);
        return;
      }
      clearLine(s, 0);
      b.write(`${line}\n`);
    });
    if (prev.length > lines.length) clearScreenDown(s);
    this.out.write(b.text);
    this.previous = lines;
  }

  private restoreCursor(): void {
    if (!this.cursorHidden) return;
    this.cursorHidden = false;
    this.out.write(SHOW_CURSOR);
  }

  private removeHandlers(): void {
    process.off('exit', this.onExit);
    process.off('SIGINT', this.onSignal);
    process.off('SIGTERM', this.onSignal);
    this.out.off?.('resize', this.onResize);
  }
}
