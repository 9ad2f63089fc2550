// `for_each: {glob: ...}` expansion: walks directories with node:fs from the pattern's literal
// prefix and matches with the project's one glob engine (src/tools/glob.ts), bash-like: hidden
// entries match only a pattern segment that starts with '.'.
import { type Dirent, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { compileGlob, globError, hasGlobSyntax } from '../tools/glob.js';
import { isDirectory } from '../util/path-kind.js';

export type GlobEntryType = 'dir' | 'file' | 'any';

/** Whole-path regex for a '/'-separated pattern (hidden names only when written with a dot). */
export function globToRegExp(pattern: string): RegExp {
  return compileGlob(pattern.replace(/\/+$/, ''), { dot: false });
}

export { globError };

/** A `${{ }}` expression stands for some text: checks the glob around it. */
export function templateGlobError(pattern: string): string | undefined {
  return globError(pattern.replace(/\$\{\{[\s\S]*?\}\}/g, 'x'));
}

/**
 * Paths under `baseDir` matching `pattern`, relative to `baseDir` and written with '/', sorted.
 * `**` skips node_modules and .git, and does not go into hidden folders unless the pattern names
 * one. @throws GlobSyntaxError for a malformed pattern.
 */
export function expandGlob(baseDir: string, pattern: string, type: GlobEntryType = 'dir'): string[] {
  const clean = pattern.replace(/^\.\//, '').replace(/\/+$/, '');
  const segments = clean.split('/');
  const firstMagic = segments.findIndex(hasGlobSyntax);
  const prefix = firstMagic < 0 ? segments.slice(0, -1) : segments.slice(0, firstMagic);
  const rest = firstMagic < 0 ? segments.slice(-1) : segments.slice(firstMagic);
  const regex = globToRegExp(rest.join('/'));
  const deep = rest.some((s) => s.includes('**'));
  const namesHidden = rest.some((s) => s.startsWith('.'));
  const maxDepth = deep ? Infinity : rest.length;
  const results: string[] = [];
  const walk = (dir: string, rel: string, depth: number) => {
    let entries: Dirent[];
    try {
      entries = readdirSync(dir, { withFileTypes: true });
    } catch {
      return;
    }
    for (const entry of entries) {
      if (deep && (entry.name === 'node_modules' || entry.name === '.git')) continue;
      const childRel = rel ? `${rel}/${entry.name}` : entry.name;
      const childAbs = join(dir, entry.name);
      const isDir = entry.isDirectory() || (entry.isSymbolicLink() && isDirectory(childAbs));
      if (regex.test(childRel) && (type === 'any' || (type === 'dir') === isDir)) results.push(childRel);
      if (isDir && depth + 1 < maxDepth && !(deep && entry.name.startsWith('.') && !namesHidden))
        walk(childAbs, childRel, depth + 1);
    }
  };
  walk(join(baseDir, ...prefix), '', 0);
  const head = prefix.length ? `${prefix.join('/')}/` : '';
  return results.map((r) => head + r).sort();
}
