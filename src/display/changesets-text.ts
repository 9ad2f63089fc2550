// A campaign's changesets as text: the preview `orchestrate publish <run>` prints (what would be
// pushed and opened), the table of `orchestrate status <run>` (each pull request's state, checks,
// review, mergeable), and the burndown line (merged over time) the run view shows.
import {
  type Changeset,
  type ChangesetObservation,
  burndown,
  latestObservations,
  readChangesets,
  readObservations,
} from '../run/changesets.js';

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
  state: string;
  url?: string;
  checks?: string;
  review?: string;
  mergeable?: string;
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
    r.checks ?? '-',
    r.review ?? '-',
    r.mergeable ?? '-',
    r.error ? `${r.url ?? ''} (${r.error})`.trim() : (r.url ?? '-'),
  ]);
  const widths = head.map((h, i) => Math.max(h.length, ...cells.map((c) => c[i]!.length)));
  const line = (c: string[]) =>
    c
      .map((x, i) => (i === c.length - 1 ? x : pad(x, widths[i]!)))
      .join('  ')
      .trimEnd();
  return `${[line(head), ...cells.map(line)].join('\n')}\n\n${burndownLine(rows.length, merged)}\n`;
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
export function changesetsBlock(runDir: string): string[] {
  let file: ReturnType<typeof readChangesets>;
  try {
    file = readChangesets(runDir);
  } catch (err) {
    return [`changesets: ${err instanceof Error ? err.message : String(err)}`];
  }
  if (!file) return [];
  const obs = readObservations(runDir);
  const latest = latestObservations(obs);
  const rows: StatusRow[] = file.changesets.map((c) => {
    const o = latest.get(c.key);
    return {
      key: c.key,
      repo: c.repo,
      state: o?.state ?? (c.state === 'published' && c.forge === 'git' ? 'pushed' : c.state),
      ...(c.pr ? { url: c.pr.url } : {}),
      ...(o?.checks ? { checks: o.checks } : {}),
      ...(o?.review ? { review: o.review } : {}),
      ...(o?.mergeable ? { mergeable: o.mergeable } : {}),
    };
  });
  return [
    `changesets (${file.changesets.length}; orchestrate status <run> asks the forge)`,
    ...formatChangesetStatus(rows, mergedCount(obs)).trimEnd().split('\n'),
    '',
  ];
}
