// The run-wide task board as text: one log line per board change (plain log, `--json` readers
// get the event itself), and the board as a table for `show`, `watch` and the run view. Reads
// only the fold (run/board-record.ts).
import { openBlockers, type Board, type BoardItem } from '../run/board-record.js';
import type { RunEvent } from '../run/run-events.js';
import { clip, oneLine } from './terminal-text.js';

type BoardEvent = Extract<RunEvent, { type: 'board_task' }>;

const SUBJECT_CHARS = 70;

/** "board #3 claimed by work.a: Write the parser". */
export function boardLine(e: BoardEvent): string {
  const owner = e.change === 'updated' && e.item.owner ? ` (owner ${e.item.owner})` : '';
  return `board #${e.item.id} ${e.change} by ${e.by}${owner}: ${clip(oneLine(e.item.subject), SUBJECT_CHARS)}`;
}

/** One item's status as the table shows it: completed, in progress, blocked or pending. */
export function boardStatusText(board: Board, item: BoardItem): string {
  if (item.status === 'completed') return 'completed';
  if (item.status === 'in_progress') return 'in progress';
  const open = openBlockers(board, item);
  return open.length ? `blocked by ${open.map((id) => `#${id}`).join(', ')}` : 'pending';
}

/** Completed count over all, e.g. "board 2/5 completed". */
export function boardSummary(board: Board): string {
  const done = [...board.values()].filter((i) => i.status === 'completed').length;
  return `board ${done}/${board.size} completed`;
}

/** The board as aligned lines (empty when the run has no board items). */
export function boardTable(board: Board, width = 100): string[] {
  if (board.size === 0) return [];
  const items = [...board.values()];
  const idWidth = Math.max(...items.map((i) => i.id.length)) + 1;
  const statusWidth = Math.max(...items.map((i) => boardStatusText(board, i).length));
  const ownerWidth = Math.max(5, ...items.map((i) => (i.owner ?? '-').length));
  const lines = [`Board (${boardSummary(board).replace(/^board /, '')})`];
  for (const item of items) {
    const head = `  ${`#${item.id}`.padEnd(idWidth)}  ${boardStatusText(board, item).padEnd(statusWidth)}  ${(item.owner ?? '-').padEnd(ownerWidth)}  `;
    lines.push(head + clip(oneLine(item.subject), Math.max(20, width - head.length)));
    const last = item.notes[item.notes.length - 1];
    if (last)
      lines.push(
        `${' '.repeat(head.length)}${clip(oneLine(`${last.by}: ${last.text}`), Math.max(20, width - head.length))}`,
      );
  }
  return lines;
}

/** The live view's and `watch`'s header line: "board 1/4 completed · 2 in progress (a, b) · 1 pending". */
export function boardHeaderLine(board: Board): string {
  const items = [...board.values()];
  const working = items.filter((i) => i.status === 'in_progress');
  const pending = items.filter((i) => i.status === 'pending');
  const parts = [boardSummary(board)];
  if (working.length)
    parts.push(`${working.length} in progress (${working.map((i) => `#${i.id} ${i.owner ?? '?'}`).join(', ')})`);
  if (pending.length) parts.push(`${pending.length} pending`);
  return parts.join(' · ');
}
