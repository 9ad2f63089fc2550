// Bounded capture of a command's output: a rolling window of recent bytes (enough for an exact
// tail), running line and byte counts over the full stream, and a temp file that receives the
// full output once it no longer fits the limits. Memory stays flat however much is printed.
import { randomBytes } from 'node:crypto';
import { createWriteStream, type WriteStream } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { TOOL_DEFAULTS } from './defaults.js';
import type { StreamRedactor } from './stream-redactor.js';
import { truncateTail, type TruncationResult } from './truncate.js';

export interface OutputCaptureOptions {
  maxLines?: number;
  maxBytes?: number;
  /** Recent bytes kept in memory; at least 2 x maxBytes. */
  rollingBytes?: number;
  tempDir?: string;
  tempPrefix?: string;
  /** Keeps secrets out of the temp file (the kept tail is redacted by whoever persists it). */
  redactor?: StreamRedactor;
}

export interface OutputSnapshot {
  /** The kept tail (a final newline of the output is not shown). */
  text: string;
  /** Counts refer to the full stream; present when the output did not fit. */
  truncation?: TruncationResult;
  fullOutputPath?: string;
  /** Full-stream figures, always present. */
  totalLines: number;
  totalBytes: number;
  /** Bytes of the last line of the full output (for the partial-line notice). */
  lastLineBytes: number;
}

export class OutputCapture {
  private readonly maxLines: number;
  private readonly maxBytes: number;
  private readonly rollingBytes: number;
  private readonly tempDir: string;
  private readonly tempPrefix: string;
  private chunks: Buffer[] = [];
  private retained = 0;
  private totalBytes = 0;
  private newlines = 0;
  /** Bytes after the last newline seen. */
  private currentLineBytes = 0;
  /** Bytes of the line the last newline ended. */
  private previousLineBytes = 0;
  private file: WriteStream | undefined;
  private filePath: string | undefined;
  private fileError: Error | undefined;
  private readonly redactor: StreamRedactor | undefined;

  constructor(options: OutputCaptureOptions = {}) {
    this.maxLines = options.maxLines ?? TOOL_DEFAULTS.maxLines;
    this.maxBytes = options.maxBytes ?? TOOL_DEFAULTS.maxBytes;
    this.rollingBytes = Math.max(options.rollingBytes ?? TOOL_DEFAULTS.bashRollingBytes, 2 * this.maxBytes);
    this.tempDir = options.tempDir ?? tmpdir();
    this.tempPrefix = options.tempPrefix ?? TOOL_DEFAULTS.bashTempPrefix;
    this.redactor = options.redactor;
  }

  get bytes(): number {
    return this.totalBytes;
  }

  /** Where the full output is being written, once it exceeded the limits. */
  get fullOutputPath(): string | undefined {
    return this.filePath;
  }

  /**
   * Adds a chunk (callers hand over whole UTF-8 characters). Returns false when the temp file
   * is backed up: pause the source until `drain` resolves.
   */
  push(chunk: Buffer): boolean {
    if (chunk.length === 0) return true;
    this.count(chunk);
    this.totalBytes += chunk.length;
    this.chunks.push(chunk);
    this.retained += chunk.length;
    // The file is opened before anything is dropped, so it always starts at the first byte.
    let ok = true;
    if (this.file) ok = this.toFile(this.file, chunk);
    else if (this.exceedsLimits()) ok = !this.openFile().writableNeedDrain;
    // Drop oldest whole chunks while what remains still covers the rolling window.
    while (this.chunks.length > 1 && this.retained - (this.chunks[0]?.length ?? 0) >= this.rollingBytes) {
      this.retained -= this.chunks.shift()?.length ?? 0;
    }
    return ok;
  }

  /** Resolves when the temp file can take more data. */
  drain(): Promise<void> {
    const file = this.file;
    if (!file?.writableNeedDrain) return Promise.resolve();
    return new Promise((resolve) => {
      const done = (): void => {
        file.off('drain', done);
        file.off('error', done);
        resolve();
      };
      file.once('drain', done);
      file.once('error', done);
    });
  }

  /** The current view of the output: the kept tail and what was cut. */
  snapshot(): OutputSnapshot {
    const endsWithNewline = this.totalBytes > 0 && this.currentLineBytes === 0;
    const totalLines = this.totalBytes === 0 ? 0 : this.newlines + (endsWithNewline ? 0 : 1);
    const lastLineBytes = endsWithNewline ? this.previousLineBytes : this.currentLineBytes;
    let window = this.chunks.length === 1 ? (this.chunks[0] as Buffer) : Buffer.concat(this.chunks, this.retained);
    if (endsWithNewline) window = window.subarray(0, window.length - 1);
    const tail = truncateTail(window, { maxLines: this.maxLines, maxBytes: this.maxBytes });
    const base = { text: tail.content, totalLines, totalBytes: this.totalBytes, lastLineBytes };
    if (!tail.truncated) return base;
    const truncation: TruncationResult = { ...tail, totalLines, totalBytes: this.totalBytes };
    return { ...base, truncation, fullOutputPath: this.filePath };
  }

  /** Flushes and closes the temp file; returns the error if the full output could not be saved. */
  async close(): Promise<Error | undefined> {
    const file = this.file;
    if (!file) return undefined;
    await new Promise<void>((resolve) => {
      if (file.closed || file.destroyed) resolve();
      else file.end(this.redactor?.end() ?? '', () => resolve());
      file.once('error', () => resolve());
    });
    return this.fileError;
  }

  // Same line and byte arithmetic as snapshot(), so a file exists exactly when output is cut.
  private exceedsLimits(): boolean {
    const endsWithNewline = this.currentLineBytes === 0;
    const lines = this.newlines + (endsWithNewline ? 0 : 1);
    const bytes = this.totalBytes - (endsWithNewline ? 1 : 0);
    return bytes > this.maxBytes || lines > this.maxLines;
  }

  private openFile(): WriteStream {
    this.filePath = join(this.tempDir, `${this.tempPrefix}${randomBytes(8).toString('hex')}.log`);
    // Only this user may read it: a command's output can hold whatever the command printed.
    const file = createWriteStream(this.filePath, { flags: 'wx', mode: 0o600 });
    file.on('error', (err) => {
      this.fileError = err;
    });
    // Nothing was dropped yet (see push), so the buffered chunks are the full output so far.
    for (const chunk of this.chunks) this.toFile(file, chunk);
    this.file = file;
    return file;
  }

  /** Chunks are whole UTF-8 characters (see push), so each decodes on its own. */
  private toFile(file: WriteStream, chunk: Buffer): boolean {
    return file.write(this.redactor ? this.redactor.push(chunk.toString('utf8')) : chunk);
  }

  private count(chunk: Buffer): void {
    const last = chunk.lastIndexOf(10);
    if (last === -1) {
      this.currentLineBytes += chunk.length;
      return;
    }
    let n = 0;
    let prevNl = -1;
    for (let p = chunk.indexOf(10); p !== -1; p = chunk.indexOf(10, p + 1)) {
      n++;
      if (p !== last) prevNl = p;
    }
    this.newlines += n;
    this.previousLineBytes = n === 1 ? this.currentLineBytes + last : last - prevNl - 1;
    this.currentLineBytes = chunk.length - last - 1;
  }
}
