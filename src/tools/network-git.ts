// The only git the product lets reach the network (ls-remote, fetch and push when publishing, and
// the base branch `publish --rebase` and `status` fetch) runs here, in a git folder the product
// makes for the one operation and removes after it, never in the workspace's own.
//
// Why: the workspace's repository is the model's to configure. Overriding the config keys known to
// matter (http.proxy, http.sslVerify, url.<x>.insteadOf, http.<url>.*, include.path ...) is a
// denylist that the next key, or a key a future git adds, reopens: an agent that ran
// `git config http.proxy http://127.0.0.1:P` got the forge token sent through its proxy. So the
// network git reads no repository config at all:
//  - the throwaway folder holds HEAD, refs/ (only refs the product writes, to commits it recorded)
//    and objects/ whose info/alternates points at the workspace's object store: git reads the
//    workspace's objects and nothing else of it (no config, hooks, attributes, refs, shallow or
//    grafts);
//  - the environment is product-git's allowlist with GIT_CONFIG_NOSYSTEM and the product's own
//    global config (the user's identity and the CA file their git trusts), plus GIT_DIR;
//  - the URL and the token's host are decided by the caller from the recipe and the run record.
// Objects a fetch brings are copied into the workspace's store by the product (keepFetched).
//
// The workspace's `.git` and `commondir` are followed only inside the workspace: a model-written
// `.git` file (`gitdir: x`, `x/commondir` naming another repository) is refused with the reason,
// so the product never reads, nor copies objects into, a repository the run was not given.
//
// https and local pushes run in the sandbox (network only for https; the object store read-only).
// ssh runs outside it: it needs the user's ssh agent, ~/.ssh/config and known_hosts, which the
// sandbox hides by design, and nothing in this folder names a program the model chose.
import {
  copyFileSync,
  existsSync,
  lstatSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  realpathSync,
  writeFileSync,
} from 'node:fs';
import { isAbsolute, join, resolve, sep } from 'node:path';
import { type ProductCommandResult, configEnv, productGit, runProductCommand, withProductTemp } from './product-git.js';

/** How the remote is reached: decided by the caller from the recipe, never from the workspace. */
export type NetworkTransport =
  /** A repository on this machine (file:// or a path): the sandbox may write it, no network. */
  | { kind: 'local'; path: string }
  /** https: the sandbox keeps its network; `header` (Authorization) is sent to `url` only; the user's proxy variables from `userEnv`. */
  | { kind: 'https'; url: string; header?: string; userEnv?: UserEnv }
  /** ssh with the user's ssh (GIT_SSH_COMMAND / GIT_SSH / SSH_AUTH_SOCK of `userEnv`, else ssh -o BatchMode=yes). */
  | { kind: 'ssh'; userEnv?: UserEnv };

/** The environment of the user who runs orchestrate (default process.env): never the workspace's. */
export type UserEnv = Readonly<Record<string, string | undefined>>;

/** The workspace's repository cannot be used safely (its `.git` or `commondir` leads outside it). */
export class WorkspaceRepositoryError extends Error {}

function inside(parent: string, child: string): boolean {
  return child === parent || child.startsWith(parent.endsWith(sep) ? parent : parent + sep);
}

/**
 * The object store of the repository whose work tree is `top`, found without running git and
 * followed only inside `top` (its realpath): `.git` a folder or a file naming one, its `commondir`.
 */
export function workspaceObjectStore(top: string): { objects: string; commonDir: string } {
  let realTop: string;
  try {
    realTop = realpathSync(top);
  } catch {
    throw new WorkspaceRepositoryError(`${top} does not exist`);
  }
  const dotGit = join(realTop, '.git');
  const outside = (what: string, where: string) =>
    new WorkspaceRepositoryError(
      `${what} points at ${where}, outside the repository ${realTop}: orchestrate reads only a repository's own objects when it publishes (a \`.git\` file or commondir naming another repository is refused); publish from a checkout whose .git folder is inside it (a clone), or fix ${what}`,
    );
  let gitDir: string;
  try {
    const st = lstatSync(dotGit);
    if (st.isFile()) {
      const pointed = /^gitdir:\s*(.+?)\s*$/m.exec(readFileSync(dotGit, 'utf8'))?.[1];
      if (!pointed) throw new WorkspaceRepositoryError(`${dotGit} is a file without a "gitdir:" line`);
      gitDir = realpathSync(resolve(realTop, pointed));
    } else gitDir = realpathSync(dotGit);
  } catch (err) {
    if (err instanceof WorkspaceRepositoryError) throw err;
    throw new WorkspaceRepositoryError(`${realTop} is not a git repository (no usable .git)`);
  }
  if (!inside(realTop, gitDir)) throw outside(`${dotGit}`, gitDir);
  let commonDir = gitDir;
  const commondirFile = join(gitDir, 'commondir');
  if (existsSync(commondirFile)) {
    const named = readFileSync(commondirFile, 'utf8').trim();
    try {
      commonDir = realpathSync(isAbsolute(named) ? named : resolve(gitDir, named));
    } catch {
      throw new WorkspaceRepositoryError(`${commondirFile} names ${named}, which does not exist`);
    }
    if (!inside(realTop, commonDir)) throw outside(commondirFile, commonDir);
  }
  let objects: string;
  try {
    objects = realpathSync(join(commonDir, 'objects'));
  } catch {
    throw new WorkspaceRepositoryError(`${commonDir} has no objects folder: not a git repository`);
  }
  if (!inside(realTop, objects)) throw outside(join(commonDir, 'objects'), objects);
  return { objects, commonDir };
}

