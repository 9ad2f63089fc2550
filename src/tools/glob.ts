// The project's one glob engine (picomatch), for find, grep's filter, gitignore rules, write
// scopes and fan-outs. Semantics follow bash with globstar and extglob, as git users expect:
// `*` `?` `[...]` (with `[!x]`, `[^x]`, ranges and POSIX classes like `[[:alpha:]]`), `{a,{b,c}}`
// and `{1..3}`, `\` escapes, `**` across folders, and `@(a|b)`, `!(x)`, `+(..)`, `*(..)`, `?(..)`.
// Plain parentheses are literal (as in bash): only an extglob prefix makes a group. A malformed
// pattern (`[z-a]`, an unclosed `[`, `{` or `(`) is a GlobSyntaxError, never a silent no-match.
import picomatch from 'picomatch';

export interface GlobOptions {
  /** Case-insensitive matching. */
  nocase?: boolean;
  /**
   * Whether `*`, `?` and `**` match names starting with '.' (default true: tools include hidden
   * files). A pattern segment that starts with '.' always matches them.
   */
  dot?: boolean;
}

/** A glob that cannot be compiled; the message says what is wrong and how to write it. */
export class GlobSyntaxError extends Error {
  constructor(
    readonly pattern: string,
    readonly reason: string,
  ) {
    super(`invalid glob ${JSON.stringify(pattern)}: ${reason}`);
    this.name = 'GlobSyntaxError';
  }
}

const POSIX_CLASSES = [
  'alnum',
  'alpha',
  'ascii',
  'blank',
  'cntrl',
  'digit',
  'graph',
  'lower',
  'print',
  'punct',
  'space',
  'upper',
  'word',
  'xdigit',
];
const EXTGLOB_PREFIX = '@!?+*';

/**
 * Escapes `(`, `)` and `|` that are not part of an extglob, so that `notes (copy).md` names that
 * file, as in bash, instead of becoming a regex group. Character classes are left alone.
 */
function literalParens(pattern: string): string {
  let out = '';
  const groups: boolean[] = []; // true = extglob group, false = literal parentheses
  for (let i = 0; i < pattern.length; i++) {
    const c = pattern[i]!;
    if (c === '\\') {
      out += c + (pattern[i + 1] ?? '');
      i++;
    } else if (c === '[') {
      const end = classEnd(pattern, i);
      if (end === -1) out += c;
      else {
        out += pattern.slice(i, end + 1);
        i = end;
      }
    } else if (c === '(') {
      const ext = i > 0 && EXTGLOB_PREFIX.includes(pattern[i - 1]!) && pattern[i - 2] !== '\\';
      groups.push(ext);
      out += ext ? c : '\\(';
    } else if (c === ')') {
      const ext = groups.pop();
      out += ext === true ? c : '\\)';
    } else if (c === '|') {
      out += groups.at(-1) === true ? c : '\\|';
    } else out += c;
  }
  return out;
}

/** Index of the `]` closing a class opening at `start`, or -1. POSIX `[:name:]` counts as one member. */
function classEnd(pattern: string, start: number): number {
  let i = start + 1;
  if (pattern[i] === '!' || pattern[i] === '^') i++;
  if (pattern[i] === ']') i++; // a leading ] is a member
  for (; i < pattern.length; i++) {
    if (pattern[i] === '\\') i++;
    else if (pattern[i] === '[' && pattern[i + 1] === ':') {
      const close = pattern.indexOf(':]', i + 2);
      if (close !== -1) i = close + 1;
    } else if (pattern[i] === ']') return i;
  }
  return -1;
}

/** What is wrong with a glob that picomatch would accept silently, or undefined. */
function precheck(pattern: string): string | undefined {
  if (/(^|[^\\])(\\\\)*\\$/.test(pattern)) return 'it ends with a lone backslash; write \\\\ for a literal backslash';
  for (const m of pattern.matchAll(/\[:([a-zA-Z]*):\]/g)) {
    if (!POSIX_CLASSES.includes(m[1]!))
      return `unknown character class [:${m[1]}:]; known ones: ${POSIX_CLASSES.map((c) => `[:${c}:]`).join(' ')}`;
  }
  return undefined;
}

/** A readable reason for picomatch's or the RegExp engine's complaint. */
function reasonOf(err: unknown, pattern: string): string {
  const msg = err instanceof Error ? err.message : String(err);
  const missing = /Missing (closing|opening): "(.)"/.exec(msg);
  if (missing) {
    const ch = missing[2]!;
    return `${missing[1] === 'closing' ? `a ${JSON.stringify(matchingOpen(ch))} is never closed` : `${JSON.stringify(ch)} has no opening ${JSON.stringify(matchingOpen(ch))}`}; escape it (\\${missing[1] === 'closing' ? matchingOpen(ch) : ch}) to match it literally`;
  }
  if (/Range out of order/.test(msg)) {
    const range = /\[[^\]]*?([^\\\]])-([^\]])/.exec(pattern);
    return `a character range goes backwards${range ? ` (${range[1]}-${range[2]})` : ''}; write the lower character first, e.g. [a-z]`;
  }
  return msg.replace(/^Invalid regular expression: \/.*\/: /, '');
}

function matchingOpen(ch: string): string {
  return ch === ']' ? '[' : ch === '}' ? '{' : ch === ')' ? '(' : ch;
}

const cache = new Map<string, RegExp>();

/**
 * An anchored RegExp matching whole paths (forward slashes) against the glob.
 * @throws GlobSyntaxError when the pattern is malformed.
 */
export function compileGlob(pattern: string, options: GlobOptions = {}): RegExp {
  const dot = options.dot ?? true;
  const key = `${options.nocase ? 'i' : '-'}${dot ? 'd' : '-'}${pattern}`;
  const hit = cache.get(key);
  if (hit) return hit;
  const bad = precheck(pattern);
  if (bad) throw new GlobSyntaxError(pattern, bad);
  // "dir/**" names what is inside dir (as in git and bash's "dir/"), not a file called dir.
  const source = literalParens(pattern.endsWith('/**') && !pattern.endsWith('\\/**') ? `${pattern}/*` : pattern);
  let re: RegExp;
  try {
    re = picomatch.makeRe(source, {
      dot,
      nocase: options.nocase === true,
      posix: true,
      strictBrackets: true,
      debug: true,
    });
  } catch (err) {
    throw new GlobSyntaxError(pattern, reasonOf(err, pattern));
  }
  if (cache.size > 500) cache.clear();
  cache.set(key, re);
  return re;
}

/** Why the glob is malformed, or undefined when it compiles. */
export function globError(pattern: string): string | undefined {
  try {
    compileGlob(pattern);
    return undefined;
  } catch (err) {
    return err instanceof GlobSyntaxError ? err.reason : String(err);
  }
}

/** True when `path` (forward slashes, no leading "./") matches the glob. */
export function matchGlob(pattern: string, path: string, options?: GlobOptions): boolean {
  return compileGlob(pattern, options).test(path.replace(/^\.\//, ''));
}

/** True when the string has any glob syntax (otherwise it names one path). */
export function hasGlobSyntax(pattern: string): boolean {
  return /[*?[{\\]|[@!+]\(/.test(pattern);
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
