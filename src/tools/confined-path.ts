// Race-free path resolution for the file tools. A check of a path string followed by an open of
// the same string leaves a window in which a folder on the way can be swapped for a symbolic link
// (a parallel bash call: `mv d d.real && ln -s /elsewhere d`), so the open lands outside the
// workspace. Here nothing is opened by a path string that a later swap could redirect: the walk
// starts at an open descriptor of the workspace root and opens each folder below it through the
// previous folder's descriptor (`/proc/self/fd/<fd>/<name>`, Linux's openat) with O_NOFOLLOW, so
// a symlink on the way is seen, never silently followed. A symlink is followed by hand: its target
// must lie inside the workspace, and the walk restarts from the root along the target. The
// result is a folder descriptor plus a final name; callers open, create or rename that name
// through the descriptor (O_NOFOLLOW on the final open), so a folder swapped after the walk
// changes nothing: the descriptor still names the folder that was checked.
//
// Where /proc/self/fd is missing (not Linux) the walk falls back to the checked path strings.
import { closeSync, constants, existsSync, lstatSync, mkdirSync, openSync, readlinkSync, realpathSync } from 'node:fs';
import { basename, dirname, isAbsolute, join, relative, resolve, sep } from 'node:path';

const PROC_FD = '/proc/self/fd';
const MAX_LINK_HOPS = 40;
const DIR_FLAGS = constants.O_RDONLY | constants.O_DIRECTORY | constants.O_NOFOLLOW;

let procUsable: boolean | undefined;
/** Whether folders can be reached through their descriptors here (Linux with /proc mounted). */
export function descriptorPathsWork(): boolean {
  procUsable ??= process.platform === 'linux' && existsSync(`${PROC_FD}/0`);
  return procUsable;
}

/** A located entry: its folder, held open, and its name in that folder (never a symlink when located). */
export interface ConfinedEntry {
  /** A path that reaches the folder through its descriptor (or the real folder path in the fallback). */
  readonly dir: string;
  /** The final name ('' when the entry is the workspace root itself). */
  readonly name: string;
  /** The entry through its folder's descriptor: use it for every operation on the entry. */
  readonly path: string;
  /** Where the entry really is (for messages and the hidden-folder check), as of the walk. */
  readonly real: string;
  /** Closes the folder's descriptor. */
  close(): void;
}

/** Refusal of a path: the walk met a link that leads outside, or a folder the tools may not touch. */
export class ConfinementError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ConfinementError';
  }
}

export interface LocateOptions {
  /** The workspace root's real path. */
  root: string;
  /** Create missing folders on the way (write). */
  createParents?: boolean;
  /** Called with a real path whenever the walk reaches a new place; throws to refuse it. */
  check?: (real: string) => void;
  /** What the user wrote, for messages. */
  shown: string;
  /** The path named in file system errors (default: shown). */
  errorPath?: string;
}

function isInside(parent: string, child: string): boolean {
  const rel = relative(parent, child);
  return rel === '' || (!isAbsolute(rel) && rel !== '..' && !rel.startsWith(`..${sep}`));
}

function fdPath(fd: number): string {
  return `${PROC_FD}/${fd}`;
}

function realOfFd(fd: number): string {
  return readlinkSync(fdPath(fd));
}

function outside(shown: string, target: string, root: string): ConfinementError {
  return new ConfinementError(
    `Path "${shown}" leads through a symbolic link to ${target}, outside the workspace ${root}; tools may only use files under it. Use a path whose real location is inside the workspace.`,
  );
}

function isLink(path: string): boolean {
  try {
    return lstatSync(path).isSymbolicLink();
  } catch {
    return false;
  }
}

/**
 * Walks `abs` (absolute, lexically inside `root`) from the root, one descriptor per folder, and
 * returns the folder holding the final name. Symlinks on the way (and at the end: the final
 * name is followed when it is a link) must lead inside the root. A missing folder on the way is
 * created with `createParents`, otherwise ENOENT is thrown.
 */
export function locateConfined(abs: string, options: LocateOptions): ConfinedEntry {
  try {
    return descriptorPathsWork() ? walk(abs, options, 0) : fallback(abs, options);
  } catch (err) {
    throw withShownPath(err, options.errorPath ?? options.shown);
  }
}

/** A file system error names the path the user wrote, not the /proc/self/fd path it was reached by. */
export function withShownPath(err: unknown, shown: string): unknown {
  const e = err as NodeJS.ErrnoException;
  if (e instanceof Error && typeof e.path === 'string') {
    e.message = e.message.replace(`'${e.path}'`, `'${shown}'`);
    e.path = shown;
  }
  return err;
}

