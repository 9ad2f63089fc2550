// `orchestrate report <run>`: one self-contained report.html in the run folder, built from the
// folder alone (run.jsonl, sessions/, plan.md), so it works for finished and interrupted runs.
// No network: CSS, scripts and SVG are inline; nothing links outside the file.
//
// Sections: header, timeline (Gantt, drawn by the page script: one bar per attempt, permit waits
// shaded, failures red), task DAG, tokens and cost per task, instances table, each instance's
// conversation (collapsible; tool calls and results escaped and cut with a note), merged plan.
import { join, relative } from 'node:path';
import type { UsageSummary } from '../run/usage-summary.js';
import { describeApproval } from '../run/approval-record.js';
import { replaceFileSync } from '../tools/atomic-write.js';
import { cacheReadShare, cacheText } from './cache-text.js';
import { DISPLAY_DEFAULTS } from './defaults.js';
import { outputPreview, partialLine } from './final-summary.js';
import { formatCost, formatDateTime, formatDuration, formatTokens, plural } from './format-units.js';
import { escapeHtml, jsonForScript, truncateForPage } from './report/html-text.js';
import { markdownToHtml } from './report/markdown-html.js';
import { buildReportData } from './report/report-data.js';
import { ERROR_TRAP, TIMELINE_SCRIPT } from './report/report-page-script.js';
import { REPORT_CSS } from './report/report-style.js';
import { barChartSvg, dagSvg } from './report/report-svg.js';
import { changesetsSection } from './report/changesets-html.js';
import { boardSection } from './report/board-html.js';
import { trainSection } from './report/train-html.js';
import { picksSection } from './report/picks-html.js';
import { hooksSection } from './report/hooks-html.js';
import { controlLine } from './plain-log.js';
import { loadRunFolder, sessionFileOf, type RunFolder } from './run-folder.js';
import { instanceUsage, instancesInTaskOrder, type InstanceState } from '../run/run-fold.js';
import { assistantMeta } from './conversation-text.js';
import { readConversation, type ConversationItem } from './session-conversation.js';
import { providerCostSection } from './provider-costs.js';

export const REPORT_FILE = 'report.html';

function pre(text: string, where: string, cls = ''): string {
  const cut = truncateForPage(text, DISPLAY_DEFAULTS.reportTextChars, where);
  return `<pre${cls ? ` class="${cls}"` : ''}>${escapeHtml(cut.text)}</pre>${cut.note ? `<div class="note">${escapeHtml(cut.note)}</div>` : ''}`;
}

function argsJson(args: unknown): string {
  try {
    return JSON.stringify(args, null, 2) ?? '';
  } catch {
    return String(args);
  }
}

function itemHtml(i: ConversationItem, where: string): string {
  switch (i.kind) {
    case 'user':
      return `<div class="msg user"><div class="role">user</div>${pre(i.text, where)}${i.images ? `<div class="note">${i.images} image(s) omitted</div>` : ''}</div>`;
    case 'assistant': {
      const meta = assistantMeta(i).join(' · ');
      const parts = [`<div class="role">assistant <span class="muted">${escapeHtml(meta)}</span></div>`];
      if (i.thinking)
        parts.push(`<details class="thinking"><summary>thinking</summary>${pre(i.thinking, where)}</details>`);
      if (i.text) parts.push(pre(i.text, where));
      for (const c of i.toolCalls) {
        parts.push(
          `<div class="tool-call"><span class="tool-name">→ ${escapeHtml(c.name)}</span>${pre(argsJson(c.args), where, 'args')}</div>`,
        );
      }
      if (i.stopReason === 'error' || i.stopReason === 'aborted')
        parts.push(`<div class="error">[${escapeHtml(i.stopReason)}] ${escapeHtml(i.error ?? '')}</div>`);
      return `<div class="msg assistant">${parts.join('')}</div>`;
    }
    case 'toolResult':
      return (
        `<div class="tool-result${i.isError ? ' is-error' : ''}"><span class="tool-name">← ${escapeHtml(i.toolName)}${i.isError ? ' (error)' : ''}</span>` +
        `${pre(i.text, where)}${i.images ? `<div class="note">${i.images} image(s) omitted</div>` : ''}</div>`
      );
    case 'peer':
      return `<div class="msg peer"><div class="role">message from ${escapeHtml(i.from)}</div>${pre(i.text, where)}</div>`;
    case 'context':
      return `<div class="msg context"><div class="role">context: ${escapeHtml(i.label)}</div>${pre(i.text, where)}</div>`;
    case 'summary':
      return `<div class="msg summary"><div class="role">${escapeHtml(i.label)}</div>${pre(i.text, where)}</div>`;
    case 'bash':
      return `<div class="msg bash"><div class="role">$ ${escapeHtml(i.command)}${i.exitCode ? ` (exit ${i.exitCode})` : ''}</div>${pre(i.output, where)}</div>`;
    default:
      return '';
  }
}

