// Where the recipe loader reads its configuration files (the recipe, agent files, scripts,
// .mcp.json, hook settings): the live file system, or the copies a run captured when it started
// (run/run-inputs.ts), so a resume trusts the files as they were then and not what an agent wrote
// since. The loader is synchronous, so the source is set for the length of one call
// (withInputFiles) instead of being threaded through every check and every layer it reaches
// (recipe, the hook settings reader, the .mcp.json reader); outside such a call reads are live.
import { existsSync, readFileSync, statSync } from 'node:fs';
import { resolve } from 'node:path';

/** A source of configuration files. */
export interface InputFiles {
  /** The file's bytes; undefined when there is no file at `path` (missing, or a folder). */
  read(path: string): Buffer | undefined;
  /** Whether something exists at `path` (a file or a folder). */
  exists(path: string): boolean;
}

/** The live file system. */
export const liveInputFiles: InputFiles = {
  read(path) {
    try {
      return statSync(path).isFile() ? readFileSync(path) : undefined;
    } catch {
      return undefined;
    }
  },
  exists: (path) => existsSync(path),
};

let active: InputFiles = liveInputFiles;

/** Runs `fn` (synchronous) with `files` as the source of every configuration file it reads. */
export function withInputFiles<T>(files: InputFiles | undefined, fn: () => T): T {
  if (!files) return fn();
  const before = active;
  active = files;
  try {
    return fn();
  } finally {
    active = before;
  }
}

/** A configuration file's text, like readFileSync(path, 'utf8'): throws ENOENT when there is none. */
export function readInputText(path: string): string {
  const abs = resolve(path);
  const bytes = active.read(abs);
  if (bytes === undefined) {
    if (active === liveInputFiles) return readFileSync(abs, 'utf8'); // the file system's own error (EISDIR, EACCES ...)
    throw Object.assign(new Error(`ENOENT: no such file or directory, open '${abs}'`), { code: 'ENOENT', path: abs });
  }
  return bytes.toString('utf8');
}

/** Whether a configuration file (or folder) exists, like existsSync. */
export function inputExists(path: string): boolean {
  return active.exists(resolve(path));
}