function walk(abs: string, options: LocateOptions, hops: number): ConfinedEntry {
  const { root } = options;
  if (!isInside(root, abs)) throw outside(options.shown, abs, root);
  const parts = relative(root, abs).split(sep).filter(Boolean);
  let fd = openSync(root, DIR_FLAGS);
  try {
    options.check?.(root);
    if (parts.length === 0) {
      const found = entry(fd, '', root);
      fd = -1; // the entry owns it now
      return found;
    }
    for (let i = 0; i < parts.length - 1; i++) {
      const name = parts[i]!;
      const next = openChildDir(fd, name, options.createParents ?? false);
      if (typeof next === 'string') {
        // A symlinked folder: go on from its target, checked like any other path.
        const target = resolve(realOfFd(fd), next, ...parts.slice(i + 1));
        closeSync(fd);
        fd = -1;
        return follow(target, options, hops);
      }
      closeSync(fd);
      fd = next;
      options.check?.(realOfFd(fd));
    }
    const name = parts[parts.length - 1]!;
    const finalPath = `${fdPath(fd)}/${name}`;
    if (isLink(finalPath)) {
      const target = resolve(realOfFd(fd), readlinkSync(finalPath));
      closeSync(fd);
      fd = -1;
      return follow(target, options, hops);
    }
    const real = join(realOfFd(fd), name);
    options.check?.(real);
    const found = entry(fd, name, real);
    fd = -1;
    return found;
  } finally {
    if (fd >= 0) closeSync(fd);
  }
}

function follow(target: string, options: LocateOptions, hops: number): ConfinedEntry {
  if (hops >= MAX_LINK_HOPS)
    throw Object.assign(new Error(`Too many levels of symbolic links in "${options.shown}"`), { code: 'ELOOP' });
  if (!isInside(options.root, target)) throw outside(options.shown, target, options.root);
  return walk(target, options, hops + 1);
}

/** Opens folder `name` below `fd` without following a link; a link's target (string) is returned instead. */
function openChildDir(fd: number, name: string, create: boolean): number | string {
  const path = `${fdPath(fd)}/${name}`;
  for (let attempt = 0; ; attempt++) {
    try {
      return openSync(path, DIR_FLAGS);
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      if ((code === 'ELOOP' || code === 'ENOTDIR') && isLink(path)) return readlinkSync(path);
      if (code === 'ENOENT' && create && attempt < 3) {
        try {
          mkdirSync(path); // through the descriptor: the folder is made where the walk is
        } catch (mkErr) {
          if ((mkErr as NodeJS.ErrnoException).code !== 'EEXIST') throw mkErr;
        }
        continue;
      }
      throw err;
    }
  }
}

function entry(fd: number, name: string, real: string): ConfinedEntry {
  const dir = fdPath(fd);
  let open = true;
  return {
    dir,
    name,
    path: name === '' ? dir : `${dir}/${name}`,
    real,
    close() {
      if (!open) return;
      open = false;
      closeSync(fd);
    },
  };
}

/** Without /proc: the checked path strings (the window between check and open remains). */
function fallback(abs: string, options: LocateOptions, hops = 0): ConfinedEntry {
  const { root } = options;
  let dir = dirname(abs);
  if (options.createParents) mkdirSync(dir, { recursive: true });
  dir = realpathSync(dir);
  if (!isInside(root, dir)) throw outside(options.shown, dir, root);
  const name = abs === root ? '' : basename(abs);
  const path = name === '' ? root : join(dir, name);
  if (name !== '' && isLink(path)) {
    if (hops >= MAX_LINK_HOPS)
      throw Object.assign(new Error(`Too many levels of symbolic links in "${options.shown}"`), { code: 'ELOOP' });
    const target = resolve(dir, readlinkSync(path));
    if (!isInside(root, target)) throw outside(options.shown, target, root);
    return fallback(target, options, hops + 1);
  }
  options.check?.(path);
  return { dir: name === '' ? root : dir, name, path, real: path, close() {} };
}

/** Opens a folder's entries for listing: the folder `entry` names, through its descriptor. */
export function openConfinedDir(entry: ConfinedEntry): { path: string; close(): void } {
  if (!descriptorPathsWork()) return { path: entry.path, close() {} };
  // The root itself is reached through its descriptor's magic link, which O_NOFOLLOW would refuse.
  const fd = openSync(entry.path, entry.name === '' ? constants.O_RDONLY | constants.O_DIRECTORY : DIR_FLAGS);
  return { path: fdPath(fd), close: () => closeSync(fd) };
}

/** Flags for opening a located file for reading: never through a link swapped in after the walk. */
export const READ_NOFOLLOW = constants.O_RDONLY | constants.O_NOFOLLOW;
