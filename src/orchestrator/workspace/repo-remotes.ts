// The remotes a repository had before any agent ran in it. The model can rewrite its repository's
// config (`git remote set-url origin <elsewhere>`, a `pushurl`), so a publish `remote:` given as a
// remote's name must not be read from the repository at publish time: before the run's first
// snapshot of each repository its `remote.<name>.url` keys are read once (RemoteRecorder, through
// the product's git pinned to the trusted repository), the run log keeps them on `instance_start`
// (`remotes`, folded into the instance's git record), and publishing, `publish --rebase` and
// `status` resolve a name from that record. A recorded URL never holds credentials: the userinfo
// of `https://user:token@host/...` is dropped before it is written anywhere.
import { getInstance, type RunState } from '../../run/run-fold.js';
import { productGit } from '../../tools/product-git.js';
import { pinnedGitEnv, trustedRepository } from './repo-trust.js';

/** Remote name → URL, as the repository's config had them. */
export type RemoteUrls = Record<string, string>;

/**
 * `url` without credentials: an ssh URL keeps its user name (the login, not a secret) and loses a
 * password; any other `scheme://user[:password]@host` loses its userinfo. scp-like addresses
 * (`git@host:path`) and paths have none.
 */
export function withoutCredentials(url: string): string {
  const m = /^([a-z][a-z0-9+.-]*:\/\/)([^/?#]*@)(.*)$/is.exec(url);
  if (!m) return url;
  const [, scheme, userinfo, rest] = m as unknown as [string, string, string, string];
  if (/^(ssh|git\+ssh|ssh\+git):\/\/$/i.test(scheme)) {
    const user = userinfo.slice(0, -1).split(':')[0];
    return user ? `${scheme}${user}@${rest}` : `${scheme}${rest}`;
  }
  return `${scheme}${rest}`;
}

/**
 * The remote URLs in the output of `git config -z --get-regexp '^remote\..*\.url$'` (entries
 * `remote.<name>.url\n<value>\0`; a name may hold dots), credentials removed. A name listed twice
 * keeps its first URL, the one git pushes to.
 */
export function remotesFromConfig(zOutput: string): RemoteUrls {
  const out: RemoteUrls = {};
  for (const entry of zOutput.split('\0')) {
    const nl = entry.indexOf('\n');
    if (nl < 0) continue;
    const name = /^remote\.(.+)\.url$/i.exec(entry.slice(0, nl))?.[1];
    const url = entry.slice(nl + 1);
    if (name && url && !(name in out)) out[name] = withoutCredentials(url);
  }
  return out;
}

/**
 * The remotes recorded for the repository of an instance (`task`/`key`): its own record, else the
 * record of another instance of the same repository (the first in the log that has one). Undefined for a run
 * recorded before remotes were recorded.
 */
export function recordedRemotes(fold: RunState, task: string, key: string): RemoteUrls | undefined {
  const inst = getInstance(fold, task, key);
  if (!inst?.git) return undefined;
  if (inst.git.remotes) return inst.git.remotes;
  const root = inst.git.root;
  for (const other of fold.instances.values())
    if (other.git?.root === root && other.git.remotes) return other.git.remotes;
  return undefined;
}

/** Reads a repository's remote URLs; undefined when git cannot say (then nothing is recorded). */
export async function readRemotes(dir: string): Promise<RemoteUrls | undefined> {
  const trusted = trustedRepository(dir);
  if (!trusted.ok) return undefined;
  const loc = trusted.location;
  try {
    const r = await productGit(['config', '-z', '--get-regexp', '^remote\\..*\\.url$'], {
      cwd: loc.top,
      env: pinnedGitEnv(loc),
    });
    // Exit 1: no key matched (a repository without remotes, which is worth recording too).
    if (r.code === 1 && r.stdout.length === 0) return {};
    return r.code === 0 ? remotesFromConfig(r.stdout.toString('utf8')) : undefined;
  } catch {
    return undefined;
  }
}

/**
 * The run's reads of remotes: one per repository (by its object store, where the config lives,
 * shared by its worktrees), started by the first instance that prepares a workspace there and
 * awaited by every instance before its agent starts, so it is always read before any agent of
 * this process ran there.
 */
export class RemoteRecorder {
  private readonly reads = new Map<string, Promise<RemoteUrls | undefined>>();

  of(root: string): Promise<RemoteUrls | undefined> {
    const trusted = trustedRepository(root);
    const key = trusted.ok ? trusted.location.commonDir : root;
    let read = this.reads.get(key);
    if (!read) {
      read = readRemotes(root);
      this.reads.set(key, read);
    }
    return read;
  }
}
