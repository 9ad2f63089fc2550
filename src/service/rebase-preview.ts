// `orchestrate publish <run> --rebase [KEY] --dry-run` as data: before any agent runs again, which
// changesets will get in each other's way on a rebase, read from what is on this machine only (no
// network, nothing written). Two changesets of one repository whose patches touch the same file
// conflict in the order they land: whichever lands second needs a rebase over the first. And a
// changeset whose patch touches a file that moved on its base branch since the commit it was made
// on will not apply as it is. The base branch's tip is known locally when the repository has a
// remote-tracking branch of the changeset's remote (`refs/remotes/<name>/<base>`, as `git fetch`
// leaves it), or orchestrate fetched it before (`refs/orchestrate/base/<base>`: an earlier
// --rebase or status); otherwise the preview says it was not checked and how to check it.
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { earlierChanges, OBJECT_ID, patchPaths } from '../orchestrator/workspace/earlier-changes.js';
import { recordedRemotes } from '../orchestrator/workspace/repo-remotes.js';
import { fetchedBaseRef } from '../publish/branch-push.js';
import { replanChangesets } from '../publish/changeset-plan.js';
import { selectChangesets, unmatchedText } from '../publish/publish-run.js';
import type { LoadedRecipe } from '../recipe/index.js';
import type { Changeset } from '../run/changesets.js';
import { foldEvents } from '../run/run-fold.js';
import { runRootOf } from '../run/run-paths.js';
import { readRunLog } from '../run/run-store.js';
import { productGit } from '../tools/product-git.js';

/** Two changesets of one repository whose patches touch the same files. */
export interface RebaseOverlap {
  a: string;
  b: string;
  repo: string;
  files: string[];
}

/** What moved on a changeset's base branch since its base commit, as far as this machine knows. */
export interface BaseMoved {
  key: string;
  base: string;
  /** False: the base's tip is not known locally (`reason` says what to do). */
  checked: boolean;
  /** The local ref read, and the commit it is at. */
  ref?: string;
  tip?: string;
  /** Files of the changeset's patch that changed on the base since (empty: it applies as it is). */
  files?: string[];
  reason?: string;
}

export interface RebasePreview {
  runId: string;
  changesets: { key: string; state: string; repo: string; base: string; baseCommit: string; files: string[] }[];
  overlaps: RebaseOverlap[];
  baseMoved: BaseMoved[];
}

export type RebasePreviewResult =
  | { ok: true; preview: RebasePreview }
  | { ok: false; code: 'usage'; message: string; hint?: string };

/** The commit `ref` names in `repo`, if it is there. */
async function commitOf(repo: string, ref: string): Promise<string | undefined> {
  const r = await productGit(['rev-parse', '--verify', '--quiet', `${ref}^{commit}`], { cwd: repo });
  const out = r.stdout.toString('utf8').trim();
  return r.code === 0 && /^[0-9a-f]{40,64}$/.test(out) ? out : undefined;
}

/** The local refs that may know where the changeset's base branch is, most direct first. */
function candidateRefs(c: Changeset, remotes: Record<string, string> | undefined): string[] {
  const names = new Set<string>();
  for (const [name, url] of Object.entries(remotes ?? {})) if (name === c.remote || url === c.remote) names.add(name);
  if (/^[A-Za-z0-9._-]+$/.test(c.remote)) names.add(c.remote);
  return [...[...names].map((n) => `refs/remotes/${n}/${c.base}`), fetchedBaseRef(c.base)];
}

async function baseMoved(
  runId: string,
  c: Changeset,
  repo: string,
  files: string[],
  remotes?: Record<string, string>,
): Promise<BaseMoved> {
  const out: BaseMoved = { key: c.key, base: c.base, checked: false };
  // The base commit comes from the run's record: only an object id reaches git's command line.
  if (!OBJECT_ID.test(c.baseCommit))
    return { ...out, reason: `${c.key} has no base commit orchestrate can read (${c.baseCommit})` };
  try {
    for (const ref of candidateRefs(c, remotes)) {
      const tip = await commitOf(repo, ref);
      if (!tip) continue;
      if (tip === c.baseCommit) return { ...out, checked: true, ref, tip, files: [] };
      const d = await productGit(['diff', '--name-only', '-z', '--no-renames', '--no-ext-diff', c.baseCommit, tip], {
        cwd: repo,
      });
      if (d.code !== 0) continue;
      const moved = new Set(d.stdout.toString('utf8').split('\0').filter(Boolean));
      return { ...out, checked: true, ref, tip, files: files.filter((f) => moved.has(f)) };
    }
  } catch {
    // git cannot start here: not checked, as below.
  }
  return {
    ...out,
    reason: `where ${c.base} is now is not known on this machine (no remote-tracking branch of ${c.remote}); run git fetch in ${c.repo} to check it, or let orchestrate publish ${runId} --rebase ${c.key} fetch it`,
  };
}

