// `orchestrate publish <run>`: the run's changesets re-rendered with the recipe as it is now (the
// preview), and with --apply each one published: its commit pushed to its branch, then its pull
// or merge request opened, or updated in place when the title, body, labels or reviewers differ.
// Applying again with nothing changed makes no request that changes anything (the commit is the
// same, the pull request already says what it should). A change that became empty closes its
// pull request with --close-empty. changesets.json is rewritten after each changeset, so a kill
// keeps what was published; the token never reaches it, the output or the run log.
import { existsSync, readFileSync } from 'node:fs';
import { basename, resolve } from 'node:path';
import type { LoadedRecipe } from '../recipe/index.js';
import {
  type Changeset,
  type ChangesetsFile,
  latestObservations,
  readObservations,
  writeChangesets,
} from '../run/changesets.js';
import { foldEvents } from '../run/run-fold.js';
import { runRootOf } from '../run/run-paths.js';
import { readRunLog } from '../run/run-store.js';
import { type PushAuth, changeCommit, pushBranch, resolveRemote } from './branch-push.js';
import { replanChangesets } from './changeset-plan.js';
import { chainHead } from './follow-up-commits.js';
import {
  type Forge,
  ForgeError,
  forgeToken,
  missingTokenMessage,
  gitHost,
  pushAuthHeader,
  repositoryFromUrl,
  withoutSecrets,
} from './forge.js';
import { githubForge } from './github-forge.js';
import { recordedRemotes, type RemoteUrls } from '../orchestrator/workspace/repo-remotes.js';
import { publishGateRefusal } from './publish-gate-rules.js';
import { gitlabForge } from './gitlab-forge.js';

export interface PublishOptions {
  runDir: string;
  /** The recipe as it is now (its publish: templates render the changesets). */
  recipe: LoadedRecipe;
  apply: boolean;
  /** Changeset keys (task/key, the instance key, or a unique prefix) to publish; default all. */
  only?: readonly string[];
  closeEmpty?: boolean;
  env: Readonly<Record<string, string | undefined>>;
  /** Progress lines (rate-limit waits, what each changeset did). */
  say?: (line: string) => void;
}

export type ChangesetOutcome =
  | 'unchanged'
  | 'pushed'
  | 'opened'
  | 'updated'
  | 'closed'
  | 'empty'
  | 'refused'
  | 'failed'
  | 'preview';

export interface ChangesetResult {
  key: string;
  outcome: ChangesetOutcome;
  /** What was done or why not. */
  detail?: string;
}

export interface PublishResult {
  file: ChangesetsFile;
  results: ChangesetResult[];
  /** Changesets the recipe's templates could not render, and keys of --only that match none (as text). */
  problems: string[];
  /** The --only keys that select no single changeset, as data (their text is in `problems`). */
  unmatched: UnmatchedKey[];
}

/** A key of --only that selects no single changeset: `matches` is empty (unknown) or holds several (ambiguous). */
export interface UnmatchedKey {
  want: string;
  matches: string[];
}

/** What the user reads about an unmatched key. */
export function unmatchedText(u: UnmatchedKey): string {
  return u.matches.length ? `"${u.want}" matches ${u.matches.join(', ')}` : `no changeset "${u.want}"`;
}

/** The changesets `only` selects: a key, an instance key, or a unique prefix of a key. */
export function selectChangesets(
  all: readonly Changeset[],
  only: readonly string[] | undefined,
): { selected: Changeset[]; unknown: UnmatchedKey[] } {
  if (!only?.length) return { selected: [...all], unknown: [] };
  const selected = new Set<Changeset>();
  const unknown: UnmatchedKey[] = [];
  for (const want of only) {
    const exact = all.filter((c) => c.key === want || c.instance === want);
    const found = exact.length ? exact : all.filter((c) => c.key.startsWith(want));
    if (found.length === 1) selected.add(found[0]!);
    else unknown.push({ want, matches: found.map((c) => c.key) });
  }
  return { selected: all.filter((c) => selected.has(c)), unknown };
}

export interface ForgeAccess {
  forge?: Forge;
  auth?: PushAuth;
  token?: string;
}

