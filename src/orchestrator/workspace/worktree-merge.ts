// Where the work of an instance with `isolation: worktree` lands (the task's `merge:`):
//   patch  - patches/<key>.diff only; the worktree stays in the run folder (the default).
//   branch - a commit of exactly that patch on branch orchestrate/<run-id>/<key>, parented on the
//            commit the worktree started from; the user's checkout, index and HEAD are untouched.
//   apply  - the patch applied to the original checkout's files (not its index), all or nothing:
//            a patch that does not apply changes nothing and fails the instance `patch_conflict`.
// Both are idempotent, so a coordinator killed between landing the work and logging the instance
// done lands it again on resume without harm: the branch is set to the same tree, and a patch
// whose reverse applies is already in the checkout. Once landed, the worktree is removed.
//
// git runs through git-workspace's git() (tools/product-git: sandboxed, the repository's program
// keys disabled), pinned to the repository as orchestrate trusts it (repo-trust.ts); patches go
// to `git apply` on its stdin, the throwaway index in a private folder.
import { join } from 'node:path';
import { withProductTemp } from '../../tools/product-git.js';
import { git, gitErrorLines } from './git-workspace.js';
import { pinnedGitEnv, trustedRepository } from './repo-trust.js';

export type MergeMode = 'patch' | 'branch' | 'apply';

/** ok with `branch` (and its commit) or `applied` when work landed; ok alone when there was none to land. */
export type LandResult =
  | { ok: true; branch?: string; commit?: string; applied?: boolean; alreadyApplied?: boolean }
  /** `failure: workspace`: the repository is not one orchestrate trusts (repo-trust.ts); else the work does not apply. */
  | { ok: false; error: string; failure?: 'workspace' };

/**
 * The git variables that pin every landing git to `root`'s repository as orchestrate trusts it,
 * or the failure when it does not: the agent's worktree shares that repository's git folder,
 * so a `commondir` or core.worktree it wrote there must not steer where its work lands.
 */
export function pinned(root: string): { ok: true; env: Record<string, string>; writable: string[] } | LandFailure {
  const t = trustedRepository(root);
  if (!t.ok) return { ok: false, failure: 'workspace', error: t.error };
  const { top, gitDir, commonDir } = t.location;
  return { ok: true, env: pinnedGitEnv(t.location), writable: [top, gitDir, commonDir] };
}

type LandFailure = Extract<LandResult, { ok: false }>;

/**
 * The branch of an instance: orchestrate/<run-id>/<key>, the key made a valid ref name (git
 * check-ref-format: no spaces, `..`, `~^:?*[\`, leading dots or `.lock` endings).
 */
export function branchName(runId: string, key: string): string {
  const part = (s: string): string =>
    s
      .replace(/[^A-Za-z0-9._/-]+/g, '-')
      .replace(/\.{2,}/g, '.')
      .replace(/\/{2,}/g, '/')
      .split('/')
      .map((c) =>
        c
          .replace(/^\.+/, '')
          .replace(/\.lock$/i, '-lock')
          .replace(/\.+$/, ''),
      )
      .filter((c) => c !== '')
      .join('/') || 'instance';
  return `orchestrate/${part(runId)}/${part(key)}`;
}

/** Author and committer for commits of a repository without a configured identity (git refuses otherwise). */
export async function identityEnv(root: string, pin: Record<string, string>): Promise<Record<string, string>> {
  const [name, email] = await Promise.all([
    git(['config', 'user.name'], root, pin),
    git(['config', 'user.email'], root, pin),
  ]);
  const env: Record<string, string> = {};
  if (!name.ok || name.stdout.trim() === '')
    Object.assign(env, { GIT_AUTHOR_NAME: 'orchestrate', GIT_COMMITTER_NAME: 'orchestrate' });
  if (!email.ok || email.stdout.trim() === '')
    Object.assign(env, { GIT_AUTHOR_EMAIL: 'orchestrate@localhost', GIT_COMMITTER_EMAIL: 'orchestrate@localhost' });
  return env;
}

/**
 * Commits `patch` on top of `baseCommit` and points `branch` at it, through a temporary index: no
 * checkout, index or HEAD of the repository (or of its worktrees) changes.
 */
export async function commitToBranch(
  root: string,
  baseCommit: string,
  branch: string,
  patch: string,
  message: string,
): Promise<LandResult> {
  const pin = pinned(root);
  if (!pin.ok) return pin;
  const more = { writable: pin.writable };
  return withProductTemp('orchestrate-merge-', async (tmp) => {
    const env = { ...pin.env, GIT_INDEX_FILE: join(tmp, 'index') };
    const read = await git(['read-tree', baseCommit], root, env, more);
    if (!read.ok)
      return { ok: false, error: `cannot read commit ${baseCommit.slice(0, 12)} of ${root}: ${read.stderr.trim()}` };
    const applied = await git(['apply', '--cached', '--binary', '--whitespace=nowarn'], root, env, {
      ...more,
      input: patch,
    });
    if (!applied.ok)
      return {
        ok: false,
        error: `the patch does not apply to commit ${baseCommit.slice(0, 12)}: ${gitErrorLines(applied.stderr)}`,
      };
    const tree = await git(['write-tree'], root, env, more);
    if (!tree.ok) return { ok: false, error: `git write-tree failed: ${tree.stderr.trim()}` };
    const commit = await git(
      ['commit-tree', '--no-gpg-sign', tree.stdout.trim(), '-p', baseCommit, '-m', message],
      root,
      { ...env, ...(await identityEnv(root, pin.env)) },
      more,
    );
    if (!commit.ok) return { ok: false, error: `git commit-tree failed: ${commit.stderr.trim()}` };
    const sha = commit.stdout.trim();
    const ref = await git(
      ['update-ref', '-m', 'orchestrate: instance done', `refs/heads/${branch}`, sha],
      root,
      pin.env,
      more,
    );
    if (!ref.ok) return { ok: false, error: `cannot set branch ${branch}: ${ref.stderr.trim()}` };
    return { ok: true, branch, commit: sha };
  });
}

/**
 * Applies `patch` to the files of the checkout at `root` (binary and new files included; the index
 * is left alone), or changes nothing and says which files conflict. A patch already in the files
 * (its reverse applies) is not applied twice.
 */
export async function applyToCheckout(root: string, patch: string, patchName: string): Promise<LandResult> {
  const pin = pinned(root);
  if (!pin.ok) return pin;
  const input = { input: patch, writable: pin.writable };
  const reverse = await git(['apply', '--reverse', '--check', '--binary', '--whitespace=nowarn'], root, pin.env, input);
  if (reverse.ok) return { ok: true, applied: true, alreadyApplied: true };
  const check = await git(['apply', '--check', '--binary', '--whitespace=nowarn'], root, pin.env, input);
  if (!check.ok) {
    return {
      ok: false,
      error: `its changes do not apply to ${root}, which changed under them: ${gitErrorLines(check.stderr)}. Nothing was applied; the work is in ${patchName} (apply it by hand, or use merge: branch to keep each instance's work on a branch of its own)`,
    };
  }
  const applied = await git(['apply', '--binary', '--whitespace=nowarn'], root, pin.env, input);
  return applied.ok
    ? { ok: true, applied: true }
    : { ok: false, error: `git apply failed in ${root}: ${gitErrorLines(applied.stderr)}` };
}
