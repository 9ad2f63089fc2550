// Lossy-but-recoverable truncation: keep the head (file reads, listings) or the tail (command
// output), limited by lines and bytes together, and say exactly what was cut.
//
// Performance rule: the input is never split into an array. We count newlines with indexOf
// (native, memchr-speed) and only walk the lines we keep, so 100 MB costs a line count plus
// at most `maxLines` small steps, and no memory beyond the kept text.
import { TOOL_DEFAULTS } from './defaults.js';
import { alignToCharStart, utf8TailStart } from './utf8.js';

export interface TruncationOptions {
  /** Maximum lines kept (default 2000). */
  maxLines?: number;
  /** Maximum UTF-8 bytes kept (default 51200). */
  maxBytes?: number;
}

export interface TruncationResult {
  /** The kept text. */
  content: string;
  truncated: boolean;
  /** Which limit cut the text: "lines" when the line limit was hit within the byte budget. */
  truncatedBy: 'lines' | 'bytes' | null;
  /** Lines of the input, as `split("\n")` counts them (a trailing newline adds an empty line). */
  totalLines: number;
  /** UTF-8 bytes of the input. */
  totalBytes: number;
  outputLines: number;
  outputBytes: number;
  /** Tail only: the last line alone was over the byte limit and only its end is kept. */
  lastLinePartial: boolean;
  /** Head only: the first line alone was over the byte limit, so nothing is kept. */
  firstLineExceedsLimit: boolean;
  maxLines: number;
  maxBytes: number;
}

/** The operations truncation needs, implemented once for strings and once for bytes. */
interface LineSource {
  readonly length: number;
  totalBytes(): number;
  countNewlines(): number;
  indexOfNewline(from: number): number;
  /** Newline at or before `from`; -1 when none (and for from < 0). */
  lastIndexOfNewline(from: number): number;
  /** Bytes of [a, b), or Infinity as soon as it is known to exceed `limit`. */
  bytesAtMost(a: number, b: number, limit: number): number;
  /** Start index in [a, b) so that [start, b) is at most maxBytes, on a character boundary. */
  tailStart(a: number, b: number, maxBytes: number): number;
  text(a: number, b: number): string;
}

function stringSource(s: string): LineSource {
  return {
    length: s.length,
    totalBytes: () => Buffer.byteLength(s, 'utf8'),
    countNewlines: () => {
      let count = 0;
      for (let p = s.indexOf('\n'); p !== -1; p = s.indexOf('\n', p + 1)) count++;
      return count;
    },
    indexOfNewline: (from) => s.indexOf('\n', from),
    lastIndexOfNewline: (from) => (from < 0 ? -1 : s.lastIndexOf('\n', from)),
    bytesAtMost: (a, b, limit) => {
      // Every UTF-16 unit is at least one byte, so a long slice is over the limit without encoding it.
      if (b - a > limit) return Infinity;
      const n = Buffer.byteLength(s.slice(a, b), 'utf8');
      return n > limit ? Infinity : n;
    },
    tailStart: (a, b, maxBytes) => utf8TailStart(s, a, b, maxBytes),
    text: (a, b) => s.slice(a, b),
  };
}

function bytesSource(buf: Buffer): LineSource {
  return {
    length: buf.length,
    totalBytes: () => buf.length,
    countNewlines: () => countNewlines(buf),
    indexOfNewline: (from) => buf.indexOf(10, from),
    // Buffer#lastIndexOf treats a negative offset as "from the end", so guard it.
    lastIndexOfNewline: (from) => (from < 0 ? -1 : buf.lastIndexOf(10, from)),
    bytesAtMost: (a, b, limit) => (b - a > limit ? Infinity : b - a),
    tailStart: (a, b, maxBytes) => alignToCharStart(buf, Math.max(a, b - maxBytes), b),
    text: (a, b) => buf.toString('utf8', a, b),
  };
}

/** Newlines in a byte buffer, found with native indexOf (memchr) rather than a byte loop. */
export function countNewlines(bytes: Uint8Array): number {
  const buf = Buffer.isBuffer(bytes) ? bytes : Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  let count = 0;
  for (let p = buf.indexOf(10); p !== -1; p = buf.indexOf(10, p + 1)) count++;
  return count;
}

function toSource(input: string | Uint8Array): LineSource {
  if (typeof input === 'string') return stringSource(input);
  const buf = Buffer.isBuffer(input) ? input : Buffer.from(input.buffer, input.byteOffset, input.byteLength);
  return bytesSource(buf);
}

function limitsOf(options?: TruncationOptions): { maxLines: number; maxBytes: number } {
  return {
    maxLines: options?.maxLines ?? TOOL_DEFAULTS.maxLines,
    maxBytes: options?.maxBytes ?? TOOL_DEFAULTS.maxBytes,
  };
}

