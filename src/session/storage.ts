// Where session lines live. The store keeps its tree in memory; a storage only reads lines on
// open and appends text afterwards. Two implementations: a JSONL file and memory.

export interface ReadSummary {
  /** False when nothing was stored yet (missing file). */
  exists: boolean;
  /** False when the last line has no terminating newline (torn by a killed writer, or hand-edited). */
  endsWithNewline: boolean;
  bytes: number;
}

/** `terminated` is false only for a last line with no newline after it. */
export type LineHandler = (line: string, lineNo: number, terminated: boolean) => void;

export interface SessionStorage {
  /** File path, or undefined for memory. */
  readonly path: string | undefined;
  /** Number of append calls so far (one per logical step: tests and benchmarks check it). */
  readonly appendCount: number;
  /** Streams the stored lines in order, 1-based line numbers. */
  readLines(onLine: LineHandler): ReadSummary;
  /**
   * Appends `lines`: whole lines as UTF-8, each ending in "\n", in one write. If the stored data
   * did not end with a newline, a newline goes first so a torn line never swallows the next entry.
   */
  append(lines: Uint8Array): void;
  /** Replaces everything atomically (migrations and header recovery only). */
  replaceAll(text: string): void;
  /** Copies the current content aside before a rewrite; returns where, or undefined. */
  backup(suffix: string): string | undefined;
  close(): void;
}

/** Keeps lines in memory: sessions that must not touch disk, and tests. */
export class MemoryStorage implements SessionStorage {
  readonly path = undefined;
  appendCount = 0;
  private text: string;
  /** Tracked separately: endsWith() on a long concatenated string would flatten it on every append. */
  private endsWithNewline: boolean;

  constructor(initialText = '') {
    this.text = initialText;
    this.endsWithNewline = initialText.length === 0 || initialText.endsWith('\n');
  }

  /** Everything stored so far, as a file would hold it. */
  get content(): string {
    return this.text;
  }

  readLines(onLine: LineHandler): ReadSummary {
    if (this.text.length === 0) return { exists: false, endsWithNewline: true, bytes: 0 };
    const lines = this.text.split('\n');
    const endsWithNewline = this.text.endsWith('\n');
    const last = endsWithNewline ? lines.length - 1 : lines.length;
    for (let i = 0; i < last; i++) onLine(lines[i]!, i + 1, endsWithNewline || i < last - 1);
    return { exists: true, endsWithNewline, bytes: Buffer.byteLength(this.text) };
  }

  append(lines: Uint8Array): void {
    if (lines.length > 0) {
      if (!this.endsWithNewline) this.text += '\n';
      this.text += Buffer.from(lines.buffer, lines.byteOffset, lines.byteLength).toString('utf8');
      this.endsWithNewline = lines[lines.length - 1] === 0x0a;
    }
    this.appendCount++;
  }

  replaceAll(text: string): void {
    this.text = text;
    this.endsWithNewline = text.length === 0 || text.endsWith('\n');
  }

  backup(): string | undefined {
    return undefined;
  }

  close(): void {}
}
