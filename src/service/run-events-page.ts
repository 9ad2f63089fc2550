// One page of a run's event log from a cursor, for the MCP run_events tool and for a tool that
// waits on a run (any reader that polls a run from another process). The cursor is the byte
// offset in run.jsonl just after the last line read: appending never moves it, so a client
// polling a live run gets every event exactly once, and a line still being written (no newline
// yet) waits for the next page. Paths come back absolute, as readRunLog and `orchestrate watch`
// give them.
import { closeSync, fstatSync, openSync, readSync } from 'node:fs';
import { join } from 'node:path';
import { RunEventSchema, type RunEvent } from '../run/run-events.js';
import { runRootOf, toAbsolutePaths } from '../run/run-paths.js';
import { RUN_LOG } from '../run/run-store.js';

export interface EventsPage {
  /** The events read, after the filter. */
  events: RunEvent[];
  /** Where the next page starts (pass it back as the cursor). */
  next: number;
  /** The log holds complete lines past `next` (the page stopped at its limit). */
  more: boolean;
  /** Lines read that were not run events (a torn line of a killed run, a newer event type). */
  skipped: number;
  /** Events read but left out by the filter. */
  filtered: number;
}

export interface PageOptions {
  /** Most events to return (events left out by the filter do not count). */
  limit: number;
  /** Most bytes of the log to read in one page. */
  maxBytes: number;
  /** Which events to return; the others are passed over (the cursor still moves past them). */
  keep?: (e: RunEvent) => boolean;
}

/** Reads `length` bytes of `fd` from `offset` (fewer at the end of the file). */
function readAt(fd: number, offset: number, length: number): Buffer {
  const buf = Buffer.alloc(length);
  let got = 0;
  while (got < length) {
    const n = readSync(fd, buf, got, length - got, offset + got);
    if (n <= 0) break;
    got += n;
  }
  return buf.subarray(0, got);
}

function parseLine(line: string): RunEvent | undefined {
  try {
    const parsed = RunEventSchema.safeParse(JSON.parse(line));
    return parsed.success ? parsed.data : undefined;
  } catch {
    return undefined;
  }
}

/** The run's root (for absolute paths), from the first line of its log. */
function rootOf(fd: number, runDir: string): string | undefined {
  const head = readAt(fd, 0, 64 * 1024).toString('utf8');
  const nl = head.indexOf('\n');
  const first = parseLine(nl < 0 ? head : head.slice(0, nl));
  return first?.type === 'run_start' ? runRootOf(runDir, first) : undefined;
}

/** The size of the run's log now (0 when it has none yet). */
export function runLogSize(runDir: string): number {
  try {
    const fd = openSync(join(runDir, RUN_LOG), 'r');
    try {
      return fstatSync(fd).size;
    } finally {
      closeSync(fd);
    }
  } catch {
    return 0;
  }
}

/** The page of `runDir`'s log that starts at byte `cursor` (a cursor past the end reads nothing). */
export function readEventsPage(runDir: string, cursor: number, opts: PageOptions): EventsPage {
  const page: EventsPage = { events: [], next: cursor, more: false, skipped: 0, filtered: 0 };
  let fd: number;
  try {
    fd = openSync(join(runDir, RUN_LOG), 'r');
  } catch {
    return page;
  }
  try {
    const size = fstatSync(fd).size;
    if (cursor >= size) return page;
    const data = readAt(fd, cursor, Math.min(size - cursor, opts.maxBytes));
    const root = rootOf(fd, runDir);
    let pos = 0;
    while (pos < data.length) {
      const nl = data.indexOf(0x0a, pos);
      if (nl < 0) break; // a line still being written, or one longer than a page: see below
      if (page.events.length >= opts.limit) {
        page.more = true;
        break;
      }
      const line = data.subarray(pos, nl).toString('utf8');
      pos = nl + 1;
      page.next = cursor + pos;
      if (line.trim() === '') continue;
      const e = parseLine(line);
      if (!e) {
        page.skipped++;
        continue;
      }
      if (opts.keep && !opts.keep(e)) {
        page.filtered++;
        continue;
      }
      page.events.push(toAbsolutePaths(e, runDir, root));
    }
    // A single line longer than a whole page (a huge tool output) would stall the cursor: step over it.
    if (page.next === cursor && data.length === opts.maxBytes && data.indexOf(0x0a) < 0) {
      const skipTo = nextNewline(fd, cursor + data.length, size);
      if (skipTo !== undefined) {
        page.next = skipTo;
        page.skipped++;
      }
    }
    if (!page.more && page.next < size) page.more = hasNewline(fd, page.next, size);
    return page;
  } finally {
    closeSync(fd);
  }
}

/** The offset just after the next newline at or after `from`, if there is one. */
function nextNewline(fd: number, from: number, size: number): number | undefined {
  for (let at = from; at < size; at += 1 << 20) {
    const chunk = readAt(fd, at, Math.min(1 << 20, size - at));
    const nl = chunk.indexOf(0x0a);
    if (nl >= 0) return at + nl + 1;
  }
  return undefined;
}

function hasNewline(fd: number, from: number, size: number): boolean {
  return nextNewline(fd, from, size) !== undefined;
}
