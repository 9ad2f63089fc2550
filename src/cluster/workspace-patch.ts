// The patch half of a workspace's travel (see workspace-transfer.ts for the whole): what an agent
// changed in an unpacked workspace since its baseline (workspaceDiff), putting an unpacked
// workspace back to that baseline (resetToBaseline), and applying such a patch to the original
// folder (applyWorkspacePatch). Kept apart from packing and unpacking because it is what runs at
// every checkpoint on the worker and at the end on the coordinator, while packing runs once.
//
// Every git here runs through tools/product-git (allowlisted environment, program-valued config
// disabled, sandboxed where bubblewrap works), like the rest of the workspace transfer.
import { existsSync, mkdtempSync, realpathSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { ORCHESTRATOR_DEFAULTS } from '../orchestrator/defaults.js';
import { copyGitIndex } from '../orchestrator/workspace/git-workspace.js';
import { findRepository, productGit, productGitScript } from '../tools/product-git.js';
import { snapshotWorkspace, type WorkspaceSnapshot } from './workspace-stat-cache.js';

/** The ref of an unpacked workspace that names its baseline (what workspaceDiff compares against). */
export const WORKSPACE_BASE_REF = 'refs/orchestrate/base';

/** Never packed, never diffed: the runs folder lives there. */
export const ALWAYS_EXCLUDED = [ORCHESTRATOR_DEFAULTS.stateDirName];

/** A command's stderr as one line for an error message. */
export function oneLine(text: string): string {
  return text
    .split('\n')
    .map((l) => l.trim())
    .filter(Boolean)
    .join('; ');
}

export function errorText(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

/** Pathspecs leaving out every file or folder with one of these names, at any depth. */
export function excludePathspecs(names: string[]): string[] {
  return names.flatMap((n) => [`:(exclude,glob)**/${n}`, `:(exclude,glob)**/${n}/**`]);
}

/**
 * The binary patch of everything changed in an unpacked workspace since its baseline: modified,
 * new (untracked, not ignored), deleted and binary files, mode changes; `.orchestrate` never.
 * Reads through a temporary index, so what the agent staged stays as it was. Empty when nothing
 * changed.
 */
export async function workspaceDiff(dir: string): Promise<Buffer> {
  const cwd = resolve(dir);
  // Nothing changed since the last diff (or the unpack): the same patch, without a git process.
  const known = lastDiffs.get(cwd);
  const now = snapshotWorkspace(cwd, known?.snapshot);
  if (known && now?.same) {
    lastDiffs.set(cwd, { snapshot: now.snapshot, patch: known.patch });
    return known.patch;
  }
  const patch = await gitWorkspaceDiff(cwd);
  if (now) lastDiffs.set(cwd, { snapshot: now.snapshot, patch });
  else lastDiffs.delete(cwd);
  return patch;
}

/**
 * The last patch workspaceDiff computed for each unpacked workspace, with the workspace's stat
 * then (workspace-stat-cache.ts). Kept until forgetWorkspace (the worker calls it when a job ends).
 */
const lastDiffs = new Map<string, { snapshot: WorkspaceSnapshot; patch: Buffer }>();

/** Records that `dir` holds exactly its baseline now (just unpacked): its diff is empty until a file changes. */
export function rememberBaseline(dir: string): void {
  const cwd = resolve(dir);
  const now = snapshotWorkspace(cwd);
  if (now) lastDiffs.set(cwd, { snapshot: now.snapshot, patch: Buffer.alloc(0) });
  else lastDiffs.delete(cwd);
}

/** Drops what workspaceDiff remembers of `dir` (its job ended). */
export function forgetWorkspace(dir: string): void {
  lastDiffs.delete(resolve(dir));
}

async function gitWorkspaceDiff(cwd: string): Promise<Buffer> {
  const tmp = mkdtempSync(join(tmpdir(), 'orchestrate-diff-'));
  try {
    // An unpacked workspace is a plain repository of ours: its index is .git/index. The copy keeps
    // git's stat cache warm (only changed files are read again).
    const tmpIndex = join(tmp, 'index');
    const repo = findRepository(cwd);
    if (repo && existsSync(join(repo.gitDir, 'index'))) copyGitIndex(join(repo.gitDir, 'index'), tmpIndex);
    // One sandboxed shell for the whole checkpoint (a sandbox start costs about as much as a git).
    const r = await productGitScript(
      WORKSPACE_DIFF_SCRIPT,
      [`${WORKSPACE_BASE_REF}^{commit}`, ...excludePathspecs(ALWAYS_EXCLUDED)],
      {
        cwd,
        env: { GIT_INDEX_FILE: tmpIndex },
        writable: [tmp],
      },
    );
    if (r.code === 3)
      throw new Error(
        `${cwd} is not an unpacked workspace: it has no ${WORKSPACE_BASE_REF} (unpack it with unpackWorkspace first)`,
      );
    if (r.code !== 0)
      throw new Error(`git could not diff the workspace ${cwd}: ${oneLine(r.stderr) || `exit code ${String(r.code)}`}`);
    return r.stdout;
  } finally {
    rmSync(tmp, { recursive: true, force: true });
  }
}

/**
 * workspaceDiff's git commands: $1 the baseline, $2 $3 the never-diffed pathspecs, with the
 * throwaway index in place. Untracked folders that are repositories of their own
 * (nestedRepoPathspecs) are left out of the add.
 */
const WORKSPACE_DIFF_SCRIPT = `base=$(git rev-parse --verify -q "$1") || exit 3
never1=$2
never2=$3
shift 3
nested=$(git ls-files -z --others --exclude-standard -- . "$never1" "$never2" | tr '\\0' '\\n' | sed -n 's|/$||p') || exit 4
while IFS= read -r p; do
  if [ -n "$p" ]; then set -- "$@" ":(exclude,literal)$p"; fi
done <<__NESTED__
$nested
__NESTED__
git add -A -- . "$never1" "$never2" "$@" || exit 4
# Plumbing diff: no textconv, colour, prefixes or renames from the user's config.
exec git diff-index --cached -p --binary --full-index --no-renames --no-ext-diff --no-textconv "$base" -- . "$never1" "$never2"
`;

/**
 * Puts an unpacked workspace back to its baseline (tracked files restored, untracked ones that
 * are not ignored removed), in one product shell. Best effort: says nothing when it fails.
 */
export async function resetToBaseline(dir: string): Promise<void> {
  forgetWorkspace(dir);
  try {
    await productGitScript('git checkout -q -f "$1" -- . && exec git clean -q -f -d', [WORKSPACE_BASE_REF], {
      cwd: resolve(dir),
    });
  } catch {
    // the caller's next step (an apply) says whether the workspace is usable
  }
}

/** The paths a patch leaves changed (new names of renames) and every path it touches, from `git apply --numstat -z`. */
function patchedFiles(numstat: Buffer): { files: string[]; touched: string[] } {
  const fields = numstat.toString('utf8').split('\0');
  const files: string[] = [];
  const touched: string[] = [];
  for (let i = 0; i < fields.length; i++) {
    const m = /^[-\d]+\t[-\d]+\t(.*)$/s.exec(fields[i] ?? '');
    if (!m) continue;
    if (m[1]) {
      files.push(m[1]);
      touched.push(m[1]);
    } else {
      // A rename or copy: the old and the new path follow as their own fields.
      const from = fields[i + 1] ?? '';
      const to = fields[i + 2] ?? '';
      files.push(to);
      touched.push(from, to);
      i += 2;
    }
  }
  return { files: [...new Set(files)], touched };
}

/**
 * Applies a workspace patch to the original folder `dir` (a git work tree or a plain folder). It is
 * checked first: a patch that does not apply changes nothing. Applied to the files only, never to
 * the user's index. Returns the files it changed, relative to `dir`.
 */
export async function applyWorkspacePatch(
  dir: string,
  patch: Buffer,
): Promise<{ ok: true; files: string[] } | { ok: false; error: string }> {
  if (patch.toString('utf8').trim() === '') return { ok: true, files: [] };
  const abs = resolve(dir);
  let real: string;
  try {
    real = realpathSync(abs);
    if (!statSync(real).isDirectory())
      return { ok: false, error: `cannot apply the workspace patch: ${abs} is not a folder` };
  } catch {
    return { ok: false, error: `cannot apply the workspace patch: the folder ${abs} does not exist` };
  }
  // In a subfolder of a repository git apply would read paths from the repository's top and skip
  // the rest silently; stopping the search for a repository above `dir` makes them relative to it.
  const opts = { cwd: real, env: { GIT_CEILING_DIRECTORIES: dirname(real) }, input: patch };
  const applyArgs = ['apply', '--whitespace=nowarn', '-p1'];
  try {
    const stat = await productGit([...applyArgs, '--numstat', '-z'], opts);
    if (stat.code !== 0)
      return { ok: false, error: `the workspace patch for ${abs} is not a valid patch: ${oneLine(stat.stderr)}` };
    const { files, touched } = patchedFiles(stat.stdout);
    // workspaceDiff never includes run state; a patch that does is not a workspace patch.
    const stateName = ALWAYS_EXCLUDED[0] ?? '';
    const intoState = touched.find((f) => f.split('/').includes(stateName));
    if (intoState !== undefined)
      return {
        ok: false,
        error: `the workspace patch for ${abs} writes into ${intoState}: run state is never part of a workspace patch (nothing was changed)`,
      };
    const check = await productGit([...applyArgs, '--check'], opts);
    if (check.code !== 0) {
      return {
        ok: false,
        error: `the workspace patch does not apply to ${abs} (nothing was changed; the folder changed meanwhile): ${oneLine(check.stderr)}`,
      };
    }
    const applied = await productGit(applyArgs, opts);
    if (applied.code !== 0)
      return {
        ok: false,
        error: `applying the workspace patch to ${abs} failed after its check passed (files may be partly changed): ${oneLine(applied.stderr)}`,
      };
    return { ok: true, files };
  } catch (err) {
    return { ok: false, error: `cannot apply the workspace patch to ${abs}: ${errorText(err)}` };
  }
}