/** The forge client and push auth of a changeset, made once per forge and base URL. */
export function forgeAccess(
  c: Changeset,
  env: PublishOptions['env'],
  cache: Map<string, ForgeAccess>,
  say?: (line: string) => void,
): ForgeAccess {
  if (c.forge === 'git') return {};
  const id = `${c.forge} ${c.baseUrl ?? ''}`;
  const had = cache.get(id);
  if (had) return had;
  const token = forgeToken(c.forge, env);
  if (!token) throw new ForgeError(missingTokenMessage(c.forge));
  const onWait = (m: string) => say?.(m);
  const access: ForgeAccess = {
    forge:
      c.forge === 'github'
        ? githubForge({ token, ...(c.baseUrl ? { baseUrl: c.baseUrl } : {}), onWait })
        : gitlabForge({ token, ...(c.baseUrl ? { baseUrl: c.baseUrl } : {}), onWait }),
    auth: { host: gitHost(c.forge, c.baseUrl), header: pushAuthHeader(c.forge, token) },
    token,
  };
  cache.set(id, access);
  return access;
}

/** The repository folder of a changeset (the run's root + its relative path). */
export function repoDirOf(runDir: string, c: Changeset): string {
  const state = foldEvents(readRunLog(resolve(runDir, 'run.jsonl')).events);
  return resolve(runRootOf(runDir, state.start) ?? runDir, c.repo);
}

export async function publishRun(opts: PublishOptions): Promise<PublishResult> {
  const plan = replanChangesets(opts.runDir, opts.recipe);
  const file = plan.file;
  const { selected, unknown } = selectChangesets(file.changesets, opts.only);
  const problems = [...plan.problems, ...unknown.map(unmatchedText)];
  const unmatched = unknown;
  writeChangesets(opts.runDir, file);
  if (!opts.apply || unknown.length) {
    return { file, results: selected.map((c) => ({ key: c.key, outcome: 'preview' })), problems, unmatched };
  }
  const fold = foldEvents(readRunLog(resolve(opts.runDir, 'run.jsonl')).events);
  // A publish gate (publish.approve) holds them back until someone approves it.
  const refusal = publishGateRefusal(
    opts.recipe,
    fold,
    selected.map((c) => c.task),
  );
  if (refusal) return { file, results: [], problems: [...problems, refusal], unmatched };
  const root = runRootOf(opts.runDir, fold.start);
  const cache = new Map<string, ForgeAccess>();
  const results: ChangesetResult[] = [];
  for (const c of selected) {
    let access: ForgeAccess = {};
    try {
      access = forgeAccess(c, opts.env, cache, opts.say);
      const r = await publishOne(c, root ?? opts.runDir, opts, access, recordedRemotes(fold, c.task, c.instance));
      results.push(r);
      if (r.outcome === 'refused' || r.outcome === 'failed') c.error = r.detail;
      else delete c.error;
    } catch (err) {
      const secrets = [access.token, access.auth?.header];
      const detail = withoutSecrets(err instanceof Error ? err.message : String(err), secrets);
      c.error = detail;
      results.push({ key: c.key, outcome: 'failed', detail });
    }
    file.updatedAt = Date.now();
    writeChangesets(opts.runDir, file);
  }
  return { file, results, problems, unmatched };
}

