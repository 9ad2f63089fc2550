// Follows a run.jsonl another process is appending to (`orchestrate watch`): each poll reads the
// bytes added since the last one and returns the complete lines as events. A line still being
// written (no newline yet) waits for the next poll, so a torn write is never misread; lines that
// are not run events are counted and skipped, as readRunLog does. Paths come back absolute.
import { closeSync, fstatSync, openSync, readSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { RunEventSchema, type RunEvent } from '../run/run-events.js';
import { runRootOf, toAbsolutePaths } from '../run/run-paths.js';

export class RunLogFollower {
  private offset = 0;
  private pending: Buffer = Buffer.alloc(0);
  private root: string | undefined;
  private readonly runDir: string;
  /** Lines that were not run events (garbage, a newer event type this build does not know). */
  skipped = 0;

  constructor(private readonly file: string) {
    this.runDir = dirname(resolve(file));
  }

  /** The events appended since the last poll (all of them on the first); [] when the file is absent. */
  poll(): RunEvent[] {
    let fd: number;
    try {
      fd = openSync(this.file, 'r');
    } catch {
      return [];
    }
    const chunks: Buffer[] = [this.pending];
    try {
      const size = fstatSync(fd).size;
      while (this.offset < size) {
        const buf = Buffer.alloc(Math.min(size - this.offset, 1 << 20));
        const n = readSync(fd, buf, 0, buf.length, this.offset);
        if (n <= 0) break;
        chunks.push(buf.subarray(0, n));
        this.offset += n;
      }
    } finally {
      closeSync(fd);
    }
    const data = Buffer.concat(chunks);
    const end = data.lastIndexOf(0x0a);
    if (end < 0) {
      this.pending = data;
      return [];
    }
    this.pending = data.subarray(end + 1);
    const events: RunEvent[] = [];
    for (const line of data.subarray(0, end).toString('utf8').split('\n')) {
      if (line.trim() === '') continue;
      let raw: unknown;
      try {
        raw = JSON.parse(line);
      } catch {
        this.skipped++;
        continue;
      }
      const parsed = RunEventSchema.safeParse(raw);
      if (!parsed.success) {
        this.skipped++;
        continue;
      }
      const e = parsed.data;
      if (e.type === 'run_start' && this.root === undefined) this.root = runRootOf(this.runDir, e);
      events.push(toAbsolutePaths(e, this.runDir, this.root));
    }
    return events;
  }
}
