// `orchestrate publish <run> --rebase KEY [--apply]`: a published changeset whose pull request no
// longer merges is made again on its base branch as it is now. Its base branch is fetched from
// its remote, the instance's agent runs again for real on that commit (rebase-attempt.ts), the
// run log records the re-run, and the changeset is computed again from it (new base commit,
// patch, diffstat, summary, and when and from which base it was rebased). With --apply the new
// commit replaces orchestrate's previous one on the same branch (a push leased on the commit
// orchestrate pushed: never over someone else's) and the same pull request is updated in place.
//
// What is checked before any model call: the key names a published changeset, its pull request
// is still open, with --apply its branch still holds orchestrate's commit, the remote answers,
// and the base moved. A failed or empty re-run changes nothing: the old changeset stays.
import { basename, resolve } from 'node:path';
import type { LoadedRecipe } from '../recipe/index.js';
import type { Changeset } from '../run/changesets.js';
import { foldEvents } from '../run/run-fold.js';
import { takeRunLease } from '../run/run-lease.js';
import { runRootOf } from '../run/run-paths.js';
import { readRunLog } from '../run/run-store.js';
import { didYouMean } from '../util/did-you-mean.js';
import { missingApiKey } from '../orchestrator/run-recipe.js';
import { fetchBranch, remoteBranchCommit, resolveRemote } from './branch-push.js';
import { replanChangesets } from './changeset-plan.js';
import { withoutSecrets } from './forge.js';
import {
  type ForgeAccess,
  type PublishResult,
  type UnmatchedKey,
  forgeAccess,
  publishRun,
  selectChangesets,
  unmatchedText,
} from './publish-run.js';
import { runRebaseAttempt } from './rebase-attempt.js';
import { recordedRemotes } from '../orchestrator/workspace/repo-remotes.js';

export interface RebaseOptions {
  runDir: string;
  /** The run's recipe, loaded with the run's inputs and overrides (its model resolution). */
  recipe: LoadedRecipe;
  /** A changeset key as --only takes it (task/key, the instance key, or a unique prefix). */
  key: string;
  apply: boolean;
  env: Readonly<Record<string, string | undefined>>;
  say?: (line: string) => void;
}

export type RebaseOutcome =
  /** Re-run on the new base; `publish` is the changeset's preview, or what --apply did. */
  | { kind: 'rebased'; changeset: Changeset; from: string; to: string; attempt: number; publish: PublishResult }
  /** The base branch is where the change was made: nothing to redo (with --apply: the changeset published as it is). */
  | { kind: 'current'; message: string; publish?: PublishResult }
  /** A usage mistake (unknown key, never published, the instance cannot be rendered): exit 2. */
  | { kind: 'usage'; error: string; hint?: string }
  /** Refused or failed (remote unreachable, someone else's commit, the re-run failed or was empty): exit 1. */
  | { kind: 'failed'; error: string };

function unknownKey(key: string, all: readonly Changeset[], runId: string, problem: UnmatchedKey): RebaseOutcome {
  const keys = all.map((c) => c.key);
  // An ambiguous key lists its matches already; only a key that matches nothing gets a guess.
  const guess = problem.matches.length === 0 ? didYouMean(key, keys) : undefined;
  return {
    kind: 'usage',
    error: `${unmatchedText(problem)} in run ${runId}${guess ? `; did you mean ${guess}?` : ''}`,
    hint: `changesets: ${keys.join(', ') || '(none)'}`,
  };
}

