// Inline SVG drawn on the server side: the task DAG (levels left to right, edges from each need)
// and horizontal bar charts of tokens and cost per task. Plain strings, no scripts needed.
import { formatCost, formatTokens } from '../format-units.js';
import { escapeHtml } from './html-text.js';
import type { TaskSummary } from './report-data.js';

const NODE_W = 170;
const NODE_H = 46;
const COL_GAP = 70;
const ROW_GAP = 18;
const PAD = 12;

const clipLabel = (s: string, n: number) => (s.length <= n ? s : `${s.slice(0, n - 1)}…`);

export function dagSvg(tasks: TaskSummary[]): string {
  if (tasks.length === 0) return '<p class="muted">No tasks in the log.</p>';
  const byLevel = new Map<number, TaskSummary[]>();
  for (const t of tasks) byLevel.set(t.level, [...(byLevel.get(t.level) ?? []), t]);
  const levels = [...byLevel.keys()].sort((a, b) => a - b);
  const tallest = Math.max(...[...byLevel.values()].map((l) => l.length));
  const width = PAD * 2 + levels.length * NODE_W + (levels.length - 1) * COL_GAP;
  const height = PAD * 2 + tallest * NODE_H + (tallest - 1) * ROW_GAP;
  const pos = new Map<string, { x: number; y: number }>();
  levels.forEach((lv, col) => {
    const list = byLevel.get(lv)!;
    const colHeight = list.length * NODE_H + (list.length - 1) * ROW_GAP;
    const top = PAD + (height - PAD * 2 - colHeight) / 2;
    for (const [i, t] of list.entries())
      pos.set(t.task, { x: PAD + col * (NODE_W + COL_GAP), y: top + i * (NODE_H + ROW_GAP) });
  });
  const edges: string[] = [];
  for (const t of tasks) {
    const to = pos.get(t.task)!;
    for (const n of t.needs) {
      const from = pos.get(n);
      if (!from) continue;
      const x1 = from.x + NODE_W;
      const y1 = from.y + NODE_H / 2;
      const x2 = to.x - 4;
      const y2 = to.y + NODE_H / 2;
      const mid = (x1 + x2) / 2;
      edges.push(
        `<path class="edge" data-edge="${escapeHtml(n)}->${escapeHtml(t.task)}" d="M${x1},${y1} C${mid},${y1} ${mid},${y2} ${x2},${y2}" marker-end="url(#arrow)"/>`,
      );
    }
  }
  const nodes = tasks.map((t) => {
    const p = pos.get(t.task)!;
    const counts =
      t.instances === 1 ? t.status : `${t.done}/${t.instances} done${t.failed ? `, ${t.failed} failed` : ''}`;
    return (
      `<g class="node ${t.status}" data-task="${escapeHtml(t.task)}" transform="translate(${p.x},${p.y})">` +
      `<title>${escapeHtml(`${t.task}: ${counts}, ${formatTokens(t.usage.totalTokens)} tokens, ${formatCost(t.usage.cost)}`)}</title>` +
      `<rect width="${NODE_W}" height="${NODE_H}" rx="7"/>` +
      `<text x="10" y="19" class="node-title">${escapeHtml(clipLabel(t.task, 22))}</text>` +
      `<text x="10" y="36" class="node-sub">${escapeHtml(clipLabel(`${counts} · ${formatCost(t.usage.cost)}`, 28))}</text>` +
      `</g>`
    );
  });
  return (
    `<svg class="dag" role="img" aria-label="task graph" width="${width}" height="${height}" viewBox="0 0 ${width} ${height}" xmlns="http://www.w3.org/2000/svg">` +
    `<defs><marker id="arrow" viewBox="0 0 10 10" refX="9" refY="5" markerWidth="7" markerHeight="7" orient="auto-start-reverse"><path d="M0,0 L10,5 L0,10 z" class="arrow"/></marker></defs>` +
    edges.join('') +
    nodes.join('') +
    `</svg>`
  );
}

/** A horizontal bar chart: one bar per item, value printed after the bar. */
export function barChartSvg(
  title: string,
  items: { label: string; value: number; text: string }[],
  cssClass: string,
): string {
  if (items.length === 0) return '';
  const labelW = 170;
  const barW = 360;
  const valueW = 120;
  const rowH = 22;
  const width = labelW + barW + valueW;
  const height = items.length * rowH + 8;
  const max = Math.max(...items.map((i) => i.value), 0);
  const rows = items.map((it, i) => {
    const w = max > 0 ? Math.max(it.value > 0 ? 2 : 0, (it.value / max) * barW) : 0;
    const y = 4 + i * rowH;
    return (
      `<g data-chart-item="${escapeHtml(it.label)}">` +
      `<text x="${labelW - 8}" y="${y + 15}" text-anchor="end">${escapeHtml(clipLabel(it.label, 24))}</text>` +
      `<rect class="${cssClass}" x="${labelW}" y="${y + 3}" width="${w.toFixed(1)}" height="${rowH - 6}" rx="3"><title>${escapeHtml(`${it.label}: ${it.text}`)}</title></rect>` +
      `<text x="${labelW + w + 6}" y="${y + 15}" class="value">${escapeHtml(it.text)}</text>` +
      `</g>`
    );
  });
  return (
    `<figure class="chart"><figcaption>${escapeHtml(title)}</figcaption>` +
    `<svg role="img" aria-label="${escapeHtml(title)}" width="${width}" height="${height}" viewBox="0 0 ${width} ${height}" xmlns="http://www.w3.org/2000/svg">${rows.join('')}</svg></figure>`
  );
}
