// Session lines waiting to be written, kept as the bytes the file will get: each line's UTF-8
// followed by "\n", one after another in one reused buffer. A batch then goes to storage as one
// block (one write(2)) with no string joined and nothing encoded at write time.

/** Above this the buffer is not kept once emptied (a big batch must not pin memory). */
const KEEP_BYTES = 1 << 20;
const NEWLINE = 0x0a;

export class StagedLines {
  private buffer = Buffer.allocUnsafe(64 * 1024);
  /** Bytes staged. */
  size = 0;
  /** Lines staged. */
  count = 0;

  /** Adds one line (`line` holds no newline). */
  push(line: Uint8Array): void {
    this.reserve(line.length + 1);
    this.buffer.set(line, this.size);
    this.size += line.length;
    this.buffer[this.size++] = NEWLINE;
    this.count++;
  }

  /** Puts one line before all the others. */
  unshift(line: Uint8Array): void {
    this.reserve(line.length + 1);
    this.buffer.copy(this.buffer, line.length + 1, 0, this.size);
    this.buffer.set(line, 0);
    this.buffer[line.length] = NEWLINE;
    this.size += line.length + 1;
    this.count++;
  }

  /** Removes the first line; returns its length with the newline. */
  shift(): number {
    const end = this.buffer.indexOf(NEWLINE) + 1;
    if (end === 0 || end > this.size) return 0;
    this.buffer.copy(this.buffer, 0, end, this.size);
    this.size -= end;
    this.count--;
    return end;
  }

  /** Drops everything staged after a mark taken earlier as { size, count }. */
  truncate(size: number, count: number): void {
    this.size = size;
    this.count = count;
  }

  /** The staged bytes: a view, valid until the next change. */
  view(): Uint8Array {
    return this.buffer.subarray(0, this.size);
  }

  clear(): void {
    this.size = 0;
    this.count = 0;
    if (this.buffer.length > KEEP_BYTES) this.buffer = Buffer.allocUnsafe(64 * 1024);
  }

  private reserve(n: number): void {
    if (this.size + n <= this.buffer.length) return;
    const bigger = Buffer.allocUnsafe(Math.max(this.size + n, this.buffer.length * 2));
    this.buffer.copy(bigger, 0, 0, this.size);
    this.buffer = bigger;
  }
}
