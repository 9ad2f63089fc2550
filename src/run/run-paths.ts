// Paths in a run folder are stored relative, so a copy of the whole project folder (recipe, repos
// and `.orchestrate/runs` together) resumes on the copy's files and never touches the original.
//
// The run's root is the folder the recipe's paths are resolved from (the recipe's folder).
// run_start carries it as `root`, relative to the run folder; its `recipe`, and the `cwd` and
// `repoRoot` of instance_start, are relative to that root. Files the run folder holds
// (`sessionFile`, `worktree`) are relative to the run folder, like `patchFile` and result.json's
// `sessions`. Paths outside their base are relative too (`../repos/a`): a project copied whole
// keeps them pointing inside the copy. Only a path with no relative form (another drive) stays
// absolute. Logs written before this (absolute paths, no `root`) read as they are: an absolute
// path is never rebased.
import { dirname, isAbsolute, relative, resolve, sep } from 'node:path';
import type { RunEvent, RunEventInput } from './run-events.js';

/** `abs` relative to `base`, '/'-separated ('.' for the base itself); unchanged when it has no relative form. */
export function storedPath(base: string, abs: string): string {
  if (!isAbsolute(abs)) return abs;
  const rel = relative(base, abs);
  if (isAbsolute(rel)) return abs;
  return rel === '' ? '.' : rel.split(sep).join('/');
}

/** A stored path read back: relative ones resolve against `base`. */
export function absolutePath(base: string, stored: string): string {
  return isAbsolute(stored) ? stored : resolve(base, stored);
}

/** The run's root, absolute, from its run_start (old logs: the folder of the absolute recipe path). */
export function runRootOf(runDir: string, start: { root?: string; recipe: string } | undefined): string | undefined {
  if (!start) return undefined;
  if (start.root !== undefined) return absolutePath(runDir, start.root);
  return isAbsolute(start.recipe) ? dirname(start.recipe) : undefined;
}

/** The path fields of instance_start, each mapped by the base it is stored against. */
type InstancePaths = { cwd?: string; repoRoot?: string; sessionFile?: string; worktree?: string };

function mapInstancePaths<T extends InstancePaths>(
  e: T,
  underRoot: (p: string) => string,
  underRun: (p: string) => string,
): T {
  const out = { ...e };
  if (out.cwd !== undefined) out.cwd = underRoot(out.cwd);
  if (out.repoRoot !== undefined) out.repoRoot = underRoot(out.repoRoot);
  if (out.sessionFile !== undefined) out.sessionFile = underRun(out.sessionFile);
  if (out.worktree !== undefined) out.worktree = underRun(out.worktree);
  return out;
}

/**
 * An event as the run folder stores it. `root` is the run's root (absolute); run_start, whose
 * recipe is absolute when it is emitted, defines it.
 */
export function toStoredPaths(e: RunEventInput, runDir: string, root: string | undefined): RunEventInput {
  if (e.type === 'run_start') {
    if (!isAbsolute(e.recipe)) return e;
    const r = dirname(e.recipe);
    return { ...e, root: storedPath(runDir, r), recipe: storedPath(r, e.recipe) };
  }
  if (e.type !== 'instance_start') return e;
  return mapInstancePaths(
    e,
    (p) => (root === undefined ? p : storedPath(root, p)),
    (p) => storedPath(runDir, p),
  );
}

/** A stored event with every path absolute again (`root`: from this run's run_start). */
export function toAbsolutePaths(e: RunEvent, runDir: string, root: string | undefined): RunEvent {
  if (e.type === 'run_start') {
    const r = runRootOf(runDir, e);
    return r === undefined ? e : { ...e, root: r, recipe: absolutePath(r, e.recipe) };
  }
  if (e.type !== 'instance_start') return e;
  return mapInstancePaths(
    e,
    (p) => (root === undefined ? p : absolutePath(root, p)),
    (p) => absolutePath(runDir, p),
  );
}
