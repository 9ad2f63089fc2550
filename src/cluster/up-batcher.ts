// The up messages of one agent attempt, coalesced: a message sent while the previous XADD of the
// attempt is still in flight waits for it and goes in the next entry together with every other
// message that came meanwhile. A burst of agent events (a model call's start, its permit, its
// text, its end, the session bytes) then costs one Redis round trip instead of one each, and the
// first message of a quiet spell still goes at once (no timer, no added latency). Order is kept:
// entries are written one at a time, and an entry's messages are read back in order.
import type { UpMessage } from './cluster-wire.js';

export class UpBatcher {
  private pending: UpMessage[] = [];
  private waiters: { resolve: () => void; reject: (err: unknown) => void }[] = [];
  private writing = false;

  /**
   * `write` puts one entry holding `messages` on the up stream. `batches: false` (a coordinator
   * that reads one message per entry) writes each message as its own entry, still in order.
   */
  constructor(
    private readonly write: (messages: UpMessage[]) => Promise<unknown>,
    private readonly batches = true,
  ) {}

  /** Queues `m`; resolves once the entry holding it is written (rejects when that write failed). */
  send(m: UpMessage): Promise<void> {
    this.pending.push(m);
    const written = new Promise<void>((resolve, reject) => this.waiters.push({ resolve, reject }));
    if (!this.writing) void this.pump();
    return written;
  }

  private async pump(): Promise<void> {
    this.writing = true;
    while (this.pending.length > 0) {
      const batch = this.pending.splice(0, this.batches ? this.pending.length : 1);
      const waiters = this.waiters.splice(0, batch.length);
      try {
        await this.write(batch);
        for (const w of waiters) w.resolve();
      } catch (err) {
        for (const w of waiters) w.reject(err);
      }
    }
    this.writing = false;
  }
}
