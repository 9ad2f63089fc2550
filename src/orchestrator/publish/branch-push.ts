// The git half of publishing a changeset: the change's commit (the instance's patch on the commit
// it started from, with fixed dates so the same change always makes the same commit: applying
// twice pushes nothing) and the push of that commit to the changeset's branch on the remote.
//
// A push never overwrites work it did not make: the remote branch must be missing, already at
// this commit, or at the commit orchestrate pushed last (then it is replaced with a lease on that
// exact commit, so a commit someone adds meanwhile still makes the push fail). Anything else is
// refused with the reason.
//
// Every git runs through tools/product-git (sanitized environment, the repository's program keys
// disabled, sandboxed): the repository is the model's to configure. A push over https is the only
// git given the network, and its token travels as a config key in the environment, never in argv.
import { existsSync } from 'node:fs';
import { isAbsolute, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { productGit, productGitScript, withProductTemp } from '../../tools/product-git.js';
import { git } from '../git-workspace.js';

export interface PushAuth {
  /** Host the token may be sent to (the forge's). */
  host: string;
  /** The Authorization header value (Basic ...): set only for a remote on `host`. */
  header: string;
}

/**
 * Where the remote is: its URL (a remote name read from the repository; ./ and ../ paths from the
 * run's root), and a local folder when it is one.
 */
export async function resolveRemote(
  repo: string,
  remote: string,
  root: string,
): Promise<{ ok: true; url: string; localPath?: string } | { ok: false; error: string }> {
  // ./x and ../x: a local repository, relative to the run's root (the recipe's folder).
  if (remote.startsWith('./') || remote.startsWith('../')) {
    const localPath = resolve(root, remote);
    return { ok: true, url: localPath, localPath };
  }
  let url = remote;
  if (!/[:/]/.test(remote)) {
    const r = await git(['config', '--get', `remote.${remote}.url`], repo);
    if (!r.ok || !r.stdout.trim())
      return {
        ok: false,
        error: `${repo} has no remote "${remote}"; set publish.remote to a URL or to one of its remotes`,
      };
    url = r.stdout.trim();
  }
  if (url.startsWith('file://')) return { ok: true, url, localPath: fileURLToPath(url) };
  if (isAbsolute(url)) return { ok: true, url, localPath: url };
  if (/^https:\/\//.test(url)) {
    if (/^https:\/\/[^/]*@/.test(url))
      return {
        ok: false,
        error:
          'the remote URL holds credentials; give it without them (the token comes from GITHUB_TOKEN/GITLAB_TOKEN)',
      };
    return { ok: true, url };
  }
  return {
    ok: false,
    error: `remote ${url}: orchestrate pushes over https:// or to a local repository (file:// or a path); ssh is not supported`,
  };
}

function hostOf(url: string): string | undefined {
  try {
    return new URL(url).host;
  } catch {
    return undefined;
  }
}

/** How to reach `url` with product git: the folders it writes, the network and auth for https. */
export function pushTransport(url: string, localPath: string | undefined, auth: PushAuth | undefined) {
  if (localPath) return { writable: [localPath] };
  const config: [string, string][] = [];
  // The token goes to the forge's own host only (a remote the model redirected gets none).
  if (auth && hostOf(url) === auth.host) config.push([`http.${url}.extraHeader`, `Authorization: ${auth.header}`]);
  return { network: true, config };
}

/** The commit the remote branch is at, undefined when it has none; an error when the remote cannot be read. */
export async function remoteBranchCommit(
  repo: string,
  url: string,
  localPath: string | undefined,
  branch: string,
  auth?: PushAuth,
): Promise<{ ok: true; commit?: string } | { ok: false; error: string }> {
  if (localPath && !existsSync(localPath)) return { ok: false, error: `the remote ${localPath} does not exist` };
  const r = await productGit(['ls-remote', '--heads', url, `refs/heads/${branch}`], {
    cwd: repo,
    ...pushTransport(url, localPath, auth),
  });
  if (r.code !== 0) return { ok: false, error: `cannot read ${url}: ${gitError(r.stderr, url, auth)}` };
  const line = r.stdout
    .toString('utf8')
    .split('\n')
    .find((l) => l.endsWith(`\trefs/heads/${branch}`));
  return { ok: true, ...(line ? { commit: line.split('\t')[0] } : {}) };
}

/**
 * Fetches `branch` of the remote into `repo` (kept as refs/orchestrate/base/<branch>, so the
 * user's branches and FETCH_HEAD stay as they are): the commit it is at now.
 */
export async function fetchBranch(
  repo: string,
  url: string,
  localPath: string | undefined,
  branch: string,
  auth?: PushAuth,
): Promise<{ ok: true; commit: string } | { ok: false; error: string }> {
  if (localPath && !existsSync(localPath)) return { ok: false, error: `the remote ${localPath} does not exist` };
  const ref = `refs/orchestrate/base/${branch}`;
  const r = await productGit(
    ['fetch', '--no-tags', '--quiet', '--no-write-fetch-head', url, `+refs/heads/${branch}:${ref}`],
    { cwd: repo, ...pushTransport(url, localPath, auth) },
  );
  if (r.code !== 0) return { ok: false, error: `cannot fetch ${branch} from ${url}: ${gitError(r.stderr, url, auth)}` };
  const c = await git(['rev-parse', '--verify', '-q', `${ref}^{commit}`], repo);
  return c.ok && c.stdout.trim()
    ? { ok: true, commit: c.stdout.trim() }
    : { ok: false, error: `fetched ${branch} from ${url}, but ${repo} cannot read its commit` };
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
}): Promise<{ ok: true; commit: string; empty: boolean } | { ok: false; error: string }> {
  return withProductTemp('orchestrate-publish-', async (tmp) => {
    const date = `${Math.floor(args.whenMs / 1000)} +0000`;
    // One sandboxed shell for the whole commit (a sandbox start costs more than the git commands).
    const script = `base=$1 message=$2 ref=$3 haspatch=$4
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
    if (r.code !== 0) return { ok: false, error: `cannot make the change's commit: ${firstLine(r.stderr)}` };
    const [commit, tree, baseTree] = r.stdout.toString('utf8').split('\n');
    return { ok: true, commit: commit!, empty: tree === baseTree };
  });
}

