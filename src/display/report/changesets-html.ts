// The report's "Changesets" section for a campaign (a run with publish:): each changeset's
// repository, branch, pull request and its last observed state (checks, review, mergeable), and
// the burndown: merged pull requests over time, as `orchestrate status` observed them; a follow-up
// round waiting at its gate (publish.follow_up.approve) with the command that answers it. Empty
// when the run has no changesets.json.
import {
  type ChangesetObservation,
  type ChangesetsFile,
  burndown,
  latestObservations,
  readChangesets,
  readObservations,
} from '../../run/changesets.js';
import { followUpWaiting, followUpWaitingLine } from '../../run/follow-up-record.js';
import type { RunState } from '../../run/run-fold.js';
import { formatDateTime } from '../format-units.js';
import { escapeHtml } from './html-text.js';

/** A step line of merged over time (the count holds until the next merge), with its axis labels. */
function burndownSvg(points: { ts: number; merged: number }[], total: number): string {
  if (points.length === 0 || total === 0)
    return '<p class="muted">No merges observed yet: <code>orchestrate status &lt;run&gt;</code> records them.</p>';
  const w = 480;
  const h = 140;
  const pad = 30;
  const t0 = points[0]!.ts;
  const t1 = Math.max(points.at(-1)!.ts, t0 + 1);
  const x = (ts: number) => pad + ((ts - t0) / (t1 - t0)) * (w - 2 * pad);
  const y = (m: number) => h - pad - (m / total) * (h - 2 * pad);
  let d = `M${x(t0).toFixed(1)},${y(0).toFixed(1)}`;
  for (const p of points) d += ` H${x(p.ts).toFixed(1)} V${y(p.merged).toFixed(1)}`;
  const last = points.at(-1)!;
  return `<svg class="burndown" width="${w}" height="${h}" viewBox="0 0 ${w} ${h}" role="img" aria-label="merged pull requests over time: ${last.merged} of ${total}">
<line x1="${pad}" y1="${h - pad}" x2="${w - pad}" y2="${h - pad}" stroke="#999"/><line x1="${pad}" y1="${pad}" x2="${pad}" y2="${h - pad}" stroke="#999"/>
<path d="${d}" fill="none" stroke="#2a7" stroke-width="2"/>
<text x="${pad}" y="${h - 8}" font-size="10">${escapeHtml(formatDateTime(t0))}</text>
<text x="${w - pad}" y="${h - 8}" font-size="10" text-anchor="end">${escapeHtml(formatDateTime(t1))}</text>
<text x="4" y="${pad + 4}" font-size="10">${total}</text><text x="4" y="${h - pad}" font-size="10">0</text>
</svg>`;
}

function cell(o: ChangesetObservation | undefined, field: 'checks' | 'review' | 'mergeable'): string {
  return escapeHtml(o?.[field] ?? '–');
}

/** Each changeset's follow-up round waiting at its gate, with the command that answers it (none: empty). */
function waitingRounds(file: ChangesetsFile, state: Pick<RunState, 'runId' | 'instances'> | undefined): string {
  const items = (state ? file.changesets : []).flatMap((c) => {
    const w = followUpWaiting(state!, c);
    return w
      ? [
          `<li><b>${escapeHtml(c.key)}</b>: ${escapeHtml(followUpWaitingLine(w))}<br><span class="muted">${escapeHtml(w.prompt)}</span></li>`,
        ]
      : [];
  });
  return items.length
    ? `<h3>Follow-up rounds waiting for approval</h3><ul class="controls">${items.join('')}</ul>`
    : '';
}

export function changesetsSection(runDir: string, state?: Pick<RunState, 'runId' | 'instances'>): string {
  let file: ChangesetsFile | undefined;
  try {
    file = readChangesets(runDir);
  } catch {
    return '<section><h2>Changesets</h2><p class="error">changesets.json cannot be read.</p></section>\n';
  }
  if (!file) return '';
  const obs = readObservations(runDir);
  const latest = latestObservations(obs);
  const rows = file.changesets.map((c) => {
    const o = latest.get(c.key);
    const state = o?.state ?? (c.state === 'published' && c.forge === 'git' ? 'pushed' : c.state);
    const pr = c.pr ? `<a href="${escapeHtml(c.pr.url)}">#${c.pr.number}</a>` : '–';
    return `<tr><td>${escapeHtml(c.key)}</td><td>${escapeHtml(c.repo)}</td><td><code>${escapeHtml(c.branch)}</code></td><td>${escapeHtml(c.title)}</td><td>${c.diffstat.files} files +${c.diffstat.insertions} −${c.diffstat.deletions}</td><td>${escapeHtml(state)}</td><td>${pr}</td><td>${cell(o, 'checks')}</td><td>${cell(o, 'review')}</td><td>${cell(o, 'mergeable')}</td></tr>`;
  });
  const merged = [...latest.values()].filter((o) => o.state === 'merged').length;
  return `<section><h2>Changesets <span class="muted">(${merged} of ${file.changesets.length} merged)</span></h2><div class="scroll"><table class="changesets"><thead><tr><th>Changeset</th><th>Repository</th><th>Branch</th><th>Title</th><th>Change</th><th>State</th><th>Pull request</th><th>Checks</th><th>Review</th><th>Mergeable</th></tr></thead><tbody>${rows.join('')}</tbody></table></div>${waitingRounds(file, state)}
<h3>Burndown</h3>${burndownSvg(burndown(obs, file.changesets.length), file.changesets.length)}</section>\n`;
}
