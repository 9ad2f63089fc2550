// Workspace confinement: every path a tool touches is resolved against the tool's cwd and must
// stay under the workspace root, also after following symbolic links. Write tools may further
// be limited to a set of globs (the orchestrator's `writes:` scope).
import { lstatSync, readlinkSync, realpathSync } from 'node:fs';
import { homedir } from 'node:os';
import { dirname, isAbsolute, join, relative, resolve, sep } from 'node:path';
import { ConfinementError, locateConfined, type ConfinedEntry } from './confined-path.js';
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
  /**
   * Folders no file tool may read or write, wherever they lie (the runs folder: other agents'
   * conversations, run.jsonl). The sandbox hides the same folders from commands.
   */
  hidden?: string[];
  /**
   * Files edit and write refuse, wherever they lie; read may still read them (an orchestrated
   * run's trusted inputs: its recipe, agent files, .mcp.json). The sandbox keeps them read-only too.
   */
  readOnly?: string[];
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
  private readonly hidden: string[];
  private readonly readOnly: string[];

  constructor(options: WorkspaceOptions) {
    this.cwd = resolve(options.cwd);
    this.root = resolve(options.root ?? options.cwd);
    this.realRoot = realpathOfNearest(this.root);
    this.allowOutside = options.allowOutside ?? false;
    this.writeScope = options.writeScope;
    this.writeMatchers = (options.writeScope ?? []).map((g) => compileGlob(g));
    this.hidden = (options.hidden ?? []).map((p) => realpathOfNearest(resolve(p)));
    this.readOnly = (options.readOnly ?? []).map((p) => realpathOfNearest(resolve(p)));
  }

  /** Throws when `real` is one of the read-only files (write access only). */
  private checkWritable(real: string, input: string): void {
    if (!this.readOnly.includes(real)) return;
    throw new ConfinementError(
      `Path "${input}" is ${real}, a file this run trusts as its configuration (its recipe, an agent file, .mcp.json or hook settings); it is read-only to every tool (write, edit and bash alike). Leave it as it is, and say in your answer what should change in it.`,
    );
  }

  /** Throws when `real` lies in a hidden folder (unless the workspace itself is in it and `real` is in the workspace). */
  checkNotHidden(real: string, input: string): void {
    for (const h of this.hidden) {
      if (!isInside(h, real)) continue;
      if (isInside(h, this.realRoot) && isInside(this.realRoot, real)) continue; // a worktree inside the runs folder
      throw new ConfinementError(
        `Path "${input}" is inside ${h}, which holds the runs' logs, sessions and patches and is out of reach of every tool (read, write, edit, ls, grep, find and bash alike). Work on files of the workspace instead.`,
      );
    }
  }

  /** Whether a real path is readable by the tools (inside the workspace, not hidden); for walkers. */
  allowsReal(real: string): boolean {
    if (!this.allowOutside && !isInside(this.realRoot, real)) return false;
    try {
      this.checkNotHidden(real, real);
      return true;
    } catch {
      return false;
    }
  }

  /**
   * Like resolve, then walks to the entry race-free (confined-path.ts): the returned entry's folder
   * is held open, so later operations through `entry.path` cannot be redirected by a swapped
   * folder. Symlinks are followed while they stay inside. Close the entry when done.
   */
  locate(input: string, access: PathAccess = 'read', options: { createParents?: boolean } = {}): ConfinedEntry {
    const abs = this.resolve(input, access);
    const check = (real: string): void => {
      this.checkNotHidden(real, input);
      if (access === 'write') this.checkWritable(real, input);
    };
    if (this.allowOutside) {
      // No confinement asked for: only the hidden folders are refused (by the real path of the nearest folder).
      return locateConfined(realpathOfNearest(abs), {
        root: '/',
        createParents: options.createParents,
        check,
        shown: input,
        errorPath: abs,
      });
    }
    const real = join(this.realRoot, relative(this.root, abs));
    const entry = locateConfined(real, {
      root: this.realRoot,
      createParents: options.createParents,
      check,
      shown: input,
      errorPath: abs,
    });
    if (access === 'write' && this.writeScope) {
      try {
        this.checkWriteScope(input, abs, entry.real); // where the walk really arrived
      } catch (err) {
        entry.close();
        throw err;
      }
    }
    return entry;
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
    if (this.hidden.length > 0) this.checkNotHidden(realpathOfNearest(abs), input);
    if (access === 'write' && this.readOnly.length > 0) this.checkWritable(realpathOfNearest(abs), input);
    if (access === 'write' && this.writeScope) this.checkWriteScope(input, abs);
    return abs;
  }

  /** The path relative to the root with forward slashes (what write-scope globs match against). */
  relativeToRoot(abs: string): string {
    return toPosix(relative(this.root, abs));
  }

  private checkWriteScope(input: string, abs: string, realPath = realpathOfNearest(abs)): void {
    const inScope = (rel: string): boolean => this.writeMatchers.some((re) => re.test(rel));
    // Both the path as written and where it really leads (through links) must be in scope.
    const real = toPosix(relative(this.realRoot, realPath));
    if (inScope(this.relativeToRoot(abs)) && inScope(real)) return;
    const allowed = (this.writeScope ?? []).map((g) => `"${g}"`).join(', ');
    throw new Error(
      `Path "${input}" is outside this agent's write scope; it may only write files matching ${allowed || '(nothing)'} (relative to ${this.root}). Choose a path inside the scope, or report that the change is needed elsewhere.`,
    );
  }
}
