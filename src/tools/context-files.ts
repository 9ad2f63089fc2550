// Context files (AGENTS.md, or CLAUDE.md): project instructions collected from the working
// folder up to the filesystem root, outermost first, so the closest file has the last word.
import { readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { TOOL_DEFAULTS } from './defaults.js';

export interface ContextFile {
  /** Absolute path. */
  path: string;
  content: string;
}

export interface LoadContextFilesOptions {
  cwd: string;
  /** Last folder to look in when walking up (default: the filesystem root). */
  stopDir?: string;
  /** A folder with a user-wide context file, listed before all others. */
  globalDir?: string;
  /** File names in order of preference within one folder. */
  names?: readonly string[];
}

function firstExisting(dir: string, names: readonly string[]): ContextFile | undefined {
  for (const name of names) {
    const path = join(dir, name);
    try {
      return { path, content: readFileSync(path, 'utf8') };
    } catch {
      // not there (or unreadable): try the next name
    }
  }
  return undefined;
}

export function loadContextFiles(options: LoadContextFilesOptions): ContextFile[] {
  const names = options.names ?? TOOL_DEFAULTS.contextFileNames;
  const stop = options.stopDir !== undefined ? resolve(options.stopDir) : undefined;
  const walked: ContextFile[] = [];
  for (let dir = resolve(options.cwd); ; dir = dirname(dir)) {
    const file = firstExisting(dir, names);
    if (file) walked.push(file);
    if (dir === stop || dirname(dir) === dir) break;
  }
  const ordered = walked.reverse();
  const global = options.globalDir !== undefined ? firstExisting(resolve(options.globalDir), names) : undefined;
  const all = global ? [global, ...ordered] : ordered;
  const seen = new Set<string>();
  return all.filter((f) => {
    if (seen.has(f.path)) return false;
    seen.add(f.path);
    return true;
  });
}
