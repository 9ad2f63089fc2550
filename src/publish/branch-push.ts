// The git half of publishing a changeset: the change's commit (the instance's patch on the commit
// it started from, with fixed dates so the same change always makes the same commit: applying
// twice pushes nothing) and the push of that commit to the changeset's branch on the remote.
//
// A push never overwrites work it did not make: the remote branch must be missing, already at
// this commit, or at the commit orchestrate pushed last (then it is replaced with a lease on that
// exact commit, so a commit someone adds meanwhile still makes the push fail). Anything else is
// refused with the reason.
//
// The change's commit is made by tools/product-git in the repository (sanitized environment, the
// repository's program keys disabled, sandboxed, no network). Everything that reaches the remote
// (ls-remote, fetch, push) runs through tools/network-git instead: a throwaway git folder that
// reads only the repository's objects, never its config, so no key the model wrote (http.proxy,
// url.<x>.insteadOf, include.path ...) reaches the git that holds the token. The URL comes from the
// recipe; the token travels as a config key in the environment, never in argv, and only to the
// forge's host. A remote's name resolves to the URL the repository had before the run's agents ran
// (recorded in the run log, repo-remotes.ts), never to what an agent set since.
import { existsSync, readFileSync } from 'node:fs';
import { isAbsolute, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { ForgeKind } from '../recipe/publish-spec.js';
import { forgeGitHost, parseRemote, remoteTransport } from '../recipe/publish-transport.js';
import {
  type NetworkGit,
  type NetworkTransport,
  type UserEnv,
  WorkspaceRepositoryError,
  setWorkspaceRef,
  withNetworkGit,
} from '../tools/network-git.js';
import { productGitScript, withProductTemp } from '../tools/product-git.js';
import { git } from '../orchestrator/workspace/git-workspace.js';
import type { RemoteUrls } from '../orchestrator/workspace/repo-remotes.js';
import { trustedRepository } from '../orchestrator/workspace/repo-trust.js';

export interface PushAuth {
  /** Host the token may be sent to (the forge's). */
  host: string;
  /** The Authorization header value (Basic ...): set only for a remote on `host`. */
  header: string;
}

/** Where a changeset's branch goes and how: decided from the recipe (and a remote's name, once). */
export interface ResolvedRemote {
  /** What git is given: an https or ssh URL, or a local path. */
  url: string;
  via: 'https' | 'ssh' | 'local';
  /** The local repository's folder, for `via: local`. */
  localPath?: string;
  /** The user's environment (ssh agent and command, proxies); default process.env. */
  userEnv?: UserEnv;
  /** Said once when the URL could not come from the run's record (a run recorded before there was one). */
  warning?: string;
}

/**
 * Where the remote is and how it is reached: a URL or path from the recipe (./ and ../ from the
 * run's root), or a remote's name, looked up in `recorded` (the repository's remotes before the
 * run's agents ran). A run recorded without them (`recorded` undefined) reads the repository as it
 * is now, with a warning. A github/gitlab forge's ssh remote is the same repository over https
 * (the token's transport); `forge: git` keeps ssh.
 */
export async function resolveRemote(
  repo: string,
  remote: string,
  root: string,
  forge: ForgeKind = 'git',
  baseUrl?: string,
  userEnv?: UserEnv,
  recorded?: RemoteUrls,
): Promise<({ ok: true } & ResolvedRemote) | { ok: false; error: string }> {
  // ./x and ../x: a local repository, relative to the run's root (the recipe's folder).
  if (remote.startsWith('./') || remote.startsWith('../')) {
    const localPath = resolve(root, remote);
    return { ok: true, url: localPath, via: 'local', localPath };
  }
  let url = remote;
  let warning: string | undefined;
  if (parseRemote(remote).kind === 'name') {
    if (recorded) {
      const had = recorded[remote];
      if (!had) {
        const names = Object.keys(recorded);
        return {
          ok: false,
          error: `${repo} had no remote "${remote}" when the run started (${names.length ? `it had ${names.map((n) => `"${n}"`).join(', ')}` : 'it had none'}); set publish.remote to a URL or to one of those`,
        };
      }
      url = had;
    } else {
      const r = await git(['config', '--get', `remote.${remote}.url`], repo);
      if (!r.ok || !r.stdout.trim())
        return {
          ok: false,
          error: `${repo} has no remote "${remote}"; set publish.remote to a URL or to one of its remotes`,
        };
      url = r.stdout.trim();
      warning = `warning: this run was recorded before orchestrate kept each repository's remotes, so remote "${remote}" of ${repo} is read from the repository as it is now (${url}); an agent of the run could have changed it. Check that it is yours, or set publish.remote to the URL`;
    }
    // A relative path in the repository's config is relative to the repository.
    if (parseRemote(url).kind === 'name' || url.startsWith('./') || url.startsWith('../')) url = resolve(repo, url);
  }
  const t = remoteTransport(forge, baseUrl, url);
  if (!t.ok) return t;
  const said = warning ? { warning } : {};
  // A remote's name names the repository's own URL: with a forge, it must be on the forge's host
  // (a branch anywhere else is no use to the pull request; and read from a run without a record,
  // the URL could be the agent's choice).
  if (url !== remote && forge !== 'git') {
    const host = forgeGitHost(forge, baseUrl);
    if (t.via !== 'https' || hostOf(t.url) !== host)
      return {
        ok: false,
        error: `remote "${remote}" of ${repo} is ${url}, not a repository on ${host}, the ${forge} forge's host; set publish.remote to the forge repository's URL`,
      };
  }
  if (t.via !== 'local') return { ok: true, url: t.url, via: t.via, ...(userEnv ? { userEnv } : {}), ...said };
  if (url.startsWith('file://')) return { ok: true, url, via: 'local', localPath: fileURLToPath(url), ...said };
  const localPath = isAbsolute(url) ? url : resolve(root, url);
  return { ok: true, url: localPath, via: 'local', localPath, ...said };
}

function hostOf(url: string): string | undefined {
  try {
    return new URL(url).host;
  } catch {
    return undefined;
  }
}

/** How the network git reaches `remote`: the token's header only for an https remote on the forge's host. */
export function pushTransport(remote: ResolvedRemote, auth: PushAuth | undefined): NetworkTransport {
  if (remote.via === 'local') return { kind: 'local', path: remote.localPath ?? remote.url };
  const userEnv = remote.userEnv ? { userEnv: remote.userEnv } : {};
  if (remote.via === 'ssh') return { kind: 'ssh', ...userEnv };
  // The token goes to the forge's own host only (a remote the model redirected gets none).
  return auth && hostOf(remote.url) === auth.host
    ? { kind: 'https', url: remote.url, header: auth.header, ...userEnv }
    : { kind: 'https', url: remote.url, ...userEnv };
}

/** A local remote that is missing, said before git says it less clearly. */
function missingLocal(remote: ResolvedRemote): string | undefined {
  return remote.localPath && !existsSync(remote.localPath)
    ? `the remote ${remote.localPath} does not exist`
    : undefined;
}

/** Runs `fn` with the product's network git for `repo`; a refused repository is an error value. */
async function networkGit<T extends { ok: boolean }>(
  repo: string,
  haves: readonly string[],
  fn: Parameters<typeof withNetworkGit<T>>[2],
): Promise<T | { ok: false; error: string }> {
  // The same layouts the run's snapshots accept (a linked worktree or a submodule of the user's
  // too); a .git file or commondir the model rewired to another repository is refused.
  const trusted = trustedRepository(repo);
  if (!trusted.ok) return { ok: false, error: trusted.error };
  try {
    return await withNetworkGit({ commonDir: trusted.location.commonDir }, haves, fn);
  } catch (err) {
    if (err instanceof WorkspaceRepositoryError) return { ok: false, error: err.message };
    throw err;
  }
}

/** The commit the remote branch is at, undefined when it has none; an error when the remote cannot be read. */
export async function remoteBranchCommit(
  repo: string,
  remote: ResolvedRemote,
  branch: string,
  auth?: PushAuth,
): Promise<{ ok: true; commit?: string } | { ok: false; error: string }> {
  const missing = missingLocal(remote);
  if (missing) return { ok: false, error: missing };
  return networkGit(repo, [], async (g) => {
    const r = await g.git(['ls-remote', '--heads', remote.url, `refs/heads/${branch}`], pushTransport(remote, auth));
    if (r.code !== 0) return { ok: false, error: `cannot read ${remote.url}: ${gitError(r.stderr, remote, auth)}` };
    const line = r.stdout
      .toString('utf8')
      .split('\n')
      .find((l) => l.endsWith(`\trefs/heads/${branch}`));
    return { ok: true, ...(line ? { commit: line.split('\t')[0] } : {}) };
  });
}

/** Where fetchBranch keeps a fetched base branch in the repository (a dry run reads it without fetching). */
export const fetchedBaseRef = (branch: string): string => `refs/orchestrate/base/${branch}`;

/**
 * Fetches `branch` of the remote into `repo` (kept as refs/orchestrate/base/<branch>, so the
 * user's branches and FETCH_HEAD stay as they are): the commit it is at now. `haves` are commits
 * the repository has (the change's base): only what is newer travels.
 */
export async function fetchBranch(
  repo: string,
  remote: ResolvedRemote,
  branch: string,
  auth?: PushAuth,
  haves: readonly string[] = [],
): Promise<{ ok: true; commit: string } | { ok: false; error: string }> {
  const missing = missingLocal(remote);
  if (missing) return { ok: false, error: missing };
  const ref = fetchedBaseRef(branch);
  return networkGit(repo, haves, async (g) => {
    const r = await g.git(
      ['fetch', '--no-tags', '--quiet', '--no-write-fetch-head', remote.url, `+refs/heads/${branch}:${ref}`],
      pushTransport(remote, auth),
    );
    if (r.code !== 0) {
      if (await lacksBranch(g, remote, branch, pushTransport(remote, auth)))
        return { ok: false, error: noBranchError(remote, branch) };
      return { ok: false, error: `cannot fetch ${branch} from ${remote.url}: ${gitError(r.stderr, remote, auth)}` };
    }
    const commit = readRef(g.dir, ref);
    if (!commit) return { ok: false, error: `fetched ${branch} from ${remote.url}, but no commit came with it` };
    g.keepFetched();
    return (await setWorkspaceRef(repo, ref, commit))
      ? { ok: true, commit }
      : { ok: false, error: `fetched ${branch} from ${remote.url}, but ${repo} cannot read its commit` };
  });
}

/** After a failed fetch: whether the remote answers and has no `branch` (rather than being unreadable). */
async function lacksBranch(
  g: NetworkGit,
  remote: ResolvedRemote,
  branch: string,
  transport: NetworkTransport,
): Promise<boolean> {
  const heads = await g.git(['ls-remote', '--heads', remote.url, `refs/heads/${branch}`], transport);
  return heads.code === 0 && !heads.stdout.toString('utf8').trim();
}

function noBranchError(remote: ResolvedRemote, branch: string): string {
  return `${remote.url} has no branch ${branch}, the base the change goes to: push ${branch} there, or set publish.base to the branch the changes go to`;
}

/**
 * Whether `commit` (the one orchestrate pushed) is reachable from the remote's `base` branch now:
 * the branch was merged (fast-forward or a merge commit; a squash or rebase merge makes new
 * commits, which this does not see). The base is fetched into the throwaway folder only. A remote
 * that has no `base` branch (yet: a new empty remote holds only the pushed branches) has merged
 * nothing: not merged, with a note saying so, rather than a failed look.
 */
export async function mergedInto(
  repo: string,
  remote: ResolvedRemote,
  base: string,
  commit: string,
  haves: readonly string[] = [],
): Promise<{ ok: true; merged: boolean; note?: string } | { ok: false; error: string }> {
  const missing = missingLocal(remote);
  if (missing) return { ok: false, error: missing };
  return networkGit(repo, haves, async (g) => {
    const ref = 'refs/orchestrate/base';
    const r = await g.git(
      ['fetch', '--no-tags', '--quiet', '--no-write-fetch-head', remote.url, `+refs/heads/${base}:${ref}`],
      pushTransport(remote, undefined),
    );
    if (r.code !== 0) {
      if (await lacksBranch(g, remote, base, pushTransport(remote, undefined)))
        return {
          ok: true,
          merged: false,
          note: `${remote.url} has no branch ${base}, so nothing is merged into it yet (push ${base} there, or set publish.base to the branch the changes go to)`,
        };
      return { ok: false, error: `cannot fetch ${base} from ${remote.url}: ${gitError(r.stderr, remote, undefined)}` };
    }
    const a = await g.git(['merge-base', '--is-ancestor', commit, ref], { kind: 'local', path: g.dir });
    if (a.code === 0) return { ok: true, merged: true };
    if (a.code === 1) return { ok: true, merged: false };
    return { ok: false, error: `cannot tell whether ${base} holds ${commit.slice(0, 12)}: ${firstLine(a.stderr)}` };
  });
}

/** A ref of the throwaway folder, read from its file (the product wrote the folder; fetch writes loose refs). */
function readRef(dir: string, ref: string): string | undefined {
  try {
    const text = readFileSync(join(dir, ref), 'utf8').trim();
    return /^[0-9a-f]{40,64}$/.test(text) ? text : undefined;
  } catch {
    return undefined;
  }
}

/**
 * The commit of a change: `patch` applied on `baseCommit` in a throwaway index, committed with the
 * given message and dates fixed to `whenMs` (same inputs, same commit). A ref under
 * refs/orchestrate/ keeps it from being collected; no branch, index or checkout changes.
 */
export async function changeCommit(args: {
  repo: string;
  baseCommit: string;
  patch: string;
  message: string;
  whenMs: number;
  ref: string;
  /** The command that redoes the change on the base branch as it is now (said when the base commit is gone). */
  rebaseCommand?: string;
}): Promise<{ ok: true; commit: string; empty: boolean } | { ok: false; error: string }> {
  // A .git file or commondir of the model's naming another repository: refused before git writes there.
  const trusted = trustedRepository(args.repo);
  if (!trusted.ok) return { ok: false, error: trusted.error };
  return withProductTemp('orchestrate-publish-', async (tmp) => {
    const date = `${Math.floor(args.whenMs / 1000)} +0000`;
    // One sandboxed shell for the whole commit (a sandbox start costs more than the git commands).
    const script = `base=$1 message=$2 ref=$3 haspatch=$4
git cat-file -e "$base^{commit}" 2>/dev/null || exit 8
git read-tree "$base" || exit 3
if [ "$haspatch" = 1 ]; then git apply --cached --binary --whitespace=nowarn || exit 4; fi
tree=$(git write-tree) || exit 5
basetree=$(git rev-parse "$base^{tree}") || exit 5
GIT_AUTHOR_NAME=$(git config user.name || echo orchestrate)
GIT_AUTHOR_EMAIL=$(git config user.email || echo orchestrate@localhost)
GIT_COMMITTER_NAME=$GIT_AUTHOR_NAME
GIT_COMMITTER_EMAIL=$GIT_AUTHOR_EMAIL
export GIT_AUTHOR_NAME GIT_AUTHOR_EMAIL GIT_COMMITTER_NAME GIT_COMMITTER_EMAIL
commit=$(git commit-tree --no-gpg-sign "$tree" -p "$base" -m "$message") || exit 6
git update-ref "$ref" "$commit" || exit 7
printf '%s\\n%s\\n%s\\n' "$commit" "$tree" "$basetree"
`;
    let r: Awaited<ReturnType<typeof productGitScript>>;
    try {
      r = await productGitScript(script, [args.baseCommit, args.message, args.ref, args.patch.trim() ? '1' : '0'], {
        cwd: args.repo,
        env: { GIT_INDEX_FILE: join(tmp, 'index'), GIT_AUTHOR_DATE: date, GIT_COMMITTER_DATE: date },
        writable: [tmp],
        input: args.patch,
      });
    } catch (err) {
      return { ok: false, error: err instanceof Error ? err.message : String(err) };
    }
    if (r.code === 4)
      return {
        ok: false,
        error: `the patch does not apply to ${args.baseCommit.slice(0, 12)}: ${firstLine(r.stderr)}`,
      };
    if (r.code === 8)
      return {
        ok: false,
        error: `${args.repo} no longer has ${args.baseCommit.slice(0, 12)}, the commit the change was made on (the repository was made again, or that history rewritten): fetch that commit into it again, or redo the change on its base branch as it is now (${args.rebaseCommand ?? 'orchestrate publish <run> --rebase <changeset>'})`,
      };
    if (r.code !== 0) return { ok: false, error: `cannot make the change's commit: ${firstLine(r.stderr)}` };
    const [commit, tree, baseTree] = r.stdout.toString('utf8').split('\n');
    return { ok: true, commit: commit!, empty: tree === baseTree };
  });
}

export type PushResult =
  | {
      ok: true;
      pushed: boolean;
      /** The remote branch's head, when it holds `commit` with someone's commits on top (left as they are). */
      builtOn?: string;
    }
  | { ok: false; refused: boolean; error: string };

/**
 * Puts `commit` on `branch` of the remote. `lastPushed` is the commit orchestrate pushed there
 * before (from changesets.json): only that commit may be replaced.
 */
export async function pushBranch(args: {
  repo: string;
  remote: ResolvedRemote;
  branch: string;
  commit: string;
  lastPushed?: string;
  auth?: PushAuth;
}): Promise<PushResult> {
  const { remote } = args;
  const missing = missingLocal(remote);
  if (missing) return { ok: false, refused: false, error: missing };
  const transport = pushTransport(remote, args.auth);
  const out = await networkGit<PushResult>(args.repo, [], async (g) => {
    const ls = await g.git(['ls-remote', '--heads', remote.url, `refs/heads/${args.branch}`], transport);
    if (ls.code !== 0)
      return {
        ok: false,
        refused: false,
        error: `cannot read ${remote.url}: ${gitError(ls.stderr, remote, args.auth)}`,
      };
    const line = ls.stdout
      .toString('utf8')
      .split('\n')
      .find((l) => l.endsWith(`\trefs/heads/${args.branch}`));
    const now = line?.split('\t')[0];
    if (now === args.commit) return { ok: true, pushed: false };
    // Someone built on orchestrate's commit (a reviewer's fixup) and the change is the same: there is
    // nothing to push, and their commits stay; the pull request can still be updated.
    if (now && now !== args.lastPushed && args.commit === args.lastPushed && (await holds(g, remote, transport, args)))
      return { ok: true, pushed: false, builtOn: now };
    if (now && now !== args.lastPushed)
      return {
        ok: false,
        refused: true,
        error: `refusing to push: ${args.branch} on ${remote.url} is at ${now.slice(0, 12)}, a commit orchestrate did not push${args.lastPushed ? ` (it pushed ${args.lastPushed.slice(0, 12)})` : ''}; someone else's work would be overwritten. Merge it by hand, or delete the branch to publish again`,
      };
    const lease = `--force-with-lease=refs/heads/${args.branch}:${now ?? ''}`;
    const r = await g.git(
      ['push', '--porcelain', lease, remote.url, `${args.commit}:refs/heads/${args.branch}`],
      transport,
    );
    if (r.code !== 0)
      return {
        ok: false,
        refused: /stale info|rejected/.test(r.stderr + r.stdout.toString('utf8')),
        error: `git push to ${remote.url} failed: ${gitError(r.stderr, remote, args.auth) || firstLine(r.stdout.toString('utf8'))}`,
      };
    return { ok: true, pushed: true };
  });
  return 'refused' in out || out.ok ? out : { ok: false, refused: false, error: out.error };
}

/** Whether the remote `branch` (fetched into the throwaway folder only) has `commit` in its history. */
async function holds(
  g: NetworkGit,
  remote: ResolvedRemote,
  transport: NetworkTransport,
  args: { branch: string; commit: string },
): Promise<boolean> {
  // The commit as a ref, so the fetch brings only what was added on top of it.
  await g.git(['update-ref', 'refs/orchestrate/have/pushed', args.commit], { kind: 'local', path: g.dir });
  const ref = 'refs/orchestrate/theirs';
  const f = await g.git(
    ['fetch', '--no-tags', '--quiet', '--no-write-fetch-head', remote.url, `+refs/heads/${args.branch}:${ref}`],
    transport,
  );
  if (f.code !== 0) return false;
  const a = await g.git(['merge-base', '--is-ancestor', args.commit, ref], { kind: 'local', path: g.dir });
  return a.code === 0;
}

/** Deletes the branch on the remote, only while it is at the commit orchestrate pushed. */
export async function deleteBranch(args: {
  repo: string;
  remote: ResolvedRemote;
  branch: string;
  lastPushed: string;
  auth?: PushAuth;
}): Promise<{ ok: true } | { ok: false; error: string }> {
  const { remote } = args;
  return networkGit(args.repo, [], async (g) => {
    const r = await g.git(
      [
        'push',
        '--porcelain',
        `--force-with-lease=refs/heads/${args.branch}:${args.lastPushed}`,
        remote.url,
        `:refs/heads/${args.branch}`,
      ],
      pushTransport(remote, args.auth),
    );
    return r.code === 0
      ? { ok: true as const }
      : { ok: false as const, error: `cannot delete ${args.branch}: ${gitError(r.stderr, remote, args.auth)}` };
  });
}

/**
 * git's reason, and what to do when the server asked for credentials (git cannot prompt here, so
 * it says only that it could not read a user name): the token was not sent to that host, or it was
 * refused; over ssh, what the user's ssh needs.
 */
function gitError(stderr: string, remote: ResolvedRemote, auth: PushAuth | undefined): string {
  const line = firstLine(stderr);
  if (remote.via === 'ssh') {
    if (/Host key verification failed|No \S+ host key is known/i.test(stderr))
      return `${line} (the host is not in your known_hosts: connect once with ssh, or add it with ssh-keyscan)`;
    if (/Permission denied \(publickey/i.test(stderr))
      return `${line} (ssh found no key the server accepts: load it into your ssh agent (ssh-add, SSH_AUTH_SOCK), or name it in ~/.ssh/config or GIT_SSH_COMMAND)`;
    return line;
  }
  if (!/askpass|could not read Username|Authentication failed|terminal prompts disabled|\b40[13]\b/i.test(stderr))
    return line;
  const host = hostOf(remote.url);
  if (!auth) return `${line} (the server asks for credentials and orchestrate has no token for this forge)`;
  if (host !== auth.host)
    return `${line} (the server asks for credentials, and the token goes only to ${auth.host}, the forge's host: this remote is on ${host}; point publish.remote at ${auth.host}, or publish.base_url at this remote's forge)`;
  return `${line} (${auth.host} refused the token: check that it may push to this repository)`;
}

function firstLine(text: string): string {
  return (
    text
      .split('\n')
      .map((l) => l.trim())
      .find(Boolean) ?? ''
  );
}
