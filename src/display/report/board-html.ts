// The report's "Task board" section: every item of the run-wide task board as the run log left
// it (status, owner, what blocks it, notes). Empty when the run had no board items.
import type { RunState } from '../../run/run-fold.js';
import { boardStatusText, boardSummary } from '../board-text.js';
import { formatDateTime } from '../format-units.js';
import { escapeHtml } from './html-text.js';

export function boardSection(state: RunState): string {
  const board = state.board;
  if (board.size === 0) return '';
  const rows = [...board.values()].map((item) => {
    const notes = item.notes
      .map(
        (n) =>
          `<div class="muted">${escapeHtml(formatDateTime(n.ts))} ${escapeHtml(n.by)}: ${escapeHtml(n.text)}</div>`,
      )
      .join('');
    const description = item.description ? `<div class="muted">${escapeHtml(item.description)}</div>` : '';
    return `<tr><td>#${escapeHtml(item.id)}</td><td>${escapeHtml(boardStatusText(board, item))}</td><td>${escapeHtml(item.owner ?? '–')}</td><td>${escapeHtml(item.subject)}${description}${notes}</td><td>${escapeHtml(item.createdBy)}</td></tr>`;
  });
  return `<section><h2>Task board <span class="muted">(${escapeHtml(boardSummary(board).replace(/^board /, ''))})</span></h2><div class="scroll"><table class="board"><thead><tr><th>Task</th><th>Status</th><th>Owner</th><th>Subject and notes</th><th>Created by</th></tr></thead><tbody>${rows.join('')}</tbody></table></div></section>\n`;
}