/** The object store of a git folder the caller has vetted (its layout checked, e.g. a linked worktree's common folder). */
function storeOf(commonDir: string): { objects: string; commonDir: string } {
  try {
    return { objects: realpathSync(join(commonDir, 'objects')), commonDir };
  } catch {
    throw new WorkspaceRepositoryError(`${commonDir} has no objects folder: not a git repository`);
  }
}

/**
 * The object stores git will read from `objects`: itself and its alternates, followed as git does
 * (one path a line, relative to the store naming it), so the sandbox can show them read-only.
 */
function storesOf(objects: string): string[] {
  const seen = new Set<string>();
  const visit = (dir: string, depth: number): void => {
    if (seen.has(dir) || depth > 5) return;
    seen.add(dir);
    let listed: string;
    try {
      listed = readFileSync(join(dir, 'info', 'alternates'), 'utf8');
    } catch {
      return;
    }
    for (const line of listed.split('\n')) {
      const p = line.trim();
      if (!p || p.startsWith('#')) continue;
      try {
        visit(realpathSync(resolve(dir, p)), depth + 1);
      } catch {
        // a missing alternate: git says so itself if it needs an object from it
      }
    }
  };
  visit(objects, 0);
  return [...seen];
}

/** A git folder of the product's, for one network operation on one workspace. */
export interface NetworkGit {
  /** The throwaway git folder (GIT_DIR of every command). */
  readonly dir: string;
  /** Runs `git args` in the throwaway folder, reaching the remote by `transport`. */
  git(args: readonly string[], transport: NetworkTransport): Promise<ProductCommandResult>;
  /** Copies the objects a fetch brought into the workspace's object store (packs, then any loose object). */
  keepFetched(): void;
}

/** The user's proxy variables, which a network git over https keeps (the user's own network, never the workspace's). */
const HTTPS_PROXY_VARS = [
  'https_proxy',
  'HTTPS_PROXY',
  'http_proxy',
  'HTTP_PROXY',
  'all_proxy',
  'ALL_PROXY',
  'no_proxy',
  'NO_PROXY',
];

