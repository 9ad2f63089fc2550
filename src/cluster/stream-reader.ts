// Reads one Redis stream in order, for its only consumer (a coordinator reads its run's up
// stream, a worker process its down stream), on a connection of its own since XREAD BLOCK holds
// it. Read entries are trimmed away. Survives a Redis restart: a failed read is retried once the
// connection is back; a restarted Redis starts the stream empty and new entry ids are later than
// the last one read, so nothing new is skipped.
// A read brings up to BATCH entries; handling them all in one go held a busy coordinator's event
// loop for tens of milliseconds (issue 41), so after SLICE_MS of handling the reader lets the loop
// run its timers and I/O before the next entry (still one entry at a time, in order).
import { setImmediate as nextTurn } from 'node:timers/promises';
import type { Redis } from 'ioredis';
import { parseEntry, type StreamEntry } from './cluster-wire.js';

const BLOCK_MS = 1_000;
const BATCH = 200;
const RETRY_MS = 200;
/** Entries read between two trims of the stream. */
const TRIM_EVERY = 100;
/** Handling entries for this long (ms) without a break gives the event loop a turn. */
const SLICE_MS = 5;

export class StreamReader {
  private lastId = '0-0';
  /** Entries read since the stream was last trimmed. */
  private untrimmed = 0;
  private stopped = false;
  private readonly done: Promise<void>;

  constructor(
    private readonly redis: Redis,
    private readonly key: string,
    private readonly onEntry: (e: StreamEntry) => void,
    private readonly onError: (err: unknown) => void = () => {},
    private readonly sliceMs: number = SLICE_MS,
  ) {
    this.done = this.loop();
  }

  private async loop(): Promise<void> {
    while (!this.stopped) {
      try {
        const res = (await this.redis.xread('COUNT', BATCH, 'BLOCK', BLOCK_MS, 'STREAMS', this.key, this.lastId)) as
          | [string, [string, string[]][]][]
          | null;
        if (!res) continue;
        let sliceStart = performance.now();
        for (const [, entries] of res) {
          for (const [id, fields] of entries) {
            if (performance.now() - sliceStart >= this.sliceMs) {
              await nextTurn();
              sliceStart = performance.now();
            }
            this.lastId = id;
            const e = parseEntry(fields);
            if (e) this.onEntry(e);
          }
        }
        // Read entries are never needed again (one consumer): keep the stream short, with one
        // XTRIM per TRIM_EVERY entries rather than one per read (a read often brings one entry).
        this.untrimmed += res.reduce((n, [, entries]) => n + entries.length, 0);
        if (!this.stopped && this.untrimmed >= TRIM_EVERY) {
          await this.redis.xtrim(this.key, 'MINID', bumpId(this.lastId));
          this.untrimmed = 0;
        }
      } catch (err) {
        if (this.stopped) break;
        this.onError(err);
        await new Promise((r) => setTimeout(r, RETRY_MS));
      }
    }
  }

  /** Stops reading (the blocked XREAD is cut by closing the connection). */
  async stop(): Promise<void> {
    this.stopped = true;
    this.redis.disconnect();
    await this.done;
  }
}

/** The id right after `id` (MINID keeps ids >= its argument). */
function bumpId(id: string): string {
  const [ms, seq] = id.split('-');
  return `${ms}-${Number(seq ?? 0) + 1}`;
}
