// A file the coordinator rewrites as the run goes (plan.md, learned-limits.json), written off its
// event loop: at most one write in flight; a rewrite asked for meanwhile becomes one more write
// after it, whose content is taken when it starts (the latest wins, however many were asked for).
export class CoalescedWrite {
  private running: Promise<void> | undefined;
  private again = false;
  private stopped = false;

  /** `write` takes the content when it is called, and must not throw (a failed view waits for the next). */
  constructor(private readonly write: () => Promise<void>) {}

  /** Writes now, or once more after the write under way. */
  request(): void {
    if (this.stopped) return;
    if (this.running) {
      this.again = true;
      return;
    }
    this.running = this.loop();
  }

  private async loop(): Promise<void> {
    do {
      this.again = false;
      await this.write();
    } while (this.again && !this.stopped);
    this.running = undefined;
  }

  /** No write starts any more (the run's end writes the last one itself). */
  stop(): void {
    this.stopped = true;
  }

  /** Resolves once no write is under way or pending. */
  async settled(): Promise<void> {
    while (this.running) await this.running;
  }
}
