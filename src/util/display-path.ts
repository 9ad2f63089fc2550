// A path as a message shows it to the user: relative to a base folder (usually the working folder)
// when it lies inside it, else absolute, so "recipe.yaml" reads short and "/etc/x" stays exact.
import { isAbsolute, relative } from 'node:path';

/** `path` relative to `base` when it is inside it, else `path` unchanged. */
export function displayPath(path: string, base: string): string {
  const rel = relative(base, path);
  return rel && !rel.startsWith('..') && !isAbsolute(rel) ? rel : path;
}