/** The input measured against the limits; `whole` is the answer when all of it fits. */
function measure(input: string | Uint8Array, options?: TruncationOptions) {
  const { maxLines, maxBytes } = limitsOf(options);
  const src = toSource(input);
  const totalBytes = src.totalBytes();
  const totalLines = src.countNewlines() + 1;
  const fits = totalLines <= maxLines && totalBytes <= maxBytes;
  const whole: TruncationResult | undefined = fits
    ? {
        content: src.text(0, src.length),
        truncated: false,
        truncatedBy: null,
        totalLines,
        totalBytes,
        outputLines: totalLines,
        outputBytes: totalBytes,
        lastLinePartial: false,
        firstLineExceedsLimit: false,
        maxLines,
        maxBytes,
      }
    : undefined;
  return { src, maxLines, maxBytes, totalLines, totalBytes, whole };
}

/**
 * Whole lines counted against both limits, from whichever end: a line costs its bytes plus the
 * newline that joins it to the ones already taken, and the line that would pass the byte limit is refused.
 */
class LineBudget {
  lines = 0;
  bytes = 0;

  constructor(
    private readonly src: LineSource,
    private readonly maxBytes: number,
  ) {}

  /** Takes the line [start, end) when it fits; false (and nothing taken) when it does not. */
  take(start: number, end: number): boolean {
    const sep = this.lines > 0 ? 1 : 0;
    const lineBytes = this.src.bytesAtMost(start, end, this.maxBytes - this.bytes - sep);
    if (this.bytes + sep + lineBytes > this.maxBytes) return false;
    this.bytes += sep + lineBytes;
    this.lines++;
    return true;
  }
}

/** Keeps whole lines from the top while both limits hold. Never emits a partial line. */
export function truncateHead(input: string | Uint8Array, options?: TruncationOptions): TruncationResult {
  const { src, maxLines, maxBytes, totalLines, totalBytes, whole } = measure(input, options);
  if (whole) return whole;
  const base = { totalLines, totalBytes, maxLines, maxBytes, lastLinePartial: false };

  const taken = new LineBudget(src, maxBytes);
  let end = 0;
  let truncatedBy: 'lines' | 'bytes' = 'lines';
  for (let pos = 0; taken.lines < maxLines; ) {
    const nl = src.indexOfNewline(pos);
    const lineEnd = nl === -1 ? src.length : nl;
    if (!taken.take(pos, lineEnd)) {
      truncatedBy = 'bytes';
      break;
    }
    end = lineEnd;
    if (nl === -1) break;
    pos = nl + 1;
  }
  return {
    ...base,
    content: taken.lines === 0 ? '' : src.text(0, end),
    truncated: true,
    truncatedBy,
    outputLines: taken.lines,
    outputBytes: taken.bytes,
    firstLineExceedsLimit: taken.lines === 0,
  };
}

/**
 * Keeps whole lines from the bottom while both limits hold. When the last line alone is over
 * the byte limit, keeps its last `maxBytes` bytes, starting on a character boundary.
 */
export function truncateTail(input: string | Uint8Array, options?: TruncationOptions): TruncationResult {
  const { src, maxLines, maxBytes, totalLines, totalBytes, whole } = measure(input, options);
  if (whole) return whole;
  const base = { totalLines, totalBytes, maxLines, maxBytes, firstLineExceedsLimit: false };

  const taken = new LineBudget(src, maxBytes);
  let start = src.length;
  let truncatedBy: 'lines' | 'bytes' = 'lines';
  let lineEnd = src.length;
  let lineStart = src.length;
  while (taken.lines < maxLines) {
    const nl = src.lastIndexOfNewline(lineEnd - 1);
    lineStart = nl + 1;
    if (!taken.take(lineStart, lineEnd)) {
      truncatedBy = 'bytes';
      break;
    }
    start = lineStart;
    if (nl === -1) break;
    lineEnd = nl;
  }

  if (taken.lines === 0) {
    // The last line alone is too big: keep its end, cut on a character boundary.
    const cut = src.tailStart(lineStart, src.length, maxBytes);
    const content = src.text(cut, src.length);
    return {
      ...base,
      content,
      truncated: true,
      truncatedBy: 'bytes',
      outputLines: 1,
      outputBytes: Buffer.byteLength(content, 'utf8'),
      lastLinePartial: true,
    };
  }
  return {
    ...base,
    content: src.text(start, src.length),
    truncated: true,
    truncatedBy,
    outputLines: taken.lines,
    outputBytes: taken.bytes,
    lastLinePartial: false,
  };
}

/** Caps one line at `maxChars` characters (grep output), never splitting a surrogate pair. */
export function truncateLine(
  line: string,
  maxChars: number = TOOL_DEFAULTS.grepMaxLineLength,
): { text: string; wasTruncated: boolean } {
  if (line.length <= maxChars) return { text: line, wasTruncated: false };
  let cut = maxChars;
  const last = line.charCodeAt(cut - 1);
  if (last >= 0xd800 && last <= 0xdbff) cut--;
  return { text: `${line.slice(0, cut)}... [truncated]`, wasTruncated: true };
}

/** Human size: 512B, 50.0KB, 1.5MB. */
export function formatSize(bytes: number): string {
  if (bytes < 1024) return `${bytes}B`;
  if (bytes < 1024 * 1024) return `${(bytes / 1024).toFixed(1)}KB`;
  return `${(bytes / (1024 * 1024)).toFixed(1)}MB`;
}