function conversationHtml(folder: RunFolder, inst: InstanceState): string {
  const file = sessionFileOf(folder.dir, inst);
  const where = relative(folder.dir, file) || file;
  const conv = readConversation(file);
  const u = instanceUsage(inst);
  const head =
    `<summary><span class="status ${inst.status}">${escapeHtml(inst.status)}</span> <strong>${escapeHtml(inst.label)}</strong> ` +
    `<span class="muted">${plural(conv.items.length, 'item')} · ${plural(u.turns ?? 0, 'turn')} · ${formatTokens(u.totalTokens)} tokens · ${formatCost(u.cost)}</span></summary>`;
  const body: string[] = [`<div class="muted small">session: ${escapeHtml(where)}</div>`];
  if (!conv.exists)
    body.push('<p class="muted">No session file: the instance never reached its first model reply.</p>');
  for (const w of conv.warnings) body.push(`<div class="note">warning: ${escapeHtml(w)}</div>`);
  for (const item of conv.items) body.push(itemHtml(item, where));
  return `<details class="conversation" data-instance="${escapeHtml(inst.label)}">${head}${body.join('\n')}</details>`;
}

/** An instance's cache figures: share of its input read from the cache, and what that saved. */
function cacheCell(u: UsageSummary): string {
  if (u.cacheRead + u.cacheWrite === 0) return '';
  return `${Math.round(cacheReadShare(u) * 100)}%${u.cacheSaved !== undefined ? ` · ${formatCost(u.cacheSaved)}` : ''}`;
}

function instancesTable(folder: RunFolder): string {
  const rows = instancesInTaskOrder(folder.state).map((inst) => {
    const u = instanceUsage(inst);
    const attempts = inst.attempts.filter((a) => a.startTs !== undefined).length;
    const detail =
      inst.status === 'failed'
        ? `<span class="error">${escapeHtml(inst.failure ?? 'error')}: ${escapeHtml(inst.error ?? '')}</span>`
        : inst.status === 'cancelled'
          ? `<span class="error">${escapeHtml(inst.error ?? 'cancelled')}</span>`
          : inst.status === 'skipped'
            ? escapeHtml(inst.skipReason ?? '')
            : escapeHtml(outputPreview(inst.output ?? inst.text, DISPLAY_DEFAULTS.toolResultChars));
    return (
      `<tr data-instance="${escapeHtml(inst.label)}"><td>${escapeHtml(inst.label)}</td><td><span class="status ${inst.status}">${inst.status}</span></td>` +
      `<td class="num">${attempts}</td><td class="num">${u.turns ?? 0}</td><td class="num">${formatTokens(u.totalTokens)}</td>` +
      `<td class="num">${formatCost(u.cost)}${u.estimated ? ' (est.)' : ''}</td><td class="num">${escapeHtml(cacheCell(u))}</td><td class="num">${inst.durationMs !== undefined ? formatDuration(inst.durationMs) : ''}</td><td>${detail}${(inst.warnings ?? []).map((w) => ` <div class="note">${escapeHtml(w)}</div>`).join('')}${inst.approval ? ` <span class="muted">${escapeHtml(describeApproval(inst.approval))}</span>` : ''}${inst.workers?.length ? ` <span class="muted">on ${escapeHtml(inst.workers.join(', '))}</span>` : ''}</td></tr>`
    );
  });
  return (
    '<table class="instances"><thead><tr><th>instance</th><th>status</th><th>attempts</th><th>turns</th><th>tokens</th><th>cost</th><th>cache read · saved</th><th>time</th><th>output / error</th></tr></thead>' +
    `<tbody>${rows.join('')}</tbody></table>`
  );
}

/** The publish gates (publish.approve): what each asked (with the changeset preview), who answered, what was published. */
function publishGateSection(s: RunFolder['state']): string {
  if (s.publishGates.size === 0) return '';
  const gates = [...s.publishGates].map(
    ([task, g]) => `<li>publish gate of ${escapeHtml(task)}: ${escapeHtml(describeApproval(g))}</li>`,
  );
  const done = s.published.map(
    (x) =>
      `<li>published ${escapeHtml(x.key)}: ${escapeHtml(x.outcome)}${x.detail ? ` ${escapeHtml(x.detail)}` : ''}</li>`,
  );
  return `<section><h2>Publish gate</h2><ul class="controls">${[...gates, ...done].join('')}</ul></section>\n`;
}

