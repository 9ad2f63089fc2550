// The report's "Hooks" section: every command hook that ran in the run (the agents' hook_run
// events in run.jsonl): when, which instance, which event and tool, the command, how it ended
// (passed, blocked, warning, timed out) and what it said. Empty when no hook ran.
import type { RunEvent } from '../../run/run-events.js';
import { instanceLabel } from '../../run/run-fold.js';
import { formatDateTime } from '../format-units.js';
import { escapeHtml } from './html-text.js';

interface HookRunView {
  ts: number;
  instance: string;
  hookEvent: string;
  command: string;
  toolName?: string;
  outcome: string;
  exitCode: number | null;
  durationMs: number;
  timedOut: boolean;
  message?: string;
}

/** The hook runs of a run log, in order. */
export function hookRuns(events: readonly RunEvent[]): HookRunView[] {
  const out: HookRunView[] = [];
  for (const e of events) {
    if (e.type !== 'agent_event' || e.event.type !== 'hook_run') continue;
    const h = e.event as Record<string, unknown>;
    out.push({
      ts: e.ts,
      instance: instanceLabel(e.task, e.key),
      hookEvent: String(h.hookEvent ?? ''),
      command: String(h.command ?? ''),
      ...(typeof h.toolName === 'string' ? { toolName: h.toolName } : {}),
      outcome: String(h.outcome ?? ''),
      exitCode: typeof h.exitCode === 'number' ? h.exitCode : null,
      durationMs: typeof h.durationMs === 'number' ? h.durationMs : 0,
      timedOut: h.timedOut === true,
      ...(typeof h.message === 'string' ? { message: h.message } : {}),
    });
  }
  return out;
}

export function hooksSection(events: readonly RunEvent[]): string {
  const runs = hookRuns(events);
  if (runs.length === 0) return '';
  const blocked = runs.filter((r) => r.outcome === 'blocked').length;
  const warned = runs.filter((r) => r.outcome === 'warning').length;
  const rows = runs.map((r) => {
    const ended = r.timedOut ? 'timed out' : r.exitCode === null ? 'killed' : `exit ${r.exitCode}`;
    const cls = r.outcome === 'blocked' ? 'error' : r.outcome === 'warning' ? 'warn' : '';
    return `<tr><td class="muted">${escapeHtml(formatDateTime(r.ts))}</td><td>${escapeHtml(r.instance)}</td><td>${escapeHtml(r.hookEvent)}${r.toolName ? ` <span class="muted">${escapeHtml(r.toolName)}</span>` : ''}</td><td><code>${escapeHtml(r.command)}</code></td><td class="${cls}">${escapeHtml(r.outcome)} <span class="muted">(${escapeHtml(ended)}, ${r.durationMs} ms)</span></td><td>${escapeHtml(r.message ?? '')}</td></tr>`;
  });
  const summary = `${runs.length} run${runs.length === 1 ? '' : 's'}, ${blocked} blocked, ${warned} warning${warned === 1 ? '' : 's'}`;
  return `<section><h2>Hooks <span class="muted">(${escapeHtml(summary)})</span></h2><div class="scroll"><table class="hooks"><thead><tr><th>When</th><th>Instance</th><th>Event</th><th>Command</th><th>Outcome</th><th>Said</th></tr></thead><tbody>${rows.join('')}</tbody></table></div></section>\n`;
}