function shellQuote(s: string): string {
  return `'${s.replace(/'/g, `'\\''`)}'`;
}

function transportEnv(transport: NetworkTransport): Record<string, string> {
  const env: Record<string, string> = {};
  const parent = (transport.kind !== 'local' ? transport.userEnv : undefined) ?? process.env;
  if (transport.kind === 'https')
    for (const k of HTTPS_PROXY_VARS) {
      const v = parent[k];
      if (v) env[k] = v;
    }
  if (transport.kind === 'ssh') {
    // GIT_SSH_COMMAND wins over core.sshCommand (overridden to false for every product git).
    const command = parent.GIT_SSH_COMMAND || (parent.GIT_SSH ? shellQuote(parent.GIT_SSH) : 'ssh -o BatchMode=yes');
    env.GIT_SSH_COMMAND = command;
    if (parent.GIT_SSH_VARIANT) env.GIT_SSH_VARIANT = parent.GIT_SSH_VARIANT;
    if (parent.SSH_AUTH_SOCK) env.SSH_AUTH_SOCK = parent.SSH_AUTH_SOCK;
    // A command saying ~/.ssh/key means the user's home; git's own config stays the product's
    // (GIT_CONFIG_GLOBAL, GIT_CONFIG_NOSYSTEM), whatever HOME says.
    if (parent.HOME) env.HOME = parent.HOME;
  }
  return env;
}

function transportConfig(transport: NetworkTransport): [string, string][] {
  const keys: [string, string][] = [
    // The store's alternates are not asked for their refs (that would run git in the workspace).
    ['core.alternateRefsCommand', 'true'],
    // A fetch keeps what it got as a pack (copied into the workspace whole by keepFetched).
    ['fetch.unpackLimit', '1'],
    ['transfer.unpackLimit', '1'],
  ];
  if (transport.kind === 'ssh') keys.push(['protocol.ssh.allow', 'always']);
  if (transport.kind === 'https' && transport.header)
    keys.push([`http.${transport.url}.extraHeader`, `Authorization: ${transport.header}`]);
  return keys;
}

/**
 * Makes the throwaway git folder for a repository (the work tree at `repository`, checked by
 * workspaceObjectStore, or the common git folder of one the caller checked), with
 * refs/orchestrate/have/N at each of `haves` that exists there (a fetch then sends only what is
 * new), runs `fn`, removes it.
 */
export async function withNetworkGit<T>(
  repository: string | { commonDir: string },
  haves: readonly string[],
  fn: (g: NetworkGit) => Promise<T>,
): Promise<T> {
  const { objects } = typeof repository === 'string' ? workspaceObjectStore(repository) : storeOf(repository.commonDir);
  const stores = storesOf(objects);
  return withProductTemp('orchestrate-netgit-', async (tmp) => {
    const dir = join(tmp, 'git');
    mkdirSync(join(dir, 'objects', 'info'), { recursive: true });
    mkdirSync(join(dir, 'refs'));
    writeFileSync(join(dir, 'HEAD'), 'ref: refs/heads/orchestrate-none\n');
    writeFileSync(join(dir, 'objects', 'info', 'alternates'), `${objects}\n`);
    const run = (args: readonly string[], transport: NetworkTransport | undefined, script?: string) => {
      const t = transport ?? { kind: 'local' as const, path: dir };
      const config = configEnv({
        cwd: dir,
        network: t.kind === 'https',
        config: transport ? transportConfig(t) : [],
      });
      return runProductCommand(
        'git',
        script ? 'sh' : 'git',
        script ? ['-c', script, 'orchestrate-git', ...args] : [...args],
        { ...config, ...transportEnv(t), GIT_DIR: dir },
        {
          cwd: dir,
          writable: [tmp, ...(t.kind === 'local' ? [t.path] : [])],
          readOnly: stores,
          ...(t.kind === 'https' ? { network: true } : {}),
          ...(t.kind === 'ssh' ? { unconfined: true } : {}),
        },
        'publishing',
        false,
      );
    };
    const wanted = haves.filter((h) => /^[0-9a-f]{40,64}$/.test(h));
    if (wanted.length) {
      // update-ref checks that each commit is there; one missing is only one have fewer.
      await run(
        wanted,
        undefined,
        'n=0; for c in "$@"; do git update-ref "refs/orchestrate/have/$n" "$c" 2>/dev/null; n=$((n+1)); done; exit 0',
      );
    }
    const g: NetworkGit = {
      dir,
      git: (args, transport) => run(args, transport),
      keepFetched: () => copyObjects(join(dir, 'objects'), objects),
    };
    return fn(g);
  });
}

/** Copies the object files under `from` (but info/) into `to` where missing: packs before their index. */
function copyObjects(from: string, to: string): void {
  for (const name of readdirSync(from)) {
    if (name === 'info') continue;
    const src = join(from, name);
    const dst = join(to, name);
    if (!lstatSync(src).isDirectory()) continue;
    mkdirSync(dst, { recursive: true });
    const files = readdirSync(src).sort((a, b) => rank(a) - rank(b));
    for (const f of files) {
      const s = join(src, f);
      if (!lstatSync(s).isFile() || existsSync(join(dst, f))) continue;
      copyFileSync(s, join(dst, f));
    }
  }
}

/** .pack first, then the rest, .idx last: a reader never finds an index without its pack. */
function rank(file: string): number {
  return file.endsWith('.pack') ? 0 : file.endsWith('.idx') ? 2 : 1;
}

/** Writes `ref` in the workspace at `commit` (after keepFetched), with the workspace's product git (no network). */
export async function setWorkspaceRef(top: string, ref: string, commit: string): Promise<boolean> {
  const r = await productGit(['update-ref', ref, commit], { cwd: top });
  return r.code === 0;
}
