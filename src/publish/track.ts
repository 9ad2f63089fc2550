// `orchestrate status <run>`: how each changeset's pull request stands now (open, draft, merged,
// closed; checks and which fail; review and unanswered comments; mergeable or needs a rebase;
// auto-merge), asked of its forge, as one ChangesetStatus each. Each look is appended
// to changesets-status.jsonl with its time, which is what the burndown (merged over time) of
// report.html and the run view is drawn from. A git-forge changeset (no pull request) shows as
// pushed until the commit orchestrate pushed is reachable from its base branch on the remote
// (fetched by the product's network git, which reads no repository config): then it is merged.
import { resolve } from 'node:path';
import {
  type Changeset,
  type ChangesetObservation,
  type ChangesetProgress,
  type ChangesetsFile,
  appendObservations,
  changesetProgress,
  latestObservations,
  readChangesets,
  readObservations,
} from '../run/changesets.js';
import { type FollowUpWaiting, followUpWaiting } from '../run/follow-up-record.js';
import { type RunState, foldEvents } from '../run/run-fold.js';
import { runRootOf } from '../run/run-paths.js';
import { readRunLog } from '../run/run-store.js';
import { type RemoteUrls, recordedRemotes } from '../orchestrator/workspace/repo-remotes.js';
import { mergedInto, resolveRemote } from './branch-push.js';
import { type Forge, ForgeError, forgeToken, missingTokenMessage, withoutSecrets } from './forge.js';
import { githubForge } from './github-forge.js';
import { gitlabForge } from './gitlab-forge.js';

/**
 * How one changeset stands now, as every view shows it (status, --watch, --json, the MCP server,
 * the web view): what the forge said (state, checks, review, mergeable, failing checks, unanswered
 * comments, auto-merge), where that puts it in the burndown, and the follow-up rounds it had.
 */
export interface ChangesetStatus extends ChangesetObservation {
  repo: string;
  branch: string;
  title: string;
  progress: ChangesetProgress;
  /** Follow-up rounds run for it (publish --follow-up). */
  followUps?: number;
  /** A follow-up round waiting at its gate (follow_up.approve): nothing pushed until it is answered. */
  followUpWaiting?: FollowUpWaiting;
  /** Why the forge could not be asked (no token, an API error). */
  error?: string;
}

/** The name `status --watch` and the display have used for it. */
export type TrackedChangeset = ChangesetStatus;

/** The one place a ChangesetStatus is made: a changeset and what was observed of it. */
export function changesetStatus(
  c: Pick<Changeset, 'key' | 'repo' | 'branch' | 'title' | 'followUps'>,
  o: Omit<ChangesetObservation, 'key'>,
  error?: string,
  waiting?: FollowUpWaiting,
): ChangesetStatus {
  return {
    key: c.key,
    repo: c.repo,
    branch: c.branch,
    title: c.title,
    ...o,
    progress: changesetProgress(o),
    ...(c.followUps?.length ? { followUps: c.followUps.length } : {}),
    ...(waiting ? { followUpWaiting: waiting } : {}),
    ...(error !== undefined ? { error } : {}),
  };
}

/** The run log folded, when a follow-up round's gate was ever asked in it (else no fold is paid for). */
function foldIfFollowUpGated(runDir: string): RunState | undefined {
  const { events } = readRunLog(resolve(runDir, 'run.jsonl'));
  return events.some((e) => e.type === 'approval_requested' && e.gate === 'follow_up') ? foldEvents(events) : undefined;
}

export interface TrackResult {
  file?: ChangesetsFile;
  rows: TrackedChangeset[];
  /** Lines for the user (a remote read from the repository of a run recorded without its remotes). */
  warnings?: string[];
}

