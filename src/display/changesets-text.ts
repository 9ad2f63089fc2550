// A campaign's changesets as text: the preview `orchestrate publish <run>` prints (what would be
// pushed and opened), the table of `orchestrate status <run>` (each pull request's state, checks,
// review, mergeable), and the burndown line (merged over time, and how many stand where) the run view shows.
import { join } from 'node:path';
import {
  type Changeset,
  type ChangesetObservation,
  type ChangesetsFile,
  burndown,
  latestObservations,
  progressLine,
  readChangesets,
  readObservations,
} from '../run/changesets.js';
import { type FollowUpWaiting, followUpWaiting, followUpWaitingLine } from '../run/follow-up-record.js';
import { type RunState, foldEvents } from '../run/run-fold.js';
import { RUN_LOG, readRunLog } from '../run/run-store.js';

function stat(c: Changeset): string {
  return `${c.diffstat.files} file${c.diffstat.files === 1 ? '' : 's'} +${c.diffstat.insertions} -${c.diffstat.deletions}`;
}

/** The preview: one block per changeset (repository, branch, title, body's first lines, state). */
export function formatChangesetPreview(changesets: readonly Changeset[]): string {
  if (!changesets.length) return 'No changesets: no instance with a publish: block changed a repository.\n';
  const out: string[] = [];
  for (const c of changesets) {
    const where = c.forge === 'git' ? c.remote : `${c.forge} ${c.repository ?? c.remote}`;
    out.push(`${c.key}  [${c.state}${c.pr ? ` ${c.pr.url}` : ''}]`);
    out.push(`  repo     ${c.repo}  (${stat(c)})`);
    out.push(`  branch   ${c.branch} -> ${c.base} on ${where}${c.forge !== 'git' && c.draft ? ' (draft)' : ''}`);
    out.push(`  title    ${c.title}`);
    const body = c.body.trim().split('\n');
    for (const line of body.slice(0, 6)) out.push(`  |  ${line}`);
    if (body.length > 6) out.push(`  |  ... ${body.length - 6} more lines`);
    if (c.labels.length) out.push(`  labels   ${c.labels.join(', ')}`);
    if (c.reviewers.length) out.push(`  review   ${c.reviewers.join(', ')}`);
    if (c.error) out.push(`  error    ${c.error}`);
    out.push('');
  }
  return `${out.join('\n')}`;
}

export interface StatusRow {
  key: string;
  repo: string;
  branch?: string;
  /** "1 file +2 -1" */
  diffstat?: string;
  state: string;
  url?: string;
  checks?: string;
  review?: string;
  mergeable?: string;
  /** Failing checks' names; review comments not answered yet; the forge's auto-merge is on. */
  failing?: string[];
  unanswered?: number;
  autoMerge?: boolean;
  /** A follow-up round waiting at its gate (follow_up.approve). */
  followUpWaiting?: FollowUpWaiting;
  error?: string;
}

function pad(s: string, n: number): string {
  return s.length >= n ? s : s + ' '.repeat(n - s.length);
}

/** The status table, then the burndown's current figures. */
export function formatChangesetStatus(rows: readonly StatusRow[], merged: number): string {
  if (!rows.length) return 'No changesets in this run (it has no publish: block, or nothing changed).\n';
  const head = ['CHANGESET', 'STATE', 'CHECKS', 'REVIEW', 'MERGEABLE', 'PULL REQUEST'];
  const cells = rows.map((r) => [
    r.key,
    r.state,
    r.failing?.length ? `${r.checks ?? 'failing'}: ${r.failing.join(', ')}` : (r.checks ?? '-'),
    r.unanswered ? `${r.review ?? '-'}, ${r.unanswered} unanswered` : (r.review ?? '-'),
    r.mergeable ?? '-',
    r.error
      ? `${r.url ?? ''} (${r.error})`.trim()
      : `${r.url ?? '-'}${r.autoMerge && r.state !== 'merged' ? ' (auto-merge on)' : ''}`,
  ]);
  const widths = head.map((h, i) => Math.max(h.length, ...cells.map((c) => c[i]!.length)));
  const line = (c: string[]) =>
    c
      .map((x, i) => (i === c.length - 1 ? x : pad(x, widths[i]!)))
      .join('  ')
      .trimEnd();
  return `${[line(head), ...cells.map(line)].join('\n')}\n${followUpWaitingText(rows)}\n${burndownLine(rows.length, merged)}\n${progressLine(rows)}\n`;
}