export type PushResult = { ok: true; pushed: boolean } | { ok: false; refused: boolean; error: string };

/**
 * Puts `commit` on `branch` of the remote. `lastPushed` is the commit orchestrate pushed there
 * before (from changesets.json): only that commit may be replaced.
 */
export async function pushBranch(args: {
  repo: string;
  url: string;
  localPath?: string;
  branch: string;
  commit: string;
  lastPushed?: string;
  auth?: PushAuth;
}): Promise<PushResult> {
  const now = await remoteBranchCommit(args.repo, args.url, args.localPath, args.branch, args.auth);
  if (!now.ok) return { ok: false, refused: false, error: now.error };
  if (now.commit === args.commit) return { ok: true, pushed: false };
  if (now.commit && now.commit !== args.lastPushed)
    return {
      ok: false,
      refused: true,
      error: `refusing to push: ${args.branch} on ${args.url} is at ${now.commit.slice(0, 12)}, a commit orchestrate did not push${args.lastPushed ? ` (it pushed ${args.lastPushed.slice(0, 12)})` : ''}; someone else's work would be overwritten. Merge it by hand, or delete the branch to publish again`,
    };
  const lease = `--force-with-lease=refs/heads/${args.branch}:${now.commit ?? ''}`;
  const r = await productGit(['push', '--porcelain', lease, args.url, `${args.commit}:refs/heads/${args.branch}`], {
    cwd: args.repo,
    ...pushTransport(args.url, args.localPath, args.auth),
  });
  if (r.code !== 0)
    return {
      ok: false,
      refused: /stale info|rejected/.test(r.stderr + r.stdout.toString('utf8')),
      error: `git push to ${args.url} failed: ${gitError(r.stderr, args.url, args.auth) || firstLine(r.stdout.toString('utf8'))}`,
    };
  return { ok: true, pushed: true };
}

/** Deletes the branch on the remote, only while it is at the commit orchestrate pushed. */
export async function deleteBranch(args: {
  repo: string;
  url: string;
  localPath?: string;
  branch: string;
  lastPushed: string;
  auth?: PushAuth;
}): Promise<{ ok: true } | { ok: false; error: string }> {
  const r = await productGit(
    [
      'push',
      '--porcelain',
      `--force-with-lease=refs/heads/${args.branch}:${args.lastPushed}`,
      args.url,
      `:refs/heads/${args.branch}`,
    ],
    { cwd: args.repo, ...pushTransport(args.url, args.localPath, args.auth) },
  );
  return r.code === 0
    ? { ok: true }
    : { ok: false, error: `cannot delete ${args.branch}: ${gitError(r.stderr, args.url, args.auth)}` };
}

/**
 * git's reason, and what to do when the server asked for credentials (git cannot prompt here, so
 * it says only that it could not read a user name): the token was not sent to that host, or it was
 * refused.
 */
function gitError(stderr: string, url: string, auth: PushAuth | undefined): string {
  const line = firstLine(stderr);
  if (!/askpass|could not read Username|Authentication failed|terminal prompts disabled|\b40[13]\b/i.test(stderr))
    return line;
  const host = hostOf(url);
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
