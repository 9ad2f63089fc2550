// Expanding a glob against the filesystem (for the orchestrator's `{glob: "repos/*"}` fan-outs).
import { stat } from 'node:fs/promises';
import { join } from 'node:path';
import { walkTree } from './file-walk.js';
import { compileGlob, globStaticBase, hasGlobSyntax } from './glob.js';

export interface ExpandGlobOptions {
  /** Folder the pattern is relative to. */
  cwd: string;
  onlyDirectories?: boolean;
  onlyFiles?: boolean;
  /** Honour .gitignore files (default false: a fan-out names what it wants explicitly). */
  respectIgnoreFiles?: boolean;
}

/** Paths (relative to cwd, as the pattern writes them, sorted) that match the glob. */
export async function expandGlob(pattern: string, options: ExpandGlobOptions): Promise<string[]> {
  const clean = pattern.replace(/^\.\//, '').replace(/\/+$/, '');
  const keep = (isDir: boolean): boolean => !(options.onlyDirectories && !isDir) && !(options.onlyFiles && isDir);
  if (!hasGlobSyntax(clean)) {
    try {
      return keep((await stat(join(options.cwd, clean))).isDirectory()) ? [clean] : [];
    } catch {
      return [];
    }
  }
  const base = globStaticBase(clean);
  const re = compileGlob(clean);
  const deep = clean.includes('**');
  const depth = clean.split('/').length - (base === '' ? 0 : base.split('/').length);
  const out: string[] = [];
  const walk = walkTree(join(options.cwd, base), {
    respectIgnoreFiles: options.respectIgnoreFiles ?? false,
    maxDepth: deep ? Infinity : depth,
    // Deep patterns would otherwise crawl dependency and VCS folders.
    skipDirs: deep ? ['.git', 'node_modules'] : [],
  });
  for await (const entry of walk) {
    const rel = base === '' ? entry.rel : `${base}/${entry.rel}`;
    if (re.test(rel) && keep(entry.isDir)) out.push(rel);
  }
  return out.sort();
}