export async function rebaseChangeset(opts: RebaseOptions): Promise<RebaseOutcome> {
  const { runDir, recipe, env } = opts;
  const say = opts.say ?? (() => undefined);
  const all = replanChangesets(runDir, recipe).file.changesets;
  const fold = foldEvents(readRunLog(resolve(runDir, 'run.jsonl')).events);
  const runId = fold.runId || basename(runDir);
  const { selected, unknown } = selectChangesets(all, [opts.key]);
  if (unknown.length || !selected[0])
    return unknownKey(opts.key, all, runId, unknown[0] ?? { want: opts.key, matches: [] });
  const c = selected[0];
  if (c.state !== 'published' || !c.pushedCommit)
    return c.pushedCommit
      ? {
          kind: 'usage',
          error: `${c.key} is ${c.state}${c.pr ? ` (${c.pr.url} was closed)` : ''}: --rebase redoes a published change whose pull request is open and no longer merges`,
        }
      : {
          kind: 'usage',
          error: `${c.key} was never published (${c.state}): --rebase redoes a published change whose pull request no longer merges`,
          hint: `publish it first: orchestrate publish ${runId} --apply --only ${c.key}`,
        };
  const inst = [...fold.instances.values()].find((i) => i.task === c.task && i.key === c.instance);
  if (!inst?.git) return { kind: 'failed', error: `run ${runId} has no git record of ${c.key}` };
  const missing = missingApiKey(recipe, env);
  if (missing) return { kind: 'usage', error: missing };

  const root = runRootOf(runDir, fold.start) ?? recipe.dir;
  const repo = resolve(root, c.repo);
  let access: ForgeAccess = {};
  try {
    access = forgeAccess(c, env, new Map(), say);
    const remote = await resolveRemote(
      repo,
      c.remote,
      root,
      c.forge,
      c.baseUrl,
      env,
      recordedRemotes(fold, c.task, c.instance),
    );
    if (!remote.ok) return { kind: 'failed', error: remote.error };
    if (remote.warning) say(`${c.key}: ${remote.warning}`);
    if (c.pr && access.forge && c.repository) {
      const pr = await access.forge.get(c.repository, c.pr.number);
      if (pr.state !== 'open') return { kind: 'failed', error: `${pr.url} is ${pr.state}: there is nothing to rebase` };
    }
    if (opts.apply) {
      // Checked before the re-run is paid for; the push itself is leased on the same commit.
      const now = await remoteBranchCommit(repo, remote, c.branch, access.auth);
      if (!now.ok) return { kind: 'failed', error: now.error };
      if (now.commit && now.commit !== c.pushedCommit)
        return {
          kind: 'failed',
          error: `refusing to rebase ${c.key}: ${c.branch} on ${remote.url} is at ${now.commit.slice(0, 12)}, a commit orchestrate did not push (it pushed ${c.pushedCommit.slice(0, 12)}); someone else's work would be overwritten. Merge it by hand, or delete the branch to publish again`,
        };
    }
    say(`${c.key}: fetching ${c.base} from ${remote.url}`);
    const fetched = await fetchBranch(repo, remote, c.base, access.auth, [c.baseCommit]);
    if (!fetched.ok) return { kind: 'failed', error: fetched.error };
    if (fetched.commit === c.baseCommit) {
      const message = `${c.key}: ${c.base} is still at ${c.baseCommit.slice(0, 12)}, the commit the change was made on: nothing to rebase`;
      if (!opts.apply) return { kind: 'current', message };
      // Rebased before without --apply: --apply now pushes that change (a no-op when it is pushed already).
      // The message is the caller's to print (once), with what publishing did.
      const publish = await publishRun({ runDir, recipe, apply: true, only: [c.key], env, say });
      return { kind: 'current', message, publish };
    }

    // Only the holder of the run's lease writes its log (refused while the run itself is live).
    const taken = takeRunLease(runDir, runId);
    if (!taken.ok) return { kind: 'failed', error: taken.message };
    let attempt: number;
    try {
      say(
        `${c.key}: running ${inst.label} again on ${c.base} ${fetched.commit.slice(0, 12)} (it was made on ${c.baseCommit.slice(0, 12)})`,
      );
      const ran = await runRebaseAttempt({
        runDir,
        recipe,
        env,
        fold,
        inst,
        changeset: c,
        repo,
        baseCommit: fetched.commit,
      });
      if (!ran.ok) return { kind: ran.unrenderable ? 'usage' : 'failed', error: ran.error };
      attempt = ran.attempt;
    } finally {
      await taken.lease.release();
    }
    const publish = await publishRun({ runDir, recipe, apply: opts.apply, only: [c.key], env, say });
    const changeset = publish.file.changesets.find((x) => x.key === c.key)!;
    return { kind: 'rebased', changeset, from: c.baseCommit, to: fetched.commit, attempt, publish };
  } catch (err) {
    const message = err instanceof Error ? err.message : String(err);
    return { kind: 'failed', error: withoutSecrets(message, [access.token, access.auth?.header]) };
  }
}
