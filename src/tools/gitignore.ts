// A .gitignore matcher covering what real repositories use: comments, `!` negation, a `/`
// suffix for directories only, anchored patterns (a `/` at the start or in the middle),
// `**` and ordinary glob syntax. The last matching rule wins, as in git.
import { compileGlob } from './glob.js';

export interface IgnoreRule {
  /** The line as written (for diagnostics). */
  source: string;
  regex: RegExp;
  negate: boolean;
  dirOnly: boolean;
}

/** Parses the text of an ignore file into rules, skipping blanks and comments. */
export function parseIgnoreRules(text: string): IgnoreRule[] {
  const rules: IgnoreRule[] = [];
  for (const rawLine of text.split('\n')) {
    let line = rawLine.endsWith('\r') ? rawLine.slice(0, -1) : rawLine;
    if (line === '' || line.startsWith('#')) continue;
    // Trailing spaces are dropped unless escaped with a backslash.
    line = line.replace(/(?<!\\)\s+$/, '');
    if (line === '') continue;
    let negate = false;
    if (line.startsWith('!')) {
      negate = true;
      line = line.slice(1);
    } else if (line.startsWith('\\!') || line.startsWith('\\#')) {
      line = line.slice(1);
    }
    let dirOnly = false;
    if (line.endsWith('/')) {
      dirOnly = true;
      line = line.slice(0, -1);
    }
    if (line === '') continue;
    // A slash at the start or in the middle anchors the pattern to the ignore file's folder;
    // otherwise it matches a name at any depth below it.
    const anchored = line.includes('/');
    const pattern = anchored ? line.replace(/^\//, '') : `**/${line}`;
    rules.push({ source: rawLine, regex: compileGlob(pattern), negate, dirOnly });
  }
  return rules;
}

/** The rules of one ignore file, applied to paths relative to the folder holding it. */
export class IgnoreFile {
  constructor(
    readonly rules: IgnoreRule[],
    /** Maps a path relative to the walk root to a path relative to this file's folder. */
    private readonly toLocal: (relFromWalkRoot: string) => string | undefined,
  ) {}

  /** true = ignored, false = re-included by a negation, undefined = no rule matched. */
  decide(relFromWalkRoot: string, isDir: boolean): boolean | undefined {
    const local = this.toLocal(relFromWalkRoot);
    if (local === undefined || local === '') return undefined;
    let verdict: boolean | undefined;
    for (const rule of this.rules) {
      if (rule.dirOnly && !isDir) continue;
      if (rule.regex.test(local)) verdict = !rule.negate;
    }
    return verdict;
  }
}

/** A stack of ignore files, outermost first; inner files override outer ones. */
export function isIgnored(files: readonly IgnoreFile[], relFromWalkRoot: string, isDir: boolean): boolean {
  let ignored = false;
  for (const file of files) {
    const verdict = file.decide(relFromWalkRoot, isDir);
    if (verdict !== undefined) ignored = verdict;
  }
  return ignored;
}

/** An ignore file in `dirRel` (a folder below the walk root, "" for the root itself). */
export function ignoreFileAt(dirRel: string, text: string): IgnoreFile {
  const prefix = dirRel === '' ? '' : `${dirRel}/`;
  return new IgnoreFile(parseIgnoreRules(text), (rel) =>
    rel.startsWith(prefix) ? rel.slice(prefix.length) : undefined,
  );
}

/** An ignore file in a folder above the walk root; `rootFromThere` is the root relative to it. */
export function ignoreFileAbove(rootFromThere: string, text: string): IgnoreFile {
  return new IgnoreFile(parseIgnoreRules(text), (rel) => `${rootFromThere}/${rel}`);
}
