// Entries for Redis streams, written together: the entries added during one event-loop turn go
// out at its end as one pipeline, in the order they were added, so Redis gets one write per turn
// instead of one per entry. The coordinator of a wide distributed run sends thousands of down
// entries (permits, usage acknowledgements, peer messages); one XADD each cost it seconds (issue 41).
import type { Redis } from 'ioredis';

export class StreamBatch {
  private entries: { stream: string; fields: string[] }[] = [];

  constructor(private readonly redis: Redis) {}

  /** Appends an entry to `stream` at the end of this turn. */
  add(stream: string, fields: string[]): void {
    this.entries.push({ stream, fields });
    if (this.entries.length === 1) setImmediate(() => void this.flush());
  }

  /** Writes the entries waiting now (a write that fails is dropped, as one XADD's would be). */
  async flush(): Promise<void> {
    const batch = this.entries;
    if (batch.length === 0) return;
    this.entries = [];
    const pipeline = this.redis.pipeline();
    for (const e of batch) pipeline.xadd(e.stream, '*', ...e.fields);
    await pipeline.exec().catch(() => {});
  }
}
