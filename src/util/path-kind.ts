// What a path names on disk, following links, asked where a missing or unreadable path is simply
// "not that": callers probe candidates (module files, skill folders, a repository's .git) and move on.
import { statSync } from 'node:fs';

/** True when `path` is a regular file (or a link to one); false when it is missing, unreadable or anything else. */
export function isFile(path: string): boolean {
  try {
    return statSync(path).isFile();
  } catch {
    return false;
  }
}

/** True when `path` is a folder (or a link to one); false when it is missing, unreadable or anything else. */
export function isDirectory(path: string): boolean {
  try {
    return statSync(path).isDirectory();
  } catch {
    return false;
  }
}