async function publishOne(
  c: Changeset,
  root: string,
  opts: PublishOptions,
  access: ForgeAccess,
  recorded: RemoteUrls | undefined,
): Promise<ChangesetResult> {
  const repo = resolve(root, c.repo);
  const patchPath = resolve(opts.runDir, c.patchFile);
  const patch = existsSync(patchPath) ? readFileSync(patchPath, 'utf8') : '';
  const commit = await changeCommit({
    repo,
    baseCommit: c.baseCommit,
    patch,
    message: c.commitMessage,
    whenMs: c.doneTs,
    ref: `refs/orchestrate/publish/${c.branch}`,
    rebaseCommand: `orchestrate publish ${basename(opts.runDir)} --rebase ${c.key}`,
  });
  if (!commit.ok) return { key: c.key, outcome: 'failed', detail: commit.error };
  const { forge } = access;
  const repository = c.repository;

  if (commit.empty) {
    if (!c.pr || !forge) {
      if (c.state === 'unpublished') c.state = 'empty';
      return { key: c.key, outcome: 'empty', detail: 'the change is empty: nothing to publish' };
    }
    const pr = await forge.get(repository!, c.pr.number);
    if (pr.state !== 'open')
      return { key: c.key, outcome: 'unchanged', detail: `the change is empty; #${pr.number} is ${pr.state}` };
    if (!opts.closeEmpty)
      return {
        key: c.key,
        outcome: 'empty',
        detail: `the change is empty but ${pr.url} is open: --close-empty closes it`,
      };
    await forge.close(repository!, pr.number);
    c.state = 'closed';
    return { key: c.key, outcome: 'closed', detail: `closed ${pr.url}: the change is empty` };
  }

  // Follow-up rounds' commits go on top of the change's (follow-up-commits.ts): the same head again.
  const head = await chainHead({ repo, runDir: opts.runDir, changeCommit: commit.commit, changeset: c });
  if (!head.ok) return { key: c.key, outcome: 'failed', detail: head.error };
  const remote = await resolveRemote(repo, c.remote, root, c.forge, c.baseUrl, opts.env, recorded);
  if (!remote.ok) return { key: c.key, outcome: 'failed', detail: remote.error };
  if (remote.warning) opts.say?.(`${c.key}: ${remote.warning}`);
  // A merged or closed pull request is left as it is, its branch too: pushing first would bring
  // back a branch the forge deleted after the merge.
  const known = c.pr && forge && repository ? await forge.get(repository, c.pr.number) : undefined;
  if (known && known.state !== 'open')
    return { key: c.key, outcome: 'unchanged', detail: `${known.url} is ${known.state}; not reopened` };
  // forge: git has no pull request to ask: what `orchestrate status` last saw says it was merged.
  if (!forge && latestObservations(readObservations(opts.runDir)).get(c.key)?.state === 'merged')
    return {
      key: c.key,
      outcome: 'unchanged',
      detail: `${c.branch} was merged into ${c.base} (orchestrate status saw it); not pushed again`,
    };
  const pushed = await pushBranch({
    repo,
    remote,
    branch: c.branch,
    commit: head.commit,
    ...(c.pushedCommit ? { lastPushed: c.pushedCommit } : {}),
    ...(access.auth ? { auth: access.auth } : {}),
  });
  if (!pushed.ok) return { key: c.key, outcome: pushed.refused ? 'refused' : 'failed', detail: pushed.error };
  c.pushedCommit = head.commit;
  if (c.state !== 'published') {
    c.state = 'published';
    c.publishedAt = Date.now();
  }
  // Commits someone added on top of orchestrate's are kept, and said (the branch is not only orchestrate's).
  const builtOn = pushed.builtOn
    ? ` (${c.branch} has commits someone added on top of orchestrate's, up to ${pushed.builtOn.slice(0, 12)}: left as they are)`
    : '';
  if (!forge)
    return {
      key: c.key,
      outcome: pushed.pushed ? 'pushed' : 'unchanged',
      detail: `${c.branch} on ${remote.url}${builtOn}`,
    };

  const repoName = repository ?? repositoryFromUrl(remote.url);
  if (!repoName)
    return {
      key: c.key,
      outcome: 'failed',
      detail: `cannot tell the ${c.forge} repository from ${remote.url}: set publish.repository (owner/name)`,
    };
  c.repository = repoName;
  let pr = known ?? (c.pr ? await forge.get(repoName, c.pr.number) : await forge.findOpen(repoName, c.branch, c.base));
  if (pr && pr.state !== 'open') {
    c.pr = { number: pr.number, url: pr.url };
    return { key: c.key, outcome: 'unchanged', detail: `${pr.url} is ${pr.state}; not reopened${builtOn}` };
  }
  let outcome: ChangesetOutcome = pushed.pushed ? 'pushed' : 'unchanged';
  if (!pr) {
    pr = await forge.create(repoName, { head: c.branch, base: c.base, title: c.title, body: c.body, draft: c.draft });
    outcome = 'opened';
  } else {
    const change: { title?: string; body?: string; draft?: boolean } = {};
    if (pr.title !== c.title) change.title = c.title;
    if (pr.body.trim() !== c.body.trim()) change.body = c.body;
    // The recipe's draft: changed since: mark the pull request ready (or a draft again) in place.
    if (pr.draft !== c.draft) change.draft = c.draft;
    if (Object.keys(change).length > 0) {
      await forge.update(repoName, pr.number, change);
      outcome = 'updated';
    }
  }
  c.pr = { number: pr.number, url: pr.url };
  const labels = c.labels.filter((l) => !pr!.labels.includes(l));
  if (labels.length) {
    await forge.addLabels(repoName, pr.number, labels);
    if (outcome === 'unchanged' || outcome === 'pushed') outcome = 'updated';
  }
  const reviewers = c.reviewers.filter((r) => !pr!.reviewers.includes(r));
  if (reviewers.length) {
    await forge.requestReviewers(repoName, pr.number, reviewers);
    if (outcome === 'unchanged' || outcome === 'pushed') outcome = 'updated';
  }
  return { key: c.key, outcome, detail: `${pr.url}${builtOn}` };
}
