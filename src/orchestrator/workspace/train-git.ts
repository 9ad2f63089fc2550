// The git steps of the merge train (merge-train.ts), none of which touches a working tree but the
// checkout's files at the very end:
//   - threeWayMerge: an instance's work (its base tree plus its patch) merged onto the checkout's
//     tree now with `git merge-tree --write-tree` (git >= 2.38). The base is made the merge base
//     by parenting both sides on a commit of it (merge-tree's --merge-base came only in 2.40).
//   - materializeTree: a merged tree written out into a folder of its own, where verify runs.
//   - applyTreeChange: the checkout moved from the tip's tree to the merged tree: a diff made now
//     between those two trees, never an old patch of the instance's, so it always applies to files
//     that still hold the tip (the caller checks that under the repository's lock).
// git runs as in worktree-merge.ts: product git, pinned to the repository as orchestrate trusts it.
import { join } from 'node:path';
import { withProductTemp } from '../../tools/product-git.js';
import { git, gitErrorLines } from './git-workspace.js';
import { identityEnv, pinned } from './worktree-merge.js';

export type MergeOutcome =
  | { ok: true; tree: string; commit: string }
  | { ok: false; conflict: true; files: string[]; detail: string }
  | { ok: false; conflict?: false; error: string; failure?: 'workspace' };

/**
 * Merges (`baseTree` + `patch`) onto `tipTree` of `root`'s repository: ok with the merged tree
 * (and a commit of it parented on the tip, the landing's record), or the files that conflict.
 * Objects are written to the repository's object store; no ref, index or file changes.
 */
export async function threeWayMerge(
  root: string,
  baseTree: string,
  patch: string,
  tipTree: string,
  message: string,
): Promise<MergeOutcome> {
  const pin = pinned(root);
  if (!pin.ok) return { ok: false, error: pin.error, failure: 'workspace' };
  const more = { writable: pin.writable };
  return withProductTemp('orchestrate-train-', async (tmp): Promise<MergeOutcome> => {
    const env = { ...pin.env, GIT_INDEX_FILE: join(tmp, 'index') };
    const read = await git(['read-tree', baseTree], root, env, more);
    if (!read.ok)
      return { ok: false, error: `cannot read tree ${baseTree.slice(0, 12)}: ${gitErrorLines(read.stderr)}` };
    const applied = await git(['apply', '--cached', '--binary', '--whitespace=nowarn'], root, env, {
      ...more,
      input: patch,
    });
    if (!applied.ok)
      return { ok: false, error: `the patch does not apply to its own base tree: ${gitErrorLines(applied.stderr)}` };
    const theirs = await git(['write-tree'], root, env, more);
    if (!theirs.ok) return { ok: false, error: `git write-tree failed: ${gitErrorLines(theirs.stderr)}` };
    const ids = { ...env, ...(await identityEnv(root, pin.env)) };
    const commit = async (tree: string, parent: string | undefined, msg: string): Promise<string | undefined> => {
      const r = await git(
        ['commit-tree', '--no-gpg-sign', tree, ...(parent ? ['-p', parent] : []), '-m', msg],
        root,
        ids,
        more,
      );
      return r.ok ? r.stdout.trim() : undefined;
    };
    const base = await commit(baseTree, undefined, 'orchestrate train: base');
    const ours = base && (await commit(tipTree, base, 'orchestrate train: tip'));
    const work = base && (await commit(theirs.stdout.trim(), base, 'orchestrate train: work'));
    if (!base || !ours || !work) return { ok: false, error: `git commit-tree failed in ${root}` };
    const merged = await git(
      ['merge-tree', '--write-tree', '--name-only', '--no-messages', ours, work],
      root,
      env,
      more,
    );
    const [tree = '', ...rest] = merged.stdout.split('\n');
    if (merged.ok) {
      const landed = await commit(tree.trim(), ours, message);
      if (!landed) return { ok: false, error: `git commit-tree failed in ${root}` };
      return { ok: true, tree: tree.trim(), commit: landed };
    }
    // Exit 1 with a tree on the first line: conflicts, one file a line (--name-only).
    if (/^[0-9a-f]{40,64}$/.test(tree.trim())) {
      const files = [...new Set(rest.map((l) => l.trim()).filter(Boolean))];
      return {
        ok: false,
        conflict: true,
        files,
        detail: `its changes conflict with work that landed before it in ${files.join(', ') || 'the repository'}`,
      };
    }
    return {
      ok: false,
      error: `git merge-tree failed in ${root}: ${gitErrorLines(merged.stderr)} (the merge train needs git 2.38 or newer)`,
    };
  });
}