/** What a rebase of the run's changesets (or of `key` with the ones it overlaps) would run into. */
export async function previewRebase(opts: {
  runDir: string;
  recipe: LoadedRecipe;
  key?: string;
}): Promise<RebasePreviewResult> {
  const { runDir, recipe } = opts;
  const all = replanChangesets(runDir, recipe).file.changesets;
  const fold = foldEvents(readRunLog(resolve(runDir, 'run.jsonl')).events);
  const root = runRootOf(runDir, fold.start) ?? recipe.dir;
  const key = opts.key?.trim();
  let focus: Changeset | undefined;
  if (key) {
    const { selected, unknown } = selectChangesets(all, [key]);
    if (unknown.length || !selected[0])
      return {
        ok: false,
        code: 'usage',
        message: `${unmatchedText(unknown[0] ?? { want: key, matches: [] })} in run ${fold.runId}`,
        hint: `changesets: ${all.map((c) => c.key).join(', ') || '(none)'}`,
      };
    focus = selected[0];
  }
  const filesOf = new Map<Changeset, string[]>();
  for (const c of all) {
    let files: string[] = [];
    try {
      files = patchPaths(readFileSync(resolve(runDir, c.patchFile), 'utf8'));
    } catch {
      // No patch left: fall back to what the log knows of the instance's work.
      const inst = [...fold.instances.values()].find((i) => i.task === c.task && i.key === c.instance);
      if (inst?.git) {
        const repo = inst.git.root;
        files = (await earlierChanges(runDir, { id: inst.key, git: inst.git })).map((f) => f.slice(repo.length + 1));
      }
    }
    filesOf.set(c, files);
  }
  const overlaps: RebaseOverlap[] = [];
  for (let i = 0; i < all.length; i++)
    for (let j = i + 1; j < all.length; j++) {
      const x = all[i]!;
      const y = all[j]!;
      if (x.repo !== y.repo || (focus && x !== focus && y !== focus)) continue;
      const ys = filesOf.get(y)!;
      const shared = filesOf.get(x)!.filter((f) => ys.includes(f));
      if (shared.length) overlaps.push({ a: x.key, b: y.key, repo: x.repo, files: shared });
    }
  const moved: BaseMoved[] = [];
  for (const c of focus ? [focus] : all)
    moved.push(
      await baseMoved(fold.runId, c, resolve(root, c.repo), filesOf.get(c)!, recordedRemotes(fold, c.task, c.instance)),
    );
  return {
    ok: true,
    preview: {
      runId: fold.runId,
      changesets: (focus ? [focus] : all).map((c) => ({
        key: c.key,
        state: c.state,
        repo: c.repo,
        base: c.base,
        baseCommit: c.baseCommit,
        files: filesOf.get(c)!,
      })),
      overlaps,
      baseMoved: moved,
    },
  };
}

/** The human form (what `publish --rebase --dry-run` prints). */
export function rebasePreviewText(p: RebasePreview): string {
  const lines = [`Rebase of run ${p.runId}: a dry run, no agent ran and nothing was fetched, pushed or written.`];
  for (const c of p.changesets)
    lines.push(
      `  ${c.key} (${c.state}) on ${c.base} ${c.baseCommit.slice(0, 12)}: ${c.files.join(', ') || '(no files)'}`,
    );
  if (p.overlaps.length) {
    lines.push(
      '  changesets whose patches overlap (they may conflict: whichever lands second is rebased over the first):',
    );
    for (const o of p.overlaps) lines.push(`    ${o.a} and ${o.b}: ${o.files.join(', ')} in ${o.repo}`);
  } else lines.push('  changesets whose patches overlap: none');
  lines.push('  moved on the base branch since:');
  for (const m of p.baseMoved) {
    if (!m.checked) lines.push(`    ${m.key}: not checked: ${m.reason}`);
    else if (m.tip && m.files?.length)
      lines.push(
        `    ${m.key}: ${m.files.join(', ')} changed on ${m.base} (${m.ref} at ${m.tip.slice(0, 12)}): the patch will not apply as it is`,
      );
    else lines.push(`    ${m.key}: nothing the patch touches (${m.ref} at ${m.tip?.slice(0, 12)})`);
  }
  return `${lines.join('\n')}\n`;
}
