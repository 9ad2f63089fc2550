// `orchestrate status <run>`: how each changeset's pull request stands now (open, draft, merged,
// closed; checks; review; mergeable or needs a rebase), asked of its forge. Each look is appended
// to changesets-status.jsonl with its time, which is what the burndown (merged over time) of
// report.html and the run view is drawn from. A git-forge changeset (no pull request) shows as
// pushed until the commit orchestrate pushed is reachable from its base branch on the remote
// (fetched by the product's network git, which reads no repository config): then it is merged.
import { resolve } from 'node:path';
import {
  type Changeset,
  type ChangesetObservation,
  type ChangesetsFile,
  appendObservations,
  readChangesets,
} from '../run/changesets.js';
import { foldEvents } from '../run/run-fold.js';
import { runRootOf } from '../run/run-paths.js';
import { readRunLog } from '../run/run-store.js';
import { type RemoteUrls, recordedRemotes } from '../orchestrator/workspace/repo-remotes.js';
import { mergedInto, resolveRemote } from './branch-push.js';
import { type Forge, ForgeError, forgeToken, withoutSecrets } from './forge.js';
import { githubForge } from './github-forge.js';
import { gitlabForge } from './gitlab-forge.js';

export interface TrackedChangeset extends ChangesetObservation {
  repo: string;
  branch: string;
  title: string;
  /** Why the forge could not be asked (no token, an API error). */
  error?: string;
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
  for (const c of file.changesets) {
    const base = { key: c.key, repo: c.repo, branch: c.branch, title: c.title };
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
      rows.push(
        merged.ok
          ? { ...base, ts: now(), state: merged.merged ? 'merged' : 'pushed' }
          : { ...base, ts: now(), state: 'pushed', error: merged.error },
      );
      continue;
    }
    if (!c.pr) {
      const state =
        c.state === 'published' && c.forge === 'git' ? 'pushed' : c.state === 'closed' ? 'closed' : 'unpublished';
      rows.push({ ...base, ts: now(), state });
      continue;
    }
    const id = `${c.forge} ${c.baseUrl ?? ''}`;
    let access = forges.get(id);
    if (!access) {
      const token = c.forge === 'git' ? undefined : forgeToken(c.forge, env);
      access = !token
        ? { error: `no ${c.forge === 'github' ? 'GitHub' : 'GitLab'} token (GITHUB_TOKEN / GITLAB_TOKEN)` }
        : {
            token,
            forge:
              c.forge === 'github'
                ? githubForge({ token, ...(c.baseUrl ? { baseUrl: c.baseUrl } : {}) })
                : gitlabForge({ token, ...(c.baseUrl ? { baseUrl: c.baseUrl } : {}) }),
          };
      forges.set(id, access);
    }
    if (!access.forge || !c.repository) {
      rows.push({ ...base, ts: now(), state: 'open', url: c.pr.url, error: access.error ?? 'no repository recorded' });
      continue;
    }
    try {
      const s = await access.forge.status(c.repository, c.pr.number);
      rows.push({ ...base, ts: now(), ...s });
    } catch (err) {
      const message = err instanceof ForgeError || err instanceof Error ? err.message : String(err);
      rows.push({ ...base, ts: now(), state: 'open', url: c.pr.url, error: withoutSecrets(message, [access.token]) });
    }
  }
  // Only what the forge said is an observation (a failed look records nothing).
  appendObservations(
    runDir,
    rows.filter((r) => !r.error).map(({ repo: _r, branch: _b, title: _t, error: _e, ...o }) => o),
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
): Promise<{ ok: true; merged: boolean; warning?: string } | { ok: false; error: string }> {
  try {
    const remote = await resolveRemote(repo, c.remote, root, 'git', undefined, env, recorded);
    if (!remote.ok) return remote;
    const merged = await mergedInto(repo, remote, c.base, c.pushedCommit, [c.baseCommit, c.pushedCommit]);
    return merged.ok && remote.warning ? { ...merged, warning: remote.warning } : merged;
  } catch (err) {
    return { ok: false, error: err instanceof Error ? err.message : String(err) };
  }
}
