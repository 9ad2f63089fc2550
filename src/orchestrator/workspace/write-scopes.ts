// `writes:` scopes: two instances whose write globs could touch the same file never run at the
// same time. The test is conservative: it may say "overlap" for globs that never share a file,
// never the reverse, so the worst case is less parallelism, not a lost edit.
import { isAbsolute, posix, resolve, sep } from 'node:path';
import { hasGlobSyntax } from '../../tools/glob.js';

/**
 * An instance's `writes:` as absolute globs. Relative globs name files under the task's `cwd`
 * (the folder the agent works in), so `cwd: repos/a` with `writes: ["src/**"]` means repos/a/src.
 */
export function writeGlobs(cwd: string, writes: readonly string[]): string[] {
  return writes.map((w) => absoluteGlob(cwd, w));
}

/** Absolute, '/'-separated glob (relative globs resolve against `baseDir`). */
export function absoluteGlob(baseDir: string, glob: string): string {
  const g = glob.replace(/\\/g, '/');
  const abs = isAbsolute(g) ? g : `${resolve(baseDir).split(sep).join('/')}/${g.replace(/^\.\//, '')}`;
  // Normalize ./ and ../ segments without touching wildcards.
  return posix.normalize(abs).replace(/\/+$/, '') || '/';
}

const isMagic = hasGlobSyntax;

/** Literal text before the first wildcard (or extglob, or escape) and after the last one. */
function literalEnds(segment: string): { head: string; tail: string } {
  const first = segment.search(/[*?[{\\]|[@!+](?=\()/);
  let last = -1;
  for (let i = segment.length - 1; i >= 0; i--) {
    if ('*?]})\\'.includes(segment[i]!)) {
      last = i;
      break;
    }
  }
  return { head: segment.slice(0, first), tail: segment.slice(last + 1) };
}

/** Whether two single-segment patterns can match the same name. */
function segmentsOverlap(a: string, b: string): boolean {
  const ma = isMagic(a);
  const mb = isMagic(b);
  if (!ma && !mb) return a === b;
  if (ma && mb) {
    const x = literalEnds(a);
    const y = literalEnds(b);
    const headsAgree = x.head.startsWith(y.head) || y.head.startsWith(x.head);
    const tailsAgree = x.tail.endsWith(y.tail) || y.tail.endsWith(x.tail);
    return headsAgree && tailsAgree;
  }
  const [pattern, literal] = ma ? [a, b] : [b, a];
  const { head, tail } = literalEnds(pattern);
  // Brace sets and classes are not checked further: "maybe" is the safe answer.
  return literal.startsWith(head) && literal.endsWith(tail);
}

function overlapFrom(a: readonly string[], i: number, b: readonly string[], j: number): boolean {
  if (i === a.length && j === b.length) return true;
  // A pattern that ends names a path; the other may name a file inside it (a directory write).
  if (i === a.length || j === b.length) return true;
  const sa = a[i]!;
  const sb = b[j]!;
  if (sa === '**' || sb === '**') return true;
  return segmentsOverlap(sa, sb) && overlapFrom(a, i + 1, b, j + 1);
}

/** Whether two absolute globs could match a common path (or one a folder holding the other's match). */
export function globsOverlap(a: string, b: string): boolean {
  return overlapFrom(a.split('/').filter(Boolean), 0, b.split('/').filter(Boolean), 0);
}

/** Whether any glob of one scope overlaps any of the other. Empty scopes overlap nothing. */
export function scopesOverlap(a: readonly string[], b: readonly string[]): boolean {
  for (const x of a) for (const y of b) if (globsOverlap(x, y)) return true;
  return false;
}
