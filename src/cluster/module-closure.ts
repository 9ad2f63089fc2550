// The local files a module needs to load: its relative imports, theirs, and so on. A distributed
// run ships an agent's extension modules to a worker machine; the entry file alone fails there as
// soon as it imports a sibling (`./helpers.js`, `../lib/util.ts`), so the whole closure travels,
// each file under its own path, which keeps the relative layout the imports rely on.
//
// The scan is lexical (no TypeScript or bundler at run time): comments, string contents and regex
// literals are masked first, so an import written inside a comment or a string is not taken for a
// real one. Only static specifiers count (`import(name)` with a variable cannot be followed).
// Bare specifiers (npm packages) are not part of the closure: the worker must have them installed.
// Each file's nearest package.json travels too: its "type" decides whether a .ts or .js file is
// an ES module or CommonJS, and an ES module read as CommonJS has no default export.
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { isDirectory, isFile } from '../util/path-kind.js';

/** A relative import whose file was not found (the module fails on the coordinator too, or the import is guarded). */
export interface MissingImport {
  from: string;
  specifier: string;
}

export interface ModuleClosure {
  /** The entry first, then every local file it reaches and the package.json governing each, each once. */
  files: string[];
  missing: MissingImport[];
}

/** Extensions Node and tsx try for a specifier written without one, in their order. */
const APPENDED_EXTENSIONS = ['.ts', '.tsx', '.js', '.jsx', '.mjs', '.cjs', '.mts', '.cts', '.json'];

/** A `.js` specifier may name a TypeScript file (TypeScript's NodeNext convention, which tsx follows). */
const TS_TWINS: Record<string, string[]> = {
  '.js': ['.ts', '.tsx'],
  '.jsx': ['.tsx'],
  '.mjs': ['.mts'],
  '.cjs': ['.cts'],
};

/** Files whose text is scanned for further imports (a .json or other asset imports nothing). */
const SCANNED = /\.(?:[cm]?[jt]sx?)$/;

/** Words after which a `/` starts a regex literal rather than a division. */
const KEYWORDS_BEFORE_REGEX = new Set([
  'return',
  'typeof',
  'instanceof',
  'in',
  'of',
  'new',
  'delete',
  'void',
  'throw',
  'case',
  'do',
  'else',
  'yield',
  'await',
]);
const PUNCTUATION_BEFORE_REGEX = '(,=:[!&|?{};+-*%<>~^';

/**
 * The source with comments blanked, regex literals emptied and every string literal (and every
 * template literal without substitutions) replaced by `"<n>"`, where strings[n] is its text.
 */
export function maskSource(src: string): { code: string; strings: string[] } {
  const out: string[] = [];
  const strings: string[] = [];
  // What each open `{` belongs to: a block or object ('{'), or a template substitution ('${').
  const braces: ('{' | '${')[] = [];
  let lastWord = '';
  let lastChar = '';
  let i = 0;
  const n = src.length;

  const emitString = (text: string): void => {
    out.push(`"${strings.length}"`);
    strings.push(text);
    lastChar = '"';
    lastWord = '';
  };

  /** Reads template text from i (just past "`" or a substitution's "}"); returns true at a "${". */
  const readTemplate = (): { text: string; substitution: boolean } => {
    let text = '';
    while (i < n) {
      const c = src[i]!;
      if (c === '\\') {
        text += src.slice(i, i + 2);
        i += 2;
      } else if (c === '`') {
        i++;
        return { text, substitution: false };
      } else if (c === '$' && src[i + 1] === '{') {
        i += 2;
        return { text, substitution: true };
      } else {
        text += c;
        i++;
      }
    }
    return { text, substitution: false };
  };

  const enterTemplate = (fromStart: boolean): void => {
    const part = readTemplate();
    if (fromStart && !part.substitution) {
      emitString(part.text);
      return;
    }
    // A template with substitutions is no specifier; its expressions are code and are scanned.
    out.push(part.substitution ? ' ' : '` ');
    if (part.substitution) braces.push('${');
    lastChar = part.substitution ? '(' : '`';
    lastWord = '';
  };

  while (i < n) {
    const c = src[i]!;
    const next = src[i + 1];
    if (c === '/' && next === '/') {
      while (i < n && src[i] !== '\n') i++;
      out.push(' ');
      continue;
    }
    if (c === '/' && next === '*') {
      const end = src.indexOf('*/', i + 2);
      i = end < 0 ? n : end + 2;
      out.push(' ');
      continue;
    }
    if (c === "'" || c === '"') {
      let j = i + 1;
      let text = '';
      while (j < n && src[j] !== c && src[j] !== '\n') {
        if (src[j] === '\\') {
          text += src.slice(j, j + 2);
          j += 2;
        } else text += src[j++];
      }
      i = j + 1;
      emitString(text);
      continue;
    }
    if (c === '`') {
      i++;
      enterTemplate(true);
      continue;
    }
    if (c === '{') {
      braces.push('{');
    } else if (c === '}') {
      if (braces.pop() === '${') {
        i++;
        enterTemplate(false);
        continue;
      }
    } else if (
      c === '/' &&
      (lastChar === '' || PUNCTUATION_BEFORE_REGEX.includes(lastChar) || KEYWORDS_BEFORE_REGEX.has(lastWord))
    ) {
      // A regex literal: skip to its closing slash (a `/` inside [...] does not close it).
      let j = i + 1;
      let inClass = false;
      while (j < n && src[j] !== '\n') {
        const r = src[j]!;
        if (r === '\\') j++;
        else if (r === '[') inClass = true;
        else if (r === ']') inClass = false;
        else if (r === '/' && !inClass) break;
        j++;
      }
      i = j + 1;
      out.push('/r/');
      lastChar = ')';
      lastWord = '';
      continue;
    }
    out.push(c);
    i++;
    if (/[\w$]/.test(c)) {
      lastWord = /[\w$]/.test(lastChar) ? lastWord + c : c;
      lastChar = c;
    } else if (!/\s/.test(c)) {
      lastChar = c;
      lastWord = '';
    }
  }
  return { code: out.join(''), strings };
}

