// Depth-first directory walk for grep and find (no ripgrep or fd on our machines): sorted,
// hidden files included, `.git` skipped, ignore files honoured at every level, symlinked
// folders listed but not entered (no loops, no escaping the workspace through a link).
import { readFileSync, statSync, type Dirent } from 'node:fs';
import { readdir, readFile } from 'node:fs/promises';
import { dirname, join, relative, sep } from 'node:path';
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

/** Yields every entry under `root` (not `root` itself) in sorted depth-first order. */
export async function* walkTree(root: string, options: WalkOptions = {}): AsyncGenerator<WalkEntry> {
  const respect = options.respectIgnoreFiles ?? true;
  const names = TOOL_DEFAULTS.ignoreFileNames;
  const skip = new Set(options.skipDirs ?? TOOL_DEFAULTS.alwaysSkipDirs);
  const maxDepth = options.maxDepth ?? Infinity;
  const base = respect ? inheritedIgnoreFiles(root, options.inheritIgnoreFrom, names) : [];

  async function* visit(dir: string, dirRel: string, depth: number, ignores: IgnoreFile[]): AsyncGenerator<WalkEntry> {
    if (options.signal?.aborted) throw new Error('Operation aborted');
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
      const path = join(dir, entry.name);
      const rel = dirRel === '' ? entry.name : `${dirRel}/${entry.name}`;
      const isSymlink = entry.isSymbolicLink();
      let isDir = entry.isDirectory();
      if (isSymlink) {
        try {
          isDir = statSync(path).isDirectory();
        } catch {
          isDir = false; // dangling link: listed as a file
        }
      }
      if (isDir && !isSymlink && skip.has(entry.name)) continue;
      if (respect && isIgnored(active, rel, isDir)) continue;
      yield { path, rel, isDir, isSymlink };
      if (isDir && !isSymlink && depth < maxDepth) yield* visit(path, rel, depth + 1, active);
    }
  }

  yield* visit(root, '', 1, base);
}
