// `orchestrate runs`: one row per recorded run, newest first.
import type { RunListing } from '../run/run-store.js';
import { formatCost, formatDateTime } from './format-units.js';
import { fitToWidth, makePainter, padStartToWidth, type Painter } from './terminal-text.js';

const COLOURS: Record<string, 'green' | 'red' | 'yellow' | 'cyan'> = {
  succeeded: 'green',
  partial: 'yellow',
  failed: 'red',
  budget_exhausted: 'red',
  interrupted: 'yellow',
  running: 'cyan',
};

/**
 * "running (pid 4242 on build-1)" for a run whose coordinator holds its lease; the status
 * otherwise; then what waits for an approval ("· waiting: publish:change").
 */
function statusText(r: RunListing): string {
  const status = r.status.replace('_', ' ');
  const base = r.holder ? `${status} (pid ${r.holder.pid} on ${r.holder.host})` : status;
  return r.waiting?.length ? `${base} · waiting: ${r.waiting.join(', ')}` : base;
}

export function formatRunsTable(runs: readonly RunListing[], painter: Painter = makePainter(false)): string {
  const idW = Math.max(6, ...runs.map((r) => r.runId.length));
  const nameW = Math.min(56, Math.max(6, ...runs.map((r) => `${r.name} (${r.recipe})`.length)));
  const statusW = Math.min(64, Math.max(16, ...runs.map((r) => statusText(r).length)));
  const head = `${fitToWidth('RUN', idW)}  ${fitToWidth('RECIPE', nameW)}  ${fitToWidth('STARTED', 16)}  ${fitToWidth('STATUS', statusW)}  ${padStartToWidth('COST', 9)}`;
  const rows = runs.map((r) => {
    const status = fitToWidth(statusText(r), statusW);
    return (
      `${fitToWidth(r.runId, idW)}  ${fitToWidth(`${r.name} (${r.recipe})`, nameW)}  ${fitToWidth(formatDateTime(r.startedAt), 16)}  ` +
      `${painter.paint(COLOURS[r.status] ?? 'yellow', status)}  ${padStartToWidth(formatCost(r.cost), 9)}`
    );
  });
  return `${[painter.paint('bold', head), ...rows].join('\n')}\n`;
}
