// A session file followed as it grows: the bytes a running agent appended since the last read,
// which the cluster worker streams to the coordinator (a file rewritten from the start reads as
// a reset), and whether such bytes may follow a change of the workspace (they then go after a
// checkpoint). Split out of cluster-worker.ts, which keeps the job lifecycle.
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

/** Tools that never change the workspace: their results need no checkpoint before them. */
const READ_ONLY_TOOLS = new Set(['read', 'ls', 'grep', 'find']);

/**
 * Whether session bytes carry a tool result that may have changed files (any tool but the
 * read-only ones, or one whose name cannot be read): those go after a checkpoint.
 */
export function mayHaveChangedFiles(bytes: Buffer): boolean {
  const text = bytes.toString('utf8');
  if (!text.includes('"role":"toolResult"')) return false;
  const results = text.split('"role":"toolResult"').slice(1);
  return results.some((r) => {
    const name = /^,"toolCallId":"[^"]*","toolName":"([^"]+)"/.exec(r)?.[1];
    return name === undefined || !READ_ONLY_TOOLS.has(name);
  });
}
