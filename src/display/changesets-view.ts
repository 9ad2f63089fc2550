// The changesets section of the run view (run-view.ts, under the instance list): each changeset of
// a campaign (key, repo, branch, state, checks, review, mergeable, diffstat, pull request) as last
// observed, and a one-line burndown (merged over time as a sparkline, and merged/total). It reads
// changesets.json (written at the run's end and by `orchestrate publish`) and changesets-status.jsonl
// (appended by `orchestrate status`, `--watch` too), never a forge. Frames stay cheap: the files
// are looked at (stat) at most every half second and read again only when their size or mtime changed.
import { statSync } from 'node:fs';
import { join } from 'node:path';
import {
  CHANGESETS_FILE,
  CHANGESET_STATUS_FILE,
  type ChangesetObservation,
  type ChangesetsFile,
  readChangesets,
  readObservations,
} from '../run/changesets.js';
import { type StatusRow, burndownLine, burndownSparkline, changesetRows, mergedCount } from './changesets-text.js';
import { followUpWaiting, followUpWaitingLine } from '../run/follow-up-record.js';
import type { RunState } from '../run/run-fold.js';
import type { FrameOptions } from './live-frame.js';
import { truncateToWidth } from './terminal-text.js';

/** How often the view looks whether the two files changed. */
const CHECK_EVERY_MS = 500;
/** Cells of the sparkline. */
const SPARK_CELLS = 20;

function signature(path: string): string {
  try {
    const st = statSync(path);
    return `${st.size}:${st.mtimeMs}`;
  } catch {
    return 'none';
  }
}

export class ChangesetsSection {
  private sig = '';
  private lastCheck = Number.NEGATIVE_INFINITY;
  private file: ChangesetsFile | undefined;
  private obs: ChangesetObservation[] = [];
  private rows: StatusRow[] = [];
  private problem: string | undefined;
  /** Times the files were read (tests: a frame with nothing changed reads nothing). */
  reads = 0;

  constructor(private readonly runDir: string) {}

  /** Reads the files again when they changed since the last look (looked at most every CHECK_EVERY_MS). */
  refresh(now: number): void {
    if (now - this.lastCheck < CHECK_EVERY_MS) return;
    this.lastCheck = now;
    const sig = `${signature(join(this.runDir, CHANGESETS_FILE))} ${signature(join(this.runDir, CHANGESET_STATUS_FILE))}`;
    if (sig === this.sig) return;
    this.sig = sig;
    this.reads++;
    try {
      this.file = readChangesets(this.runDir);
      this.obs = this.file ? readObservations(this.runDir) : [];
      this.rows = this.file ? changesetRows(this.file, this.obs) : [];
      this.problem = undefined;
    } catch (err) {
      // A half-written file cannot happen (it is renamed into place); a corrupt one is said, not thrown.
      this.file = undefined;
      this.rows = [];
      this.problem = err instanceof Error ? err.message : String(err);
    }
  }

  /**
   * The section's lines (none without changesets), at most `room` of them. With the run's fold, a
   * follow-up round waiting at its gate is named under the rows, with the command that answers it.
   */
  lines(o: FrameOptions, room: number, state?: Pick<RunState, 'runId' | 'instances'>): string[] {
    this.refresh(o.now);
    const p = o.painter;
    const cut = (s: string) => truncateToWidth(s, o.width - 1);
    if (this.problem) return room > 0 ? [cut(p.paint('red', `changesets: ${this.problem}`))] : [];
    if (!this.file || room < 1) return [];
    const total = this.rows.length;
    const merged = mergedCount(this.obs);
    const spark = burndownSparkline(this.obs, total, o.now, { unicode: true, width: SPARK_CELLS });
    const head = `${p.paint('bold', 'changesets')} ${burndownLine(total, merged).replace('burndown: ', '')}${spark ? `  ${spark}` : ''}`;
    if (total === 0 || room < 3) return [cut(head)];
    const cells = this.rows.map((r) => [
      r.key,
      r.repo,
      r.branch ?? '-',
      r.state,
      r.checks ?? '-',
      r.review ?? '-',
      r.mergeable ?? '-',
      r.diffstat ?? '-',
      r.url ?? '-',
    ]);
    const titles = ['CHANGESET', 'REPO', 'BRANCH', 'STATE', 'CHECKS', 'REVIEW', 'MERGEABLE', 'DIFF', 'PULL REQUEST'];
    const widths = titles.map((t, i) => Math.max(t.length, ...cells.map((c) => c[i]!.length)));
    const row = (c: string[]) =>
      `  ${c.map((x, i) => (i === c.length - 1 ? x : x.padEnd(widths[i]!))).join('  ')}`.trimEnd();
    const colour = (state: string, text: string) =>
      state === 'merged' ? p.paint('green', text) : state === 'closed' ? p.paint('dim', text) : text;
    const waiting = (state ? this.file.changesets : []).flatMap((c) => {
      const w = followUpWaiting(state!, c);
      return w ? [`  ${c.key}: ${followUpWaitingLine(w)}`] : [];
    });
    // Room: the heading, the titles, the rows (and a waiting round each, room kept for one row); past it the rest is counted.
    const notes = waiting.slice(0, Math.max(0, room - 3));
    const fit = Math.max(0, room - 2 - notes.length);
    const shown = cells.length > fit ? Math.max(0, fit - 1) : cells.length;
    const out = [cut(head), cut(p.paint('dim', row(titles)))];
    cells.slice(0, shown).forEach((c, i) => {
      out.push(colour(this.rows[i]!.state, cut(row(c))));
    });
    if (shown < cells.length)
      out.push(cut(p.paint('dim', `  … ${cells.length - shown} more (orchestrate status <run> lists them)`)));
    for (const n of notes) out.push(cut(p.paint('yellow', n)));
    return out;
  }
}