// On masked code, a string literal is `"<n>"`. Not preceded by `.` or an identifier character, so
// `obj.require("x")` or `reimport "x"` do not count.
const STATIC_IMPORT_PATTERNS = [
  // import x from "…", import { a, b } from "…", import type …, export * from "…", export { a } from "…"
  /(?<![\w$.])(?:import|export)(?![\w$])[^;"]*?(?<![\w$.])from\s*"(\d+)"/g,
  // import "…" (side effects only)
  /(?<![\w$.])import\s*"(\d+)"/g,
  // import("…"), import("…", { with: … })
  /(?<![\w$.])import\s*\(\s*"(\d+)"\s*[,)]/g,
  // require("…"), import x = require("…")
  /(?<![\w$.])require\s*\(\s*"(\d+)"\s*\)/g,
];

/** Every static import specifier in a module's source, in order of first appearance. */
export function importSpecifiers(src: string): string[] {
  const { code, strings } = maskSource(src);
  const found: { at: number; specifier: string }[] = [];
  for (const pattern of STATIC_IMPORT_PATTERNS) {
    for (const m of code.matchAll(pattern))
      found.push({ at: m.index + m[0].length, specifier: strings[Number(m[1])]! });
  }
  found.sort((a, b) => a.at - b.at);
  return [...new Set(found.map((f) => f.specifier))];
}

/** `./x`, `../x`, `.` or `..`: resolved against the importing file. */
export function isRelativeSpecifier(specifier: string): boolean {
  return /^\.\.?(?:\/|$)/.test(specifier);
}

/**
 * The files a relative specifier may load, as Node or tsx would look for them: the exact path,
 * its TypeScript twin (`./a.js` for `a.ts`), the path with an extension appended, and a folder's
 * index file. Every candidate that exists is returned (the worker's loader picks among the same
 * files), so an extra file may travel but a needed one is not left behind. Empty: not found.
 */
export function resolveRelativeImport(fromFile: string, specifier: string): string[] {
  const target = resolve(dirname(fromFile), specifier.replace(/[?#].*$/, ''));
  const candidates: string[] = [target];
  const ext = /\.[^./]+$/.exec(target)?.[0] ?? '';
  for (const twin of TS_TWINS[ext] ?? []) candidates.push(target.slice(0, -ext.length) + twin);
  if (!isFile(target)) {
    for (const e of APPENDED_EXTENSIONS) candidates.push(target + e);
    if (isDirectory(target)) for (const e of APPENDED_EXTENSIONS) candidates.push(resolve(target, `index${e}`));
  }
  return [...new Set(candidates)].filter(isFile);
}

/** The package.json nearest above a file (the one Node reads its module format from), if any. */
function packageScope(file: string, cache: Map<string, string | undefined>): string | undefined {
  const visited: string[] = [];
  let dir = dirname(file);
  let found: string | undefined;
  for (;;) {
    if (cache.has(dir)) {
      found = cache.get(dir);
      break;
    }
    visited.push(dir);
    if (isFile(join(dir, 'package.json'))) {
      found = join(dir, 'package.json');
      break;
    }
    const parent = dirname(dir);
    if (parent === dir) break;
    dir = parent;
  }
  for (const d of visited) cache.set(d, found);
  return found;
}

/** The entry module, every local module it reaches through static relative imports, and their package.json files. */
export function moduleClosure(entry: string): ModuleClosure {
  const files: string[] = [];
  const missing: MissingImport[] = [];
  const seen = new Set<string>();
  const scopes = new Map<string, string | undefined>();
  const queue = [resolve(entry)];
  while (queue.length > 0) {
    const file = queue.shift()!;
    if (seen.has(file)) continue;
    seen.add(file);
    if (!existsSync(file)) continue;
    files.push(file);
    const scope = packageScope(file, scopes);
    if (scope && !seen.has(scope)) {
      seen.add(scope);
      files.push(scope);
    }
    if (!SCANNED.test(file) || file.endsWith('.d.ts')) continue;
    let src: string;
    try {
      src = readFileSync(file, 'utf8');
    } catch {
      continue;
    }
    for (const specifier of importSpecifiers(src)) {
      if (!isRelativeSpecifier(specifier)) continue;
      const resolved = resolveRelativeImport(file, specifier);
      if (resolved.length === 0) missing.push({ from: file, specifier });
      queue.push(...resolved);
    }
  }
  return { files, missing };
}
