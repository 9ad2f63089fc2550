// Strict JSON Lines transport for the json and rpc modes: records are separated by LF only (a
// trailing CR is stripped). Node's readline is not used on purpose: it also splits on U+2028 and
// U+2029, which are legal inside JSON strings, and would tear such a record in two.
import type { Readable } from 'node:stream';
import { RUNTIME_DEFAULTS } from '../defaults.js';
import type { AgentSessionEvent } from '../session-events.js';

const LF = 0x0a;

/**
 * Calls `onLine` for every non-empty line of `input` (UTF-8), in order; resolves when the input
 * ends (a last line without LF is delivered too). A line longer than `maxBytes` is reported with
 * `onOversize` and skipped, so one runaway record cannot exhaust memory.
 */
export function readJsonLines(
  input: Readable,
  onLine: (line: string) => void,
  options: { maxBytes?: number; onOversize?: (bytes: number) => void } = {},
): Promise<void> {
  const maxBytes = options.maxBytes ?? Number.POSITIVE_INFINITY;
  let parts: Buffer[] = [];
  let size = 0;
  let skipping = false;
  const deliver = (buf: Buffer): void => {
    let text = buf.toString('utf8');
    if (text.endsWith('\r')) text = text.slice(0, -1);
    if (text.trim() !== '') onLine(text);
  };
  return new Promise((resolve, reject) => {
    input.on('data', (chunk: Buffer | string) => {
      const buf = typeof chunk === 'string' ? Buffer.from(chunk, 'utf8') : chunk;
      let start = 0;
      for (;;) {
        const nl = buf.indexOf(LF, start);
        if (nl === -1) break;
        if (!skipping) {
          const piece = buf.subarray(start, nl);
          if (size + piece.length > maxBytes) options.onOversize?.(size + piece.length);
          else deliver(parts.length > 0 ? Buffer.concat([...parts, piece]) : piece);
        }
        parts = [];
        size = 0;
        skipping = false;
        start = nl + 1;
      }
      if (start < buf.length && !skipping) {
        const rest = buf.subarray(start);
        size += rest.length;
        if (size > maxBytes) {
          options.onOversize?.(size);
          parts = [];
          skipping = true;
        } else parts.push(Buffer.from(rest));
      }
    });
    input.on('end', () => {
      if (!skipping && parts.length > 0) deliver(Buffer.concat(parts));
      parts = [];
      resolve();
    });
    input.on('error', reject);
  });
}

/** One JSON line. */
export function jsonLine(value: unknown): string {
  return `${JSON.stringify(value)}\n`;
}

/**
 * An event as a JSON line. message_update carries the partial message twice (as `message` and
 * inside `assistantMessageEvent.partial`); the second copy is dropped to halve the stream.
 */
export function eventLine(event: AgentSessionEvent): string {
  if (event.type === 'message_update') {
    const { partial: _partial, ...rest } = event.assistantMessageEvent as typeof event.assistantMessageEvent & {
      partial?: unknown;
    };
    return jsonLine({ ...event, assistantMessageEvent: rest });
  }
  return jsonLine(event);
}

/**
 * A stateful eventLine for one output stream. Every message_update line carries its delta; the
 * full message snapshot is included while the streaming message is small, and after that only
 * each time it has grown by a fixed factor. A snapshot on every delta would make a huge reply
 * or tool argument (a model writing a 2 MB file) cost O(n^2) output: gigabytes on stdout.
 */
export function eventLineWriter(
  eagerChars: number = RUNTIME_DEFAULTS.eventSnapshotEagerChars,
  growth: number = RUNTIME_DEFAULTS.eventSnapshotGrowth,
): (event: AgentSessionEvent) => string {
  let streamed = 0;
  let snapshotAt = 0;
  return (event) => {
    if (event.type === 'message_start') {
      streamed = 0;
      snapshotAt = 0;
    } else if (event.type === 'message_update') {
      const e = event.assistantMessageEvent as { delta?: unknown };
      streamed += typeof e.delta === 'string' ? e.delta.length : 0;
      if (streamed > eagerChars && streamed < snapshotAt * growth) {
        const { partial: _partial, ...rest } = event.assistantMessageEvent as typeof event.assistantMessageEvent & {
          partial?: unknown;
        };
        return jsonLine({ type: event.type, assistantMessageEvent: rest });
      }
      snapshotAt = streamed;
    }
    return eventLine(event);
  };
}
