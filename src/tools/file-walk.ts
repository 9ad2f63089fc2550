// Depth-first directory walk for grep and find (no ripgrep or fd on our machines): sorted,
// hidden files included, `.git` skipped, ignore files honoured at every level, symlinked
// folders listed but not entered (no loops, no escaping the workspace through a link).
import { closeSync, constants, openSync, readFileSync, realpathSync, statSync, type Dirent } from 'node:fs';
import { readdir, readFile } from 'node:fs/promises';
import { dirname, join, relative, sep } from 'node:path';
import { descriptorPathsWork } from './confined-path.js';
import { TOOL_DEFAULTS } from './defaults.js';
import { ignoreFileAbove, ignoreFileAt, isIgnored, type IgnoreFile } from './gitignore.js';
import { isInside } from './workspace.js';

export interface WalkEntry {
  /** Absolute path. */
  path: string;
  /** Path relative to the walk root, forward slashes. */
  rel: string;
  isDir: boolean;
  isSymlink: boolean;
  /**
   * The entry reached through its folder's open descriptor: open it with O_NOFOLLOW to read
   * exactly the file the walk listed. Valid until the walk moves on.
   */
  openPath: string;
}

export interface WalkOptions {
  /** Honour .gitignore/.ignore files (default true). */
  respectIgnoreFiles?: boolean;
  /**
   * Also apply ignore files of the folders from this one down to the walk root's parent, as git
   * does for a search started in a subfolder (typically the workspace root).
   */
  inheritIgnoreFrom?: string;
  /** Folder names never entered. */
  skipDirs?: readonly string[];
  /** Entries left out (and not entered), e.g. the hidden runs folder. */
  exclude?: (entry: WalkEntry) => boolean;
  /** Deepest level listed (1 = the root's direct entries). */
  maxDepth?: number;
  signal?: AbortSignal;
}

function toPosix(p: string): string {
  return sep === '/' ? p : p.split(sep).join('/');
}

function readText(path: string): string | undefined {
  try {
    return readFileSync(path, 'utf8');
  } catch {
    return undefined;
  }
}

/** Ignore files in the folders between `from` (inclusive) and `root` (exclusive). */
function inheritedIgnoreFiles(root: string, from: string | undefined, names: readonly string[]): IgnoreFile[] {
  if (from === undefined || from === root || !isInside(from, root)) return [];
  const dirs: string[] = [];
  for (let d = dirname(root); ; d = dirname(d)) {
    dirs.push(d);
    if (d === from || dirname(d) === d || !isInside(from, d)) break;
  }
  const files: IgnoreFile[] = [];
  for (const dir of dirs.reverse()) {
    for (const name of names) {
      const text = readText(join(dir, name));
      if (text !== undefined) files.push(ignoreFileAbove(toPosix(relative(dir, root)), text));
    }
  }
  return files;
}

const ROOT_FLAGS = constants.O_RDONLY | constants.O_DIRECTORY;
const DIR_NOFOLLOW = ROOT_FLAGS | constants.O_NOFOLLOW;

/** Yields every entry under `root` (not `root` itself) in sorted depth-first order. */
export async function* walkTree(root: string, options: WalkOptions = {}): AsyncGenerator<WalkEntry> {
  const respect = options.respectIgnoreFiles ?? true;
  const names = TOOL_DEFAULTS.ignoreFileNames;
  const skip = new Set(options.skipDirs ?? TOOL_DEFAULTS.alwaysSkipDirs);
  const maxDepth = options.maxDepth ?? Infinity;
  const base = respect ? inheritedIgnoreFiles(root, options.inheritIgnoreFrom, names) : [];

  // Each folder is opened through its parent's descriptor without following links (confined-path.ts),
  // so a folder swapped for a symlink during the walk is not entered; `dir` reaches it by descriptor.
  const byFd = descriptorPathsWork();
  async function* visit(
    shownDir: string,
    dirRel: string,
    depth: number,
    ignores: IgnoreFile[],
    openDir: string,
  ): AsyncGenerator<WalkEntry> {
    if (options.signal?.aborted) throw new Error('Operation aborted');
    let fd: number | undefined;
    try {
      fd = byFd ? openSync(openDir, depth === 1 ? ROOT_FLAGS : DIR_NOFOLLOW) : undefined;
    } catch {
      return; // unreadable (or swapped for a link): skipped, as rg and fd do
    }
    try {
      yield* list(shownDir, dirRel, depth, ignores, fd === undefined ? openDir : `/proc/self/fd/${fd}`);
    } finally {
      if (fd !== undefined) closeSync(fd);
    }
  }

  async function* list(
    shownDir: string,
    dirRel: string,
    depth: number,
    ignores: IgnoreFile[],
    dir: string,
  ): AsyncGenerator<WalkEntry> {
    let entries: Dirent[];
    try {
      entries = await readdir(dir, { withFileTypes: true });
    } catch {
      return; // unreadable folders are skipped, as rg and fd do
    }
    let active = ignores;
    if (respect) {
      for (const name of names) {
        if (!entries.some((e) => e.name === name)) continue;
        const text = await readFile(join(dir, name), 'utf8').catch(() => undefined);
        if (text !== undefined) active = [...active, ignoreFileAt(dirRel, text)];
      }
    }
    entries.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
    for (const entry of entries) {
      const path = join(shownDir, entry.name);
      const openPath = join(dir, entry.name);
      const rel = dirRel === '' ? entry.name : `${dirRel}/${entry.name}`;
      const isSymlink = entry.isSymbolicLink();
      let isDir = entry.isDirectory();
      if (isSymlink) {
        try {
          isDir = statSync(openPath).isDirectory();
        } catch {
          isDir = false; // dangling link: listed as a file
        }
      }
      if (isDir && !isSymlink && skip.has(entry.name)) continue;
      if (respect && isIgnored(active, rel, isDir)) continue;
      const found: WalkEntry = { path, rel, isDir, isSymlink, openPath };
      if (options.exclude?.(found)) continue;
      yield found;
      if (isDir && !isSymlink && depth < maxDepth) yield* visit(path, rel, depth + 1, active, openPath);
    }
  }

  yield* visit(root, '', 1, base, root);
}

/**
 * An `exclude` for walks of the file tools: entries whose real place the workspace refuses (the
 * hidden runs folder) are neither listed nor entered.
 */
export function hiddenFilter(
  workspace: { allowsReal(real: string): boolean },
  start: string,
): (entry: WalkEntry) => boolean {
  let realStart: string;
  try {
    realStart = realpathSync(start);
  } catch {
    return () => false;
  }
  // Links are listed by name only (never entered, and grep does not read them).
  return (entry) => !entry.isSymlink && !workspace.allowsReal(join(realStart, entry.rel));
}
