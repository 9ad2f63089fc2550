// A session as a JSONL file. Reads stream in fixed chunks (the file is never one big string);
// appends go through one file descriptor kept open in append mode, one write(2) per batch of
// lines (the store hands over the batch's bytes; see staged-lines.ts).
//
// Durability: when append() returns, the bytes are in the kernel's page cache, so the entry
// survives the process being killed at any later point. It survives power loss or an OS crash
// only with `fsync: true` (one fsync per append, ~1000x slower on most disks).
import {
  closeSync,
  copyFileSync,
  existsSync,
  fsyncSync,
  mkdirSync,
  openSync,
  readSync,
  renameSync,
  writeSync,
} from 'node:fs';
import { dirname } from 'node:path';
import { SESSION_DEFAULTS } from './defaults.js';
import type { LineHandler, ReadSummary, SessionStorage } from './storage.js';

export interface JsonlFileStorageOptions {
  /** fsync after every append (power-loss durability). Default false. */
  fsync?: boolean;
}

const NEWLINE = 0x0a;
const NEWLINE_BYTES = new Uint8Array([NEWLINE]);

export class JsonlFileStorage implements SessionStorage {
  appendCount = 0;
  private fd: number | undefined;
  /** The file's last byte is not a newline (torn line or hand edit). */
  private needsLeadingNewline = false;

  constructor(
    readonly path: string,
    private readonly options: JsonlFileStorageOptions = {},
  ) {}

  readLines(onLine: LineHandler): ReadSummary {
    if (!existsSync(this.path)) return { exists: false, endsWithNewline: true, bytes: 0 };
    try {
      return this.readAllLines(onLine);
    } catch (err) {
      // Node's read errors do not name the file ("EISDIR: illegal operation on a directory, read").
      const reason = err instanceof Error ? err.message : String(err);
      throw new Error(reason.includes(this.path) ? reason : `Could not read session file ${this.path}: ${reason}`);
    }
  }

  private readAllLines(onLine: LineHandler): ReadSummary {
    const fd = openSync(this.path, 'r');
    const chunk = Buffer.allocUnsafe(SESSION_DEFAULTS.readChunkBytes);
    let carry: Buffer[] = [];
    let lineNo = 0;
    let bytes = 0;
    let lastByte = NEWLINE;
    try {
      for (;;) {
        const n = readSync(fd, chunk, 0, chunk.length, null);
        if (n === 0) break;
        bytes += n;
        lastByte = chunk[n - 1]!;
        let start = 0;
        for (;;) {
          const nl = chunk.indexOf(NEWLINE, start);
          if (nl === -1 || nl >= n) break;
          lineNo++;
          if (carry.length > 0) {
            carry.push(chunk.subarray(start, nl));
            onLine(Buffer.concat(carry).toString('utf8'), lineNo, true);
            carry = [];
          } else {
            onLine(chunk.toString('utf8', start, nl), lineNo, true);
          }
          start = nl + 1;
        }
        // Copy the unfinished tail: the chunk buffer is reused by the next read.
        if (start < n) carry.push(Buffer.from(chunk.subarray(start, n)));
      }
      if (carry.length > 0) onLine(Buffer.concat(carry).toString('utf8'), lineNo + 1, false);
    } finally {
      closeSync(fd);
    }
    this.needsLeadingNewline = bytes > 0 && lastByte !== NEWLINE;
    return { exists: true, endsWithNewline: !this.needsLeadingNewline, bytes };
  }

  append(lines: Uint8Array): void {
    let written = 0;
    try {
      if (this.fd === undefined) {
        mkdirSync(dirname(this.path), { recursive: true });
        this.fd = openSync(this.path, 'a');
      }
      // Only after a torn line or a failed write: the newline that ends it goes first.
      if (this.needsLeadingNewline) writeSync(this.fd, NEWLINE_BYTES);
      this.needsLeadingNewline = false;
      // A short write only happens on errors such as a full disk; finish it or fail.
      while (written < lines.length) written += writeSync(this.fd, lines, written, lines.length - written);
      if (this.options.fsync) fsyncSync(this.fd);
    } catch (err) {
      // Part of the batch may be on disk; the next append must start on a fresh line.
      if (written > 0) this.needsLeadingNewline = true;
      const reason = err instanceof Error ? err.message : String(err);
      throw new Error(
        `Could not append to session file ${this.path}: ${reason}. The entry was not recorded; free disk space or fix permissions, then retry.`,
      );
    }
    this.appendCount++;
  }

  replaceAll(text: string): void {
    this.close();
    mkdirSync(dirname(this.path), { recursive: true });
    const tmp = `${this.path}.tmp-${process.pid}`;
    const fd = openSync(tmp, 'w');
    try {
      writeSync(fd, text);
      fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
    renameSync(tmp, this.path);
    this.needsLeadingNewline = text.length > 0 && !text.endsWith('\n');
  }

  backup(suffix: string): string | undefined {
    if (!existsSync(this.path)) return undefined;
    const target = `${this.path}${suffix}`;
    copyFileSync(this.path, target);
    return target;
  }

  close(): void {
    if (this.fd !== undefined) {
      closeSync(this.fd);
      this.fd = undefined;
    }
  }
}
