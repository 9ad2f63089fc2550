// Whether the repository around a workspace is one the product's own git may work in, and where
// exactly it is. The workspace is the model's to change: a `.git` file it writes (`gitdir: x`) or a
// `commondir` it plants (naming another repository's git folder) would make the product's
// snapshot and diff read and write that other repository, and `core.worktree` would move the work
// tree git measures. So the product finds the repository itself (tools/product-git
// findRepository: the files git reads, read without running git), accepts only the layouts git
// makes, and then runs its git with that place pinned (GIT_DIR, GIT_COMMON_DIR, GIT_WORK_TREE),
// which no file in the repository can override. core.worktree is checked by the scripts that use
// the pin (git-workspace.ts), where the config is read.
//
// Accepted layouts:
//   - a `.git` folder without a `commondir` (an ordinary repository);
//   - a `.git` file naming a folder inside the work tree (`git init --separate-git-dir` nearby);
//   - a linked worktree: the `.git` file names <common>/worktrees/<name>, whose `gitdir` file
//     names this `.git` back, and whose `commondir` is <common> (the product's own worktrees,
//     and the user's);
//   - a submodule: the `.git` file names a folder under <super>/.git/modules/ of a repository
//     that holds this one.
// Anything else (a gitdir elsewhere, a commondir naming another place) is "not a repository we
// trust": the caller fails the attempt with class `workspace`.
import { readFileSync, realpathSync } from 'node:fs';
import { basename, dirname, join, resolve } from 'node:path';
import { findRepository, type RepositoryLocation } from '../../tools/product-git.js';
import { isInside } from '../../tools/workspace.js';
import { isDirectory, isFile } from '../../util/path-kind.js';

export type { RepositoryLocation };

export type TrustedRepository = { ok: true; location: RepositoryLocation } | { ok: false; error: string };

/** The real path of `p`, or `p` resolved when it does not exist (a compared path never matches by accident). */
function real(p: string): string {
  try {
    return realpathSync(p);
  } catch {
    return resolve(p);
  }
}

/** A linked worktree's git folder <common>/worktrees/<name> whose `gitdir` names `dotGit` back. */
function isLinkedWorktree(gitDir: string, dotGit: string): boolean {
  if (basename(dirname(gitDir)) !== 'worktrees') return false;
  try {
    const back = readFileSync(join(gitDir, 'gitdir'), 'utf8').trim();
    return real(resolve(gitDir, back)) === real(dotGit);
  } catch {
    return false;
  }
}

/** A submodule's git folder: under <super>/.git/modules/ of a repository whose work tree holds `top`. */
function isSubmoduleGitDir(gitDir: string, top: string): boolean {
  for (let d = dirname(top); ; d = dirname(d)) {
    const modules = join(d, '.git', 'modules');
    if (isDirectory(join(d, '.git')) && isInside(modules, gitDir) && gitDir !== modules) return true;
    if (dirname(d) === d) return false;
  }
}

/**
 * The repository holding `dir`, found as git finds it, when its layout is one git makes (see the
 * header); else why not. `dir` outside any repository is an error too: the caller expected one.
 */
export function trustedRepository(dir: string): TrustedRepository {
  const found = findRepository(real(dir));
  if (!found) return { ok: false, error: `${dir} is not inside a git repository any more` };
  const top = real(found.top);
  const gitDir = real(found.gitDir);
  const commonDir = real(found.commonDir);
  const dotGit = join(top, '.git');
  const untrusted = (why: string): TrustedRepository => ({
    ok: false,
    error: `the repository at ${top} is not one orchestrate trusts: ${why}. Something in the workspace (an agent's command?) rewired its git metadata; restore ${dotGit} from a good copy (or remove what was written), then run again`,
  });
  const linked = isFile(dotGit) && isLinkedWorktree(gitDir, dotGit);
  if (isFile(dotGit) && !isInside(top, gitDir) && !linked && !isSubmoduleGitDir(gitDir, top))
    return untrusted(
      `${dotGit} names ${gitDir}, outside its work tree, and that is neither a worktree nor a submodule of it`,
    );
  const worktreeCommon = basename(dirname(gitDir)) === 'worktrees' ? dirname(dirname(gitDir)) : undefined;
  if (commonDir !== gitDir && commonDir !== worktreeCommon)
    return untrusted(`${join(gitDir, 'commondir')} names ${commonDir}, another repository's objects and refs`);
  if (commonDir !== gitDir && !linked && !isInside(top, gitDir) && !isSubmoduleGitDir(gitDir, top))
    return untrusted(`${gitDir} shares the objects of ${commonDir} but is not a worktree of it`);
  return { ok: true, location: { top, gitDir, commonDir } };
}

/** Whether two locations are the same repository work tree, git folder and object store. */
export function sameLocation(a: RepositoryLocation, b: RepositoryLocation): boolean {
  return a.top === b.top && a.gitDir === b.gitDir && a.commonDir === b.commonDir;
}

/**
 * The variables that pin a product git to `loc`: with them git neither searches for a `.git`
 * nor reads `commondir` or `core.worktree`.
 */
export function pinnedGitEnv(loc: RepositoryLocation): Record<string, string> {
  return { GIT_DIR: loc.gitDir, GIT_COMMON_DIR: loc.commonDir, GIT_WORK_TREE: loc.top };
}
