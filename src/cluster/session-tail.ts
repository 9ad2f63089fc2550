// A session file followed as it grows: the bytes a running agent appended since the last read,
// which the cluster worker streams to the coordinator (a file rewritten from the start reads as
// a reset). Split out of cluster-worker.ts, which keeps the job lifecycle.
import { closeSync, openSync, readSync, statSync } from 'node:fs';

/** Follows a file that only grows (or is rewritten from the start): the bytes written since the last read. */
export class SessionTail {
  private offset: number;
  constructor(private readonly file: string) {
    try {
      this.offset = statSync(file).size;
    } catch {
      this.offset = 0;
    }
  }

  read(): { offset: number; bytes: Buffer; reset: boolean } | undefined {
    let size: number;
    try {
      size = statSync(this.file).size;
    } catch {
      return undefined;
    }
    let reset = false;
    if (size < this.offset) {
      this.offset = 0;
      reset = true;
    }
    if (size === this.offset) return undefined;
    const fd = openSync(this.file, 'r');
    try {
      const buf = Buffer.alloc(size - this.offset);
      const n = readSync(fd, buf, 0, buf.length, this.offset);
      const at = this.offset;
      this.offset += n;
      return { offset: at, bytes: buf.subarray(0, n), reset };
    } finally {
      closeSync(fd);
    }
  }
}
