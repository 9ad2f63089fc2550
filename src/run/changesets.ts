// A campaign's record in the run folder: changesets.json (one changeset per instance whose
// change a `publish:` block publishes: repository, branch, title, body, diffstat, and what was
// published of it) and changesets-status.jsonl (each observation `orchestrate status` made of a
// pull request, with its time: the burndown is read from it). The run writes changesets.json at
// its end without touching a remote; `orchestrate publish` and `status` update the two files.
// They live here, with the rest of the run record, so every view (report.html, the run view)
// reads them without the orchestrator. No token is ever part of either file.
import { appendFileSync, existsSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { z } from 'zod';

export const CHANGESETS_FILE = 'changesets.json';
export const CHANGESET_STATUS_FILE = 'changesets-status.jsonl';

/**
 * unpublished: computed, nothing pushed; published: branch pushed (and the pull request opened,
 * on a forge); closed: its pull request was closed because the change became empty; empty: the
 * change is empty now and nothing is open for it.
 */
export const ChangesetStateSchema = z.enum(['unpublished', 'published', 'closed', 'empty']);
export type ChangesetState = z.infer<typeof ChangesetStateSchema>;

export const DiffstatSchema = z.object({ files: z.number(), insertions: z.number(), deletions: z.number() });
export type Diffstat = z.infer<typeof DiffstatSchema>;

export const ChangesetSchema = z.object({
  /** The instance label ("task/key"): what --only and --rebase name. */
  key: z.string(),
  task: z.string(),
  instance: z.string(),
  forge: z.enum(['github', 'gitlab', 'git']),
  /** The repository's folder, relative to the run's root (as the run log stores it). */
  repo: z.string(),
  /** Where branches go: a URL or a remote name (never holding credentials). */
  remote: z.string(),
  /** owner/name on the forge (GitLab: the project path). */
  repository: z.string().optional(),
  baseUrl: z.string().optional(),
  branch: z.string(),
  base: z.string(),
  /** The commit the instance started from; the change's commit is made on it. */
  baseCommit: z.string(),
  /** The instance's patch in the run folder (patches/<instance>.diff). */
  patchFile: z.string(),
  title: z.string(),
  body: z.string(),
  commitMessage: z.string(),
  draft: z.boolean(),
  labels: z.array(z.string()),
  reviewers: z.array(z.string()),
  diffstat: DiffstatSchema,
  /** The instance's summary (the context of a --rebase re-run). */
  summary: z.string().optional(),
  /** When the instance finished: the commit's date, so the same change makes the same commit. */
  doneTs: z.number(),
  state: ChangesetStateSchema,
  /** The commit last pushed to `branch` by orchestrate. */
  pushedCommit: z.string().optional(),
  /** The pull/merge request, once opened. */
  pr: z.object({ number: z.number(), url: z.string() }).optional(),
  publishedAt: z.number().optional(),
  /** `publish --rebase`: each time the change was redone on a newer base (when, from which commit, onto which). */
  rebases: z
    .array(z.object({ at: z.number(), base: z.string(), fromCommit: z.string(), baseCommit: z.string() }))
    .optional(),
  /**
   * `publish --follow-up`: each round that gave the branch a new commit on top of the last one
   * (a CI failure or review comments sent back to the agent), in order, from the run log.
   */
  followUps: z
    .array(
      z.object({
        round: z.number(),
        reason: z.enum(['ci_failed', 'changes_requested']),
        evidence: z.string(),
        /** When the round's change was made: its commit's date (the same round makes the same commit). */
        at: z.number(),
        /** The round's own change (relative to the run folder), applied on the commit before it. */
        patchFile: z.string(),
        /** The round's commit, once pushed. */
        commit: z.string().optional(),
      }),
    )
    .optional(),
  /** Why the last apply of this changeset failed (refused push, forge error). */
  error: z.string().optional(),
});
export type Changeset = z.infer<typeof ChangesetSchema>;

export const ChangesetsFileSchema = z.object({
  version: z.literal(1),
  runId: z.string(),
  updatedAt: z.number(),
  changesets: z.array(ChangesetSchema),
});
export type ChangesetsFile = z.infer<typeof ChangesetsFileSchema>;

/** One look at a changeset's pull request (orchestrate status). */
export const ChangesetObservationSchema = z.object({
  ts: z.number(),
  key: z.string(),
  /** open, draft, merged, closed; pushed for a git forge's branch; unpublished before --apply. */
  state: z.enum(['unpublished', 'pushed', 'open', 'draft', 'merged', 'closed']),
  url: z.string().optional(),
  checks: z.enum(['passing', 'failing', 'pending', 'none']).optional(),
  review: z.enum(['approved', 'changes_requested', 'review_required', 'none']).optional(),
  mergeable: z.enum(['mergeable', 'needs_rebase', 'unknown']).optional(),
  /** Names of the failing checks, statuses or jobs. */
  failing: z.array(z.string()).optional(),
  /** Review comments no reply of orchestrate answers yet. */
  unanswered: z.number().optional(),
  /** The forge's auto-merge is on. */
  autoMerge: z.boolean().optional(),
});
export type ChangesetObservation = z.infer<typeof ChangesetObservationSchema>;

/** The run's changesets, or undefined when it has none (no publish: block). Throws on a corrupt file. */
export function readChangesets(runDir: string): ChangesetsFile | undefined {
  const path = join(runDir, CHANGESETS_FILE);
  if (!existsSync(path)) return undefined;
  const parsed = ChangesetsFileSchema.safeParse(JSON.parse(readFileSync(path, 'utf8')));
  if (!parsed.success) throw new Error(`${path} is not a changesets file: ${parsed.error.issues[0]?.message ?? ''}`);
  return parsed.data;
}

/** Writes changesets.json whole (a temporary file renamed over it: a reader never sees half of it). */
export function writeChangesets(runDir: string, file: ChangesetsFile): void {
  const path = join(runDir, CHANGESETS_FILE);
  const tmp = `${path}.${process.pid}.tmp`;
  writeFileSync(tmp, `${JSON.stringify(file, null, 2)}\n`, { mode: 0o600 });
  renameSync(tmp, path);
}

export function appendObservations(runDir: string, obs: readonly ChangesetObservation[]): void {
  if (obs.length)
    appendFileSync(join(runDir, CHANGESET_STATUS_FILE), obs.map((o) => `${JSON.stringify(o)}\n`).join(''));
}

/** Every observation recorded, oldest first (unreadable lines skipped). */
export function readObservations(runDir: string): ChangesetObservation[] {
  const path = join(runDir, CHANGESET_STATUS_FILE);
  if (!existsSync(path)) return [];
  const out: ChangesetObservation[] = [];
  for (const line of readFileSync(path, 'utf8').split('\n')) {
    if (!line.trim()) continue;
    try {
      const p = ChangesetObservationSchema.safeParse(JSON.parse(line));
      if (p.success) out.push(p.data);
    } catch {
      // a line cut off by a kill: the next status call writes whole ones again
    }
  }
  return out;
}

/** The burndown: merged changesets over time, one point each time the count grew (first merged sighting per key). */
export function burndown(
  obs: readonly ChangesetObservation[],
  total: number,
): { ts: number; merged: number; open: number }[] {
  const mergedAt = new Map<string, number>();
  for (const o of obs) if (o.state === 'merged' && !mergedAt.has(o.key)) mergedAt.set(o.key, o.ts);
  const times = [...mergedAt.values()].sort((a, b) => a - b);
  const first = obs[0]?.ts;
  const points =
    first !== undefined && (times[0] === undefined || first < times[0]) ? [{ ts: first, merged: 0, open: total }] : [];
  for (const [i, ts] of times.entries()) points.push({ ts, merged: i + 1, open: total - (i + 1) });
  return points;
}

/**
 * Where a changeset stands in a campaign, for the burndown: merged; closed; ci_failing; changes_requested;
 * ready (open, not a draft, checks passing or none, mergeable, approved or no review asked); pending
 * (anything else: CI running, a review awaited, a draft, not published yet).
 */
export type ChangesetProgress = 'merged' | 'closed' | 'ready' | 'ci_failing' | 'changes_requested' | 'pending';

/** What changesetProgress reads (an observation, or a row of a view with the same fields as text). */
export interface ProgressFields {
  state: string;
  checks?: string;
  review?: string;
  mergeable?: string;
}

export function changesetProgress(o: ProgressFields): ChangesetProgress {
  if (o.state === 'merged' || o.state === 'closed') return o.state;
  if (o.checks === 'failing') return 'ci_failing';
  if (o.review === 'changes_requested') return 'changes_requested';
  const open = o.state === 'open' || o.state === 'pushed';
  const checksOk = o.checks === undefined || o.checks === 'passing' || o.checks === 'none';
  const reviewOk = o.review === undefined || o.review === 'approved' || o.review === 'none';
  return open && checksOk && reviewOk && o.mergeable !== 'needs_rebase' ? 'ready' : 'pending';
}

/** How many changesets stand where (every kind present, zero or not). */
export function progressCounts(rows: readonly ProgressFields[]): Record<ChangesetProgress, number> {
  const counts = { merged: 0, ready: 0, ci_failing: 0, changes_requested: 0, pending: 0, closed: 0 };
  for (const r of rows) counts[changesetProgress(r)]++;
  return counts;
}

/** The burndown's counts as one line: "merged 1 · ready 2 · CI failing 1 · changes requested 0 · pending 0". */
export function progressLine(rows: readonly ProgressFields[]): string {
  const n = progressCounts(rows);
  const closed = n.closed ? ` · closed ${n.closed}` : '';
  return `merged ${n.merged} · ready ${n.ready} · CI failing ${n.ci_failing} · changes requested ${n.changes_requested} · pending ${n.pending}${closed}`;
}

/** The latest observation of each key. */
export function latestObservations(obs: readonly ChangesetObservation[]): Map<string, ChangesetObservation> {
  const m = new Map<string, ChangesetObservation>();
  for (const o of obs) m.set(o.key, o);
  return m;
}
