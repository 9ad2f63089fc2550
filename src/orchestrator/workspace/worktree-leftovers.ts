// What a kill -9 can leave of an instance's worktree, and removing all of it. git dies with the
// coordinator (the sandbox's --die-with-parent), so a kill can cut a git command off halfway:
//   - `git worktree remove` deletes the folder first and git's record of it
//     (.git/worktrees/<name>) last: cut off, it leaves the record without its folder (listed by
//     `git worktree list` as prunable, refused by a later `git worktree add` at that path) or a
//     half-deleted folder without its `.git` (which git then refuses to remove);
//   - `git worktree add` writes the record, locked "initializing", and the folder's `.git`
//     before it checks the files out: cut off, it leaves a worktree missing files that looks made.
// A resume that drops a landed instance's worktree, or makes one again (a repair, a retry),
// removes such leftovers first, so no worktree stays behind and no work starts from half a tree.
import { existsSync, readdirSync, readFileSync, realpathSync, rmSync, statSync } from 'node:fs';
import { basename, dirname, join, resolve } from 'node:path';
import { isInside } from '../../tools/workspace.js';
import { git } from './git-workspace.js';

/** git's record of the worktree at `dir`: its admin folder, none, or unknown (`root/.git` is not a folder). */
type WorktreeRecord = { admin: string } | 'none' | 'unknown';

/** `dir` as git wrote it in the record (a real path), also when `dir` no longer exists. */
function realDir(dir: string): string {
  try {
    return realpathSync(dir);
  } catch {
    try {
      return join(realpathSync(dirname(dir)), basename(dir));
    } catch {
      return resolve(dir);
    }
  }
}

function recordOf(root: string, dir: string): WorktreeRecord {
  try {
    if (!statSync(join(root, '.git')).isDirectory()) return 'unknown';
  } catch {
    return 'unknown';
  }
  const admins = join(root, '.git', 'worktrees');
  if (!existsSync(admins)) return 'none';
  const wanted = new Set([join(resolve(dir), '.git'), join(realDir(dir), '.git')]);
  for (const name of readdirSync(admins)) {
    try {
      if (wanted.has(readFileSync(join(admins, name, 'gitdir'), 'utf8').trim())) return { admin: join(admins, name) };
    } catch {
      // an entry without its gitdir file is no worktree of ours
    }
  }
  return 'none';
}

/**
 * Whether the worktree at `dir` is whole: its `.git` is there and git's record of it is not still
 * locked by an `add` that never finished (orchestrate locks no worktree of its own).
 */
export function worktreeIsWhole(root: string, dir: string): boolean {
  if (!existsSync(join(dir, '.git'))) return false;
  const record = recordOf(root, dir);
  return typeof record === 'string' || !existsSync(join(record.admin, 'locked'));
}

/**
 * Removes the worktree at `dir` of `root`'s repository and git's record of it, whichever of the
 * two is there. What git will not remove of the folder is deleted only inside `ownFolder` (the
 * run's worktrees/, which only orchestrate writes): a path from a log is never deleted elsewhere.
 * Run it under the repository's lock.
 */
export async function removeWorktreeFully(root: string, dir: string, ownFolder: string): Promise<void> {
  if (existsSync(dir)) {
    // Twice forced: a worktree still locked by an `add` cut off is removed too.
    const r = await git(['worktree', 'remove', '--force', '--force', dir], root, undefined, {
      writable: [dirname(dir)],
    });
    if (r.ok && !existsSync(dir)) return;
    if (!isInside(ownFolder, dir) || resolve(ownFolder) === resolve(dir)) return;
    if (existsSync(dir)) rmSync(dir, { recursive: true, force: true });
  }
  const record = recordOf(root, dir);
  if (record === 'none') return;
  // The folder is gone: what `git worktree prune` would do for this one record, and no other.
  if (record !== 'unknown') rmSync(record.admin, { recursive: true, force: true });
  else await git(['worktree', 'remove', '--force', '--force', dir], root);
}
