// Workspace confinement: every path a tool touches is resolved against the tool's cwd and must
// stay under the workspace root, also after following symbolic links. Write tools may further
// be limited to a set of globs (the orchestrator's `writes:` scope).
import { lstatSync, readlinkSync, realpathSync } from 'node:fs';
import { homedir } from 'node:os';
import { dirname, isAbsolute, join, relative, resolve, sep } from 'node:path';
import { compileGlob } from './glob.js';

/** The options every tool factory takes. */
export interface WorkspaceOptions {
  /** Directory relative paths are resolved against. */
  cwd: string;
  /** Paths must stay under this directory (default: cwd). */
  root?: string;
  /** Turn confinement off (the reference behaviour: any path is allowed). */
  allowOutside?: boolean;
  /** Globs relative to root; when set, edit and write refuse any other path. */
  writeScope?: string[];
}

export type PathAccess = 'read' | 'write';

// Spaces models (and macOS screenshots) put in file names that a user typed as plain spaces.
const UNICODE_SPACES = /[\u00a0\u2000-\u200a\u202f\u205f\u3000]/g;

/** Strips one leading `@`, turns exotic spaces into ASCII ones and expands `~`. */
export function expandPath(input: string): string {
  let p = input.startsWith('@') ? input.slice(1) : input;
  p = p.replace(UNICODE_SPACES, ' ');
  if (p === '~') return homedir();
  if (p.startsWith('~/')) return join(homedir(), p.slice(2));
  return p;
}

/** True when `child` is `parent` or lies below it (both absolute and normalized). */
export function isInside(parent: string, child: string): boolean {
  const rel = relative(parent, child);
  return rel === '' || (!isAbsolute(rel) && rel !== '..' && !rel.startsWith(`..${sep}`));
}

/**
 * realpath of the deepest existing ancestor, with the missing rest appended. A dangling
 * symlink on the way is followed too: writing through it would create its target.
 */
export function realpathOfNearest(absPath: string, depth = 0): string {
  let existing = absPath;
  const rest: string[] = [];
  for (;;) {
    try {
      const real = realpathSync(existing);
      return rest.length === 0 ? real : join(real, ...rest.reverse());
    } catch {
      const link = danglingLinkTarget(existing);
      if (link !== undefined && depth < 40) {
        const real = realpathOfNearest(link, depth + 1);
        return rest.length === 0 ? real : join(real, ...rest.reverse());
      }
      const parent = dirname(existing);
      if (parent === existing) return absPath;
      rest.push(existing.slice(parent.length).replace(/^[\\/]+/, ''));
      existing = parent;
    }
  }
}

function danglingLinkTarget(path: string): string | undefined {
  try {
    if (!lstatSync(path).isSymbolicLink()) return undefined;
    return resolve(dirname(path), readlinkSync(path));
  } catch {
    return undefined;
  }
}

function toPosix(p: string): string {
  return sep === '/' ? p : p.split(sep).join('/');
}

/** A resolved workspace: root paths computed once, checks applied per call. */
export class Workspace {
  readonly cwd: string;
  readonly root: string;
  private readonly realRoot: string;
  private readonly allowOutside: boolean;
  private readonly writeScope: string[] | undefined;
  private readonly writeMatchers: RegExp[];

  constructor(options: WorkspaceOptions) {
    this.cwd = resolve(options.cwd);
    this.root = resolve(options.root ?? options.cwd);
    this.realRoot = realpathOfNearest(this.root);
    this.allowOutside = options.allowOutside ?? false;
    this.writeScope = options.writeScope;
    this.writeMatchers = (options.writeScope ?? []).map((g) => compileGlob(g));
  }

  /**
   * Resolves what the model wrote to an absolute path, refusing it (by throwing an Error whose
   * message says what to do instead) when it leaves the workspace or the write scope.
   */
  resolve(input: string, access: PathAccess = 'read'): string {
    const abs = resolve(this.cwd, expandPath(input));
    if (!this.allowOutside) {
      if (!isInside(this.root, abs)) {
        throw new Error(
          `Path "${input}" is outside the workspace ${this.root}; tools may only use files under it. Use a path inside the workspace (relative paths start at ${this.cwd}).`,
        );
      }
      const real = realpathOfNearest(abs);
      if (!isInside(this.realRoot, real)) {
        throw new Error(
          `Path "${input}" resolves to ${real} through a symbolic link, outside the workspace ${this.root}; tools may only use files under it. Use a path whose real location is inside the workspace.`,
        );
      }
    }
    if (access === 'write' && this.writeScope) this.checkWriteScope(input, abs);
    return abs;
  }

  /** The path relative to the root with forward slashes (what write-scope globs match against). */
  relativeToRoot(abs: string): string {
    return toPosix(relative(this.root, abs));
  }

  private checkWriteScope(input: string, abs: string): void {
    const inScope = (rel: string): boolean => this.writeMatchers.some((re) => re.test(rel));
    // Both the path as written and where it really leads (through links) must be in scope.
    const real = toPosix(relative(this.realRoot, realpathOfNearest(abs)));
    if (inScope(this.relativeToRoot(abs)) && inScope(real)) return;
    const allowed = (this.writeScope ?? []).map((g) => `"${g}"`).join(', ');
    throw new Error(
      `Path "${input}" is outside this agent's write scope; it may only write files matching ${allowed || '(nothing)'} (relative to ${this.root}). Choose a path inside the scope, or report that the change is needed elsewhere.`,
    );
  }
}
