// A small glob matcher: `*`, `**`, `?`, `[...]`, `{a,b}` and `\` escapes, compiled to a RegExp.
// Paths are matched with forward slashes. Dotfiles are ordinary names here (tools include
// hidden files). Used by find, grep's filter, gitignore rules, write scopes and fan-outs.

export interface GlobOptions {
  /** Case-insensitive matching. */
  nocase?: boolean;
}

const REGEX_SPECIAL = /[.+^${}()|[\]\\*?]/;

function escapeChar(c: string): string {
  return REGEX_SPECIAL.test(c) ? `\\${c}` : c;
}

/** Index of the `]` closing a class that opens at `start`, or -1 when the class is not closed. */
function classEnd(pattern: string, start: number): number {
  let i = start + 1;
  if (pattern[i] === '!' || pattern[i] === '^') i++;
  if (pattern[i] === ']') i++; // a leading ] is a literal member
  for (; i < pattern.length; i++) {
    if (pattern[i] === '\\') i++;
    else if (pattern[i] === ']') return i;
  }
  return -1;
}

/** Index of the `}` closing a brace group at `start` and its top-level comma positions. */
function braceEnd(pattern: string, start: number): { end: number; commas: number[] } {
  let depth = 0;
  const commas: number[] = [];
  for (let i = start; i < pattern.length; i++) {
    const c = pattern[i];
    if (c === '\\') i++;
    else if (c === '[') {
      const e = classEnd(pattern, i);
      if (e !== -1) i = e;
    } else if (c === '{') depth++;
    else if (c === '}') {
      depth--;
      if (depth === 0) return { end: i, commas };
    } else if (c === ',' && depth === 1) commas.push(i);
  }
  return { end: -1, commas: [] };
}

function compileClass(body: string): string {
  let negate = false;
  let b = body;
  if (b.startsWith('!') || b.startsWith('^')) {
    negate = true;
    b = b.slice(1);
  }
  let out = '';
  for (let i = 0; i < b.length; i++) {
    const c = b[i] ?? '';
    if (c === '\\') {
      out += `\\${b[i + 1] ?? '\\'}`;
      i++;
    } else if (c === '^' || c === ']' || c === '[') out += `\\${c}`;
    else out += c;
  }
  return negate ? `[^/${out}]` : `[${out}]`;
}

/** Regex source (unanchored) for a glob. */
export function globToRegExpSource(pattern: string): string {
  let out = '';
  for (let i = 0; i < pattern.length; i++) {
    const c = pattern[i] ?? '';
    if (c === '\\') {
      out += escapeChar(pattern[i + 1] ?? '\\');
      i++;
    } else if (c === '*') {
      let j = i;
      while (pattern[j] === '*') j++;
      const stars = j - i;
      const segmentStart = i === 0 || pattern[i - 1] === '/';
      const segmentEnd = j === pattern.length || pattern[j] === '/';
      if (stars >= 2 && segmentStart && segmentEnd) {
        if (pattern[j] === '/') {
          out += '(?:.*/)?'; // "**/" : zero or more directories
          j++;
        } else {
          out += '.*'; // trailing or lone "**": everything below
        }
      } else {
        out += '[^/]*';
      }
      i = j - 1;
    } else if (c === '?') {
      out += '[^/]';
    } else if (c === '[') {
      const e = classEnd(pattern, i);
      if (e === -1) out += '\\[';
      else {
        out += compileClass(pattern.slice(i + 1, e));
        i = e;
      }
    } else if (c === '{') {
      const { end, commas } = braceEnd(pattern, i);
      if (end === -1 || commas.length === 0) out += '\\{';
      else {
        const cuts = [i, ...commas, end];
        const alts: string[] = [];
        for (let k = 0; k < cuts.length - 1; k++) alts.push(globToRegExpSource(pattern.slice((cuts[k] ?? 0) + 1, cuts[k + 1])));
        out += `(?:${alts.join('|')})`;
        i = end;
      }
    } else {
      out += escapeChar(c);
    }
  }
  return out;
}

/** An anchored RegExp matching whole paths (forward slashes) against the glob. */
export function compileGlob(pattern: string, options: GlobOptions = {}): RegExp {
  return new RegExp(`^${globToRegExpSource(pattern)}$`, options.nocase ? 'i' : '');
}

/** True when `path` (forward slashes, no leading "./") matches the glob. */
export function matchGlob(pattern: string, path: string, options?: GlobOptions): boolean {
  return compileGlob(pattern, options).test(path.replace(/^\.\//, ''));
}

/** True when the string has any glob syntax (otherwise it names one path). */
export function hasGlobSyntax(pattern: string): boolean {
  return /[*?[{\\]/.test(pattern);
}

/** The leading folders of a glob that hold no glob syntax ("src/a/*.ts" -> "src/a"). */
export function globStaticBase(pattern: string): string {
  const segments = pattern.split('/');
  const base: string[] = [];
  for (const segment of segments.slice(0, -1)) {
    if (hasGlobSyntax(segment)) break;
    base.push(segment);
  }
  return base.join('/');
}