export async function trackRun(
  runDir: string,
  env: Readonly<Record<string, string | undefined>>,
  now: () => number = Date.now,
): Promise<TrackResult> {
  const file = readChangesets(runDir);
  if (!file) return { rows: [] };
  const forges = new Map<string, { forge?: Forge; token?: string; error?: string }>();
  const rows: TrackedChangeset[] = [];
  let root: string | undefined;
  let fold: ReturnType<typeof foldEvents> | undefined;
  const warnings: string[] = [];
  const gated = foldIfFollowUpGated(runDir);
  // Each row with its follow-up round waiting at a gate, if one is.
  const row = (c: Changeset, o: Omit<ChangesetObservation, 'key'>, error?: string): ChangesetStatus =>
    changesetStatus(c, o, error, gated ? followUpWaiting(gated, c) : undefined);
  // A look that failed (no token, the forge down) says nothing new: the row keeps what the last
  // look saw (a merged pull request stays merged in the counts), else it is not known to be ready.
  const seen = latestObservations(readObservations(runDir));
  const notSeen = (c: Changeset, error: string, fallback: Omit<ChangesetObservation, 'key'>): ChangesetStatus => {
    const last = seen.get(c.key);
    if (!last) return row(c, fallback, error);
    const { key: _k, ...o } = last;
    return row(c, o, error);
  };
  for (const c of file.changesets) {
    if (!c.pr && c.forge === 'git' && c.state === 'published' && c.pushedCommit) {
      fold ??= foldEvents(readRunLog(resolve(runDir, 'run.jsonl')).events);
      root ??= runRootOf(runDir, fold.start) ?? runDir;
      const merged = await gitBranchMerged(
        resolve(root, c.repo),
        root,
        { ...c, pushedCommit: c.pushedCommit },
        env,
        recordedRemotes(fold, c.task, c.instance),
      );
      if (merged.ok && merged.warning) warnings.push(`${c.key}: ${merged.warning}`);
      if (merged.ok && merged.note) warnings.push(`${c.key}: ${merged.note}`);
      rows.push(
        merged.ok
          ? row(c, { ts: now(), state: merged.merged ? 'merged' : 'pushed' })
          : notSeen(c, merged.error, { ts: now(), state: 'pushed' }),
      );
      continue;
    }
    if (!c.pr) {
      const state =
        c.state === 'published' && c.forge === 'git' ? 'pushed' : c.state === 'closed' ? 'closed' : 'unpublished';
      rows.push(row(c, { ts: now(), state }));
      continue;
    }
    const id = `${c.forge} ${c.baseUrl ?? ''}`;
    let access = forges.get(id);
    if (!access) {
      const token = c.forge === 'git' ? undefined : forgeToken(c.forge, env);
      access = !token
        ? { error: missingTokenMessage(c.forge === 'github' ? 'github' : 'gitlab') }
        : {
            token,
            forge:
              c.forge === 'github'
                ? githubForge({ token, ...(c.baseUrl ? { baseUrl: c.baseUrl } : {}) })
                : gitlabForge({ token, ...(c.baseUrl ? { baseUrl: c.baseUrl } : {}) }),
          };
      forges.set(id, access);
    }
    // Checks not known: pending, so the counts never call a pull request nobody could look at ready.
    const unknown = { ts: now(), state: c.draft ? 'draft' : 'open', url: c.pr.url, checks: 'pending' } as const;
    if (!access.forge || !c.repository) {
      rows.push(notSeen(c, access.error ?? 'no repository recorded', unknown));
      continue;
    }
    try {
      const { headSha: _h, ...s } = await access.forge.status(c.repository, c.pr.number);
      rows.push(row(c, { ts: now(), ...s }));
    } catch (err) {
      const message = err instanceof ForgeError || err instanceof Error ? err.message : String(err);
      rows.push(notSeen(c, withoutSecrets(message, [access.token]), unknown));
    }
  }
  // Only what the forge said is an observation (a failed look records nothing).
  appendObservations(
    runDir,
    rows
      .filter((r) => !r.error)
      .map(
        ({ repo: _r, branch: _b, title: _t, error: _e, progress: _p, followUps: _f, followUpWaiting: _w, ...o }) => o,
      ),
  );
  return { file, rows, ...(warnings.length ? { warnings } : {}) };
}

/** Whether `pushed` is reachable from `base` on the changeset's remote (a `forge: git` changeset). */
async function gitBranchMerged(
  repo: string,
  root: string,
  c: Changeset & { pushedCommit: string },
  env: Readonly<Record<string, string | undefined>>,
  recorded: RemoteUrls | undefined,
): Promise<{ ok: true; merged: boolean; warning?: string; note?: string } | { ok: false; error: string }> {
  try {
    const remote = await resolveRemote(repo, c.remote, root, 'git', undefined, env, recorded);
    if (!remote.ok) return remote;
    const merged = await mergedInto(repo, remote, c.base, c.pushedCommit, [c.baseCommit, c.pushedCommit]);
    return merged.ok && remote.warning ? { ...merged, warning: remote.warning } : merged;
  } catch (err) {
    return { ok: false, error: err instanceof Error ? err.message : String(err) };
  }
}