/** Who cancelled, steered or retried what while the run was live (its control events), when anyone did. */
function controlsSection(folder: RunFolder): string {
  const list = folder.state.controls;
  if (list.length === 0) return '';
  const items = list.map(
    (c) =>
      `<li><span class="muted">${escapeHtml(formatDateTime(c.ts))}</span> ${c.ok ? '' : '<span class="error">refused</span> '}${escapeHtml(controlLine(c))}</li>`,
  );
  return `<section><h2>Actions on the live run</h2><ul class="controls">${items.join('')}</ul></section>\n`;
}

export function buildHtmlReport(folder: RunFolder): string {
  const data = buildReportData(folder);
  const s = folder.state;
  const title = `${data.name || 'run'} · ${data.runId}`;
  const tokenItems = data.tasks.map((t) => ({
    label: t.task,
    value: t.usage.totalTokens,
    text: `${formatTokens(t.usage.totalTokens)} tokens`,
  }));
  const costItems = data.tasks.map((t) => ({ label: t.task, value: t.usage.cost, text: formatCost(t.usage.cost) }));
  const skippedNote =
    folder.skipped.length > 0
      ? `<p class="note">${folder.skipped.length} unreadable line(s) in run.jsonl were skipped.</p>`
      : '';
  const plan =
    folder.planText !== undefined
      ? `<div class="plan">${markdownToHtml(folder.planText)}</div>`
      : '<p class="muted">No plan.md in this run folder yet.</p>';
  const conversations = instancesInTaskOrder(s)
    .map((i) => conversationHtml(folder, i))
    .join('\n');
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escapeHtml(title)}</title>
<script>${ERROR_TRAP}</script>
<style>${REPORT_CSS}</style>
</head>
<body data-errors="0">
<header>
<h1>${escapeHtml(data.name || 'run')} <span class="status ${escapeHtml(data.status)}">${escapeHtml(data.status.replace('_', ' '))}</span></h1>
<p class="meta">run <code>${escapeHtml(data.runId)}</code> · recipe <code>${escapeHtml(data.recipe)}</code> · started ${escapeHtml(formatDateTime(data.startTs))} ·
${escapeHtml(formatDuration(s.durationMs ?? data.span))} · ${formatTokens(data.usage.totalTokens)} tokens · ${formatCost(data.usage.cost)}${data.usage.estimated ? ' (estimated: a server reported no token counts)' : ''}${cacheText(data.usage) ? ` · ${escapeHtml(cacheText(data.usage)!)}` : ''}${s.budgetExhausted ? ` · <span class="error">budget exhausted: ${escapeHtml(s.budgetExhausted)}</span>` : ''}</p>
${s.status === 'partial' ? `<p class="meta">${escapeHtml(partialLine(s))}</p>` : ''}
${skippedNote}
</header>
<main>
<section><h2>Timeline</h2>
<div class="legend"><span class="key done"></span>done <span class="key failed"></span>failed <span class="key retry"></span>failed, retried <span class="key interrupted"></span>interrupted / running <span class="key wait"></span>waiting for a permit</div>
<div id="timeline"><noscript>The timeline is drawn by the page's script.</noscript></div></section>
<section><h2>Task graph</h2><div class="scroll">${dagSvg(data.tasks)}</div></section>
<section><h2>Usage per task</h2><div class="charts">${barChartSvg('Tokens per task', tokenItems, 'tokens')}${barChartSvg('Cost per task', costItems, 'cost')}</div></section>
${providerCostSection(s.providers)}<section><h2>Instances</h2><div class="scroll">${instancesTable(folder)}</div></section>
${boardSection(s)}${trainSection(s)}${picksSection(s)}${publishGateSection(s)}${changesetsSection(folder.dir, s)}${hooksSection(folder.events)}${controlsSection(folder)}<section><h2>Conversations <button id="toggle-conversations" type="button">Expand all</button></h2>
${conversations}
</section>
<section><h2>Merged plan</h2>${plan}</section>
</main>
<script type="application/json" id="report-data">${jsonForScript(data)}</script>
<script>${TIMELINE_SCRIPT}</script>
</body>
</html>
`;
}

/** Builds the report of the run in `runDir` and writes it there; returns its path. */
export function writeHtmlReport(runDir: string): string {
  const folder = loadRunFolder(runDir);
  const target = join(runDir, REPORT_FILE);
  // Replaced atomically: a browser (or a second `report`) never sees half a file.
  replaceFileSync(target, buildHtmlReport(folder));
  return target;
}
