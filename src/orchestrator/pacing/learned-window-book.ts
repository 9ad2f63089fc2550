// The run's learned context windows (ai/learned-windows.ts: what a server stated in an overflow
// error), kept by the coordinator so every thread of the run shares them: a window one agent
// learns is recorded in run.jsonl (`window_learned`, so a resume starts from it), sent to the
// agents running now, and handed to every agent launched later (InstanceTask.learnedWindows).
import { learnedWindowKey, type LearnedWindow } from '../../ai/learned-windows.js';
import type { RunEventInput } from '../../run/run-events.js';

export interface LearnedWindowBookOptions {
  record(e: RunEventInput): void;
  /** Sends the window to the agents running now (all of them; a thread that knows it ignores it). */
  broadcast(w: LearnedWindow): void;
  /** Resume: the windows the log records (the fold's `learnedWindows`). */
  restored?: readonly LearnedWindow[];
}

export class LearnedWindowBook {
  private readonly known = new Map<string, LearnedWindow>();

  constructor(private readonly opts: LearnedWindowBookOptions) {
    for (const w of opts.restored ?? []) this.keep(w);
  }

  private keep(w: LearnedWindow): boolean {
    const key = learnedWindowKey(w);
    const had = this.known.get(key);
    if (had && had.window <= w.window) return false;
    this.known.set(key, { ...w });
    return true;
  }

  /** Every window learned so far, for an agent about to start. */
  list(): LearnedWindow[] {
    return [...this.known.values()].map((w) => ({ ...w }));
  }

  /** Agent `by` learned `w`: recorded and passed on when it is news (new, or smaller than known). */
  learned(by: string, w: LearnedWindow): void {
    if (!this.keep(w)) return;
    this.opts.record({ type: 'window_learned', by, ...w });
    this.opts.broadcast(w);
  }
}