/** Under the table: each changeset whose follow-up round waits at its gate, how to answer it, and its prompt. */
function followUpWaitingText(rows: readonly StatusRow[]): string {
  const out: string[] = [];
  for (const r of rows) {
    if (!r.followUpWaiting) continue;
    out.push(`${r.key}: ${followUpWaitingLine(r.followUpWaiting)}`, `  ${r.followUpWaiting.prompt}`);
  }
  return out.length ? `\n${out.join('\n')}\n` : '';
}

/**
 * Merged over time as a one-line sparkline: the time from the first observation to `now` cut into
 * `width` slices, each showing how many were merged by its end. Unicode blocks on a terminal,
 * ASCII (_.-=#) otherwise. Empty before the first observation.
 */
export function burndownSparkline(
  obs: readonly ChangesetObservation[],
  total: number,
  now: number,
  opts: { unicode: boolean; width?: number },
): string {
  const points = burndown(obs, total);
  const first = obs[0]?.ts;
  if (first === undefined || total === 0) return '';
  const width = Math.max(1, opts.width ?? 20);
  const levels = opts.unicode ? '▁▂▃▄▅▆▇█' : '_.-=#';
  const span = Math.max(1, now - first);
  let out = '';
  let at = 0;
  let merged = 0;
  for (let i = 1; i <= width; i++) {
    const end = first + (span * i) / width;
    while (at < points.length && points[at]!.ts <= end) merged = points[at++]!.merged;
    out += levels[Math.round((merged / total) * (levels.length - 1))];
  }
  return out;
}

export function burndownLine(total: number, merged: number): string {
  const width = 20;
  const done = total ? Math.round((merged / total) * width) : 0;
  return `burndown: ${merged}/${total} merged [${'#'.repeat(done)}${'.'.repeat(width - done)}]`;
}

/** Merged count now (the latest observation of each changeset). */
export function mergedCount(obs: readonly ChangesetObservation[]): number {
  return [...latestObservations(obs).values()].filter((o) => o.state === 'merged').length;
}

export { burndown };

/**
 * The changesets block of `orchestrate show` (empty without changesets.json): each changeset's
 * last observed state from changesets-status.jsonl (nothing is asked of a forge here), then the burndown.
 */
export function changesetsBlock(runDir: string, state?: RunState): string[] {
  let file: ReturnType<typeof readChangesets>;
  try {
    file = readChangesets(runDir);
  } catch (err) {
    return [`changesets: ${err instanceof Error ? err.message : String(err)}`];
  }
  if (!file) return [];
  const obs = readObservations(runDir);
  const rows = changesetRows(file, obs, state ?? foldEvents(readRunLog(join(runDir, RUN_LOG)).events));
  return [
    `changesets (${file.changesets.length}; orchestrate status <run> asks the forge)`,
    ...formatChangesetStatus(rows, mergedCount(obs)).trimEnd().split('\n'),
    '',
  ];
}

/** Each changeset with its last observed state (changesets-status.jsonl); nothing is asked of a forge. */
export function changesetRows(
  file: ChangesetsFile,
  obs: readonly ChangesetObservation[],
  /** The run's fold: a follow-up round waiting at its gate is named (absent: none is looked for). */
  state?: Pick<RunState, 'runId' | 'instances'>,
): StatusRow[] {
  const latest = latestObservations(obs);
  return file.changesets.map((c) => {
    const o = latest.get(c.key);
    return {
      key: c.key,
      repo: c.repo,
      branch: c.branch,
      diffstat: stat(c),
      state: o?.state ?? (c.state === 'published' && c.forge === 'git' ? 'pushed' : c.state),
      ...(c.pr ? { url: c.pr.url } : {}),
      ...(o?.checks ? { checks: o.checks } : {}),
      ...(o?.review ? { review: o.review } : {}),
      ...(o?.mergeable ? { mergeable: o.mergeable } : {}),
      ...(o?.failing?.length ? { failing: o.failing } : {}),
      ...(o?.unanswered ? { unanswered: o.unanswered } : {}),
      ...(o?.autoMerge ? { autoMerge: true } : {}),
      ...withWaiting(state, c),
    };
  });
}

function withWaiting(
  state: Pick<RunState, 'runId' | 'instances'> | undefined,
  c: { task: string; instance: string },
): { followUpWaiting?: FollowUpWaiting } {
  const w = state ? followUpWaiting(state, c) : undefined;
  return w ? { followUpWaiting: w } : {};
}
