// A small glob matcher for `for_each: {glob: ...}` and `writes:` patterns. It walks directories
// with node:fs from the pattern's literal prefix only. (A tools-layer glob is being written; this
// one stays deliberately small: *, ?, **, [abc], {a,b}.)
import { readdirSync } from 'node:fs';
import { join } from 'node:path';

export type GlobEntryType = 'dir' | 'file' | 'any';

const escapeRe = (s: string) => s.replace(/[.+^$()|\\]/g, '\\$&');

/** Regex for one path segment pattern (no '/'). */
function segmentSource(seg: string): string {
  let out = '';
  for (let i = 0; i < seg.length; i++) {
    const c = seg[i]!;
    if (c === '*') out += '[^/]*';
    else if (c === '?') out += '[^/]';
    else if (c === '[') {
      const end = seg.indexOf(']', i + 1);
      if (end < 0) {
        out += '\\[';
        continue;
      }
      const body = seg.slice(i + 1, end).replace(/^!/, '^').replace(/\\/g, '\\\\');
      out += `[${body}]`;
      i = end;
    } else if (c === '{') {
      const end = seg.indexOf('}', i + 1);
      if (end < 0) {
        out += '\\{';
        continue;
      }
      out += `(?:${seg.slice(i + 1, end).split(',').map(segmentSource).join('|')})`;
      i = end;
    } else out += escapeRe(c);
  }
  return out;
}

/** Whole-path regex for a '/'-separated pattern; `**` spans any number of segments. */
export function globToRegExp(pattern: string): RegExp {
  const segments = pattern.replace(/\/+$/, '').split('/');
  let source = '';
  segments.forEach((seg, i) => {
    const last = i === segments.length - 1;
    if (seg === '**') source += last ? '.*' : '(?:[^/]+/)*';
    else source += segmentSource(seg) + (last ? '' : '/');
  });
  return new RegExp(`^${source}$`);
}

export const isMagic = (segment: string) => /[*?[{]/.test(segment);

/**
 * Paths under `baseDir` matching `pattern`, relative to `baseDir` and written with '/', sorted.
 * Hidden entries match only when the pattern segment starts with '.'; `**` skips node_modules
 * and .git, which are never what a fan-out means.
 */
export function expandGlob(baseDir: string, pattern: string, type: GlobEntryType = 'dir'): string[] {
  const clean = pattern.replace(/^\.\//, '').replace(/\/+$/, '');
  const segments = clean.split('/');
  const firstMagic = segments.findIndex(isMagic);
  const prefix = firstMagic < 0 ? segments.slice(0, -1) : segments.slice(0, firstMagic);
  const rest = firstMagic < 0 ? segments.slice(-1) : segments.slice(firstMagic);
  const regex = globToRegExp(rest.join('/'));
  const deep = rest.includes('**');
  const maxDepth = deep ? Infinity : rest.length;
  const results: string[] = [];
  const walk = (dir: string, rel: string, depth: number) => {
    let entries;
    try {
      entries = readdirSync(dir, { withFileTypes: true });
    } catch {
      return;
    }
    for (const entry of entries) {
      const segPattern = deep ? '' : (rest[depth] ?? '');
      if (entry.name.startsWith('.') && !segPattern.startsWith('.')) continue;
      if (deep && (entry.name === 'node_modules' || entry.name === '.git')) continue;
      const childRel = rel ? `${rel}/${entry.name}` : entry.name;
      const childAbs = join(dir, entry.name);
      const isDir = entry.isDirectory() || (entry.isSymbolicLink() && isDirectory(childAbs));
      if (regex.test(childRel) && (type === 'any' || (type === 'dir') === isDir)) results.push(childRel);
      if (isDir && depth + 1 < maxDepth) walk(childAbs, childRel, depth + 1);
    }
  };
  walk(join(baseDir, ...prefix), '', 0);
  const head = prefix.length ? `${prefix.join('/')}/` : '';
  return results.map((r) => head + r).sort();
}

function isDirectory(p: string): boolean {
  try {
    readdirSync(p);
    return true;
  } catch {
    return false;
  }
}