/** Writes the files of `tree` into `dir` (an empty folder), for a verify of the merged tree. */
export async function materializeTree(
  root: string,
  tree: string,
  dir: string,
): Promise<{ ok: true } | { ok: false; error: string }> {
  const pin = pinned(root);
  if (!pin.ok) return { ok: false, error: pin.error };
  return withProductTemp('orchestrate-train-', async (tmp) => {
    const env = { ...pin.env, GIT_INDEX_FILE: join(tmp, 'index') };
    const more = { writable: [...pin.writable, dir] };
    const read = await git(['read-tree', tree], root, env, more);
    if (!read.ok) return { ok: false, error: `cannot read tree ${tree.slice(0, 12)}: ${gitErrorLines(read.stderr)}` };
    const out = await git(['checkout-index', '-a', '-f', `--prefix=${dir}/`], root, env, more);
    return out.ok ? { ok: true } : { ok: false, error: `cannot write the merged tree: ${gitErrorLines(out.stderr)}` };
  });
}

/**
 * Moves the checkout's files at `root` from `fromTree` to `toTree` (the index is left alone, as
 * merge: apply always did): the diff between the two trees, applied all or nothing.
 */
export async function applyTreeChange(
  root: string,
  fromTree: string,
  toTree: string,
): Promise<{ ok: true; files: string[] } | { ok: false; error: string }> {
  const pin = pinned(root);
  if (!pin.ok) return { ok: false, error: pin.error };
  const more = { writable: pin.writable };
  const diff = await git(['diff', '--binary', '--no-renames', '--no-ext-diff', fromTree, toTree], root, pin.env, more);
  if (!diff.ok) return { ok: false, error: `git diff failed in ${root}: ${gitErrorLines(diff.stderr)}` };
  if (!diff.stdout.trim()) return { ok: true, files: [] };
  const names = await git(['diff', '--name-only', '--no-renames', fromTree, toTree], root, pin.env, more);
  const applied = await git(['apply', '--binary', '--whitespace=nowarn'], root, pin.env, {
    ...more,
    input: diff.stdout,
  });
  if (!applied.ok) return { ok: false, error: `git apply failed in ${root}: ${gitErrorLines(applied.stderr)}` };
  return { ok: true, files: names.stdout.split('\n').filter(Boolean) };
}

/** A commit of `tree` on top of `parent` (a repair's worktree starts from the checkout's files as they are). */
export async function commitOfTree(
  root: string,
  tree: string,
  parent: string | undefined,
  message: string,
): Promise<{ ok: true; commit: string } | { ok: false; error: string }> {
  const pin = pinned(root);
  if (!pin.ok) return { ok: false, error: pin.error };
  const r = await git(
    ['commit-tree', '--no-gpg-sign', tree, ...(parent ? ['-p', parent] : []), '-m', message],
    root,
    { ...pin.env, ...(await identityEnv(root, pin.env)) },
    { writable: pin.writable },
  );
  return r.ok
    ? { ok: true, commit: r.stdout.trim() }
    : { ok: false, error: `git commit-tree failed: ${gitErrorLines(r.stderr)}` };
}

/**
 * `tree` without the folder `rel` (relative to the repository's top): the run's own folder when
 * it lies inside the repository it works on, which is no part of the work (logs and sessions
 * would otherwise be copied into every worktree started from the checkout, and merged).
 */
export async function treeWithout(
  root: string,
  tree: string,
  rel: string,
): Promise<{ ok: true; tree: string } | { ok: false; error: string }> {
  const pin = pinned(root);
  if (!pin.ok) return { ok: false, error: pin.error };
  return withProductTemp('orchestrate-train-', async (tmp) => {
    const env = { ...pin.env, GIT_INDEX_FILE: join(tmp, 'index') };
    const more = { writable: pin.writable };
    const read = await git(['read-tree', tree], root, env, more);
    if (!read.ok) return { ok: false, error: `cannot read tree ${tree.slice(0, 12)}: ${gitErrorLines(read.stderr)}` };
    const rm = await git(['rm', '-r', '-q', '-f', '--cached', '--ignore-unmatch', '--', rel], root, env, more);
    if (!rm.ok) return { ok: false, error: `cannot leave ${rel} out of the tree: ${gitErrorLines(rm.stderr)}` };
    const out = await git(['write-tree'], root, env, more);
    return out.ok ? { ok: true, tree: out.stdout.trim() } : { ok: false, error: gitErrorLines(out.stderr) };
  });
}
