// The changesets of a run: one per finished instance whose task has a `publish:` spec and whose
// work left a patch in a git repository. Computed from the run record alone (run.jsonl folded,
// patches/), so the run's end and `orchestrate publish` (which re-renders with the recipe as it
// is now: an edited title template updates the pull request in place) compute the same thing.
// Nothing here touches a repository or a remote.
import { landedAttempt } from '../run/attempt-pick-record.js';
import { existsSync, readFileSync } from 'node:fs';
import { basename, relative, resolve } from 'node:path';
import type { LoadedRecipe } from '../recipe/index.js';
import { renderText } from '../recipe/expressions.js';
import type { PublishSpec } from '../recipe/publish-spec.js';
import {
  type Changeset,
  type ChangesetsFile,
  type Diffstat,
  readChangesets,
  writeChangesets,
} from '../run/changesets.js';
import { type InstanceState as FoldedInstance, foldEvents, instancesInTaskOrder } from '../run/run-fold.js';
import { roundMayPush } from '../run/follow-up-record.js';
import { runRootOf } from '../run/run-paths.js';
import { readRunLog } from '../run/run-store.js';
import { pullRequestSummary } from './pull-request-summary.js';

/** Files, added and removed lines of a git patch (binary files count as a file with no lines). */
export function diffstatOf(patch: string): Diffstat {
  let files = 0;
  let insertions = 0;
  let deletions = 0;
  let inHunk = false;
  for (const line of patch.split('\n')) {
    if (line.startsWith('diff --git ')) {
      files++;
      inHunk = false;
    } else if (line.startsWith('@@')) inHunk = true;
    else if (inHunk && line.startsWith('+')) insertions++;
    else if (inHunk && line.startsWith('-')) deletions++;
  }
  return { files, insertions, deletions };
}

export function diffstatText(d: Diffstat): string {
  return `${d.files} file${d.files === 1 ? '' : 's'} changed, ${d.insertions} insertion${d.insertions === 1 ? '' : 's'}(+), ${d.deletions} deletion${d.deletions === 1 ? '' : 's'}(-)`;
}

/** A branch name git accepts: the rendered text with what a ref may not hold replaced by '-'. */
export function safeBranchName(text: string): string {
  const cleaned = text
    // biome-ignore lint/suspicious/noControlCharactersInRegex: git refuses control characters in a ref name
    .replace(/[\s~^:?*[\\\x00-\x1f\x7f]+/g, '-')
    .replace(/\.\.+/g, '.')
    .replace(/@\{/g, '-')
    .split('/')
    .map((part) =>
      part
        .replace(/^\.+/, '')
        .replace(/\.lock$/, '-lock')
        .replace(/\.$/, ''),
    )
    .filter(Boolean)
    .join('/');
  return cleaned || 'orchestrate-change';
}

/** The `publish --rebase` re-runs that moved the instance to a newer base (from the run log). */
function rebasesOf(inst: FoldedInstance): Pick<Changeset, 'rebases'> {
  const done = (inst.rebases ?? []).filter((r) => r.ok === true);
  return done.length
    ? {
        rebases: done.map((r) => ({
          at: r.endTs ?? r.startTs,
          base: r.base,
          fromCommit: r.fromCommit,
          baseCommit: r.baseCommit,
        })),
      }
    : {};
}

/**
 * The follow-up rounds that gave the branch a commit (from the run log): those that made a change,
 * since the last rebase (a rebase redoes the change from its base: earlier rounds' commits go), and
 * not held at (or rejected by) their follow_up.approve gate.
 */
function followUpsOf(inst: FoldedInstance, gated: boolean): Pick<Changeset, 'followUps'> {
  const rebased = Math.max(0, ...(inst.rebases ?? []).filter((r) => r.ok === true).map((r) => r.endTs ?? r.startTs));
  const rounds = (inst.followUps ?? []).filter(
    (f) =>
      f.ok === true &&
      f.patchFile !== undefined &&
      f.endTs !== undefined &&
      f.endTs > rebased &&
      roundMayPush(f, gated),
  );
  return rounds.length
    ? {
        followUps: rounds.map((f) => ({
          round: f.round,
          reason: f.reason,
          evidence: f.evidence,
          at: f.endTs!,
          patchFile: f.patchFile!,
          ...(f.commit ? { commit: f.commit } : {}),
        })),
      }
    : {};
}

export interface PlanResult {
  file: ChangesetsFile;
  /** Changesets that could not be computed (a template that failed to render), with why. */
  problems: string[];
}

/**
 * The changesets of the run in `runDir` as `recipe` renders them. The state of what was published
 * already (pushed commit, pull request, state) is carried over from `previous` by key.
 */
export function planChangesets(runDir: string, recipe: LoadedRecipe, previous?: ChangesetsFile): PlanResult {
  const log = readRunLog(resolve(runDir, 'run.jsonl'));
  const state = foldEvents(log.events);
  const root = runRootOf(runDir, state.start) ?? recipe.dir;
  const tasks = new Map(recipe.tasks.map((t) => [t.id, t]));
  const before = new Map((previous?.changesets ?? []).map((c) => [c.key, c]));
  const problems: string[] = [];
  const changesets: Changeset[] = [];
  for (const inst of instancesInTaskOrder(state)) {
    const spec = tasks.get(inst.task)?.publish;
    if (!spec || inst.status !== 'done' || !inst.git?.commit) continue;
    // attempts: only the attempt that was picked and landed is published.
    if (tasks.get(inst.task)?.attempts && !landedAttempt(state.picks, inst.key)) continue;
    const patchPath = inst.patchFile ? resolve(runDir, inst.patchFile) : undefined;
    const patch = patchPath && existsSync(patchPath) ? readFileSync(patchPath, 'utf8') : '';
    const old = before.get(inst.label);
    // No change (any more): nothing to publish, unless a pull request was opened for it before.
    if (!patch.trim() && !old) continue;
    const diffstat = diffstatOf(patch);
    const repoPath = relative(root, inst.git.root) || '.';
    const names = {
      key: inst.key,
      task: inst.task,
      // What the instance did for a reviewer (Goal, Progress, Files), not the whole handoff; the
      // goal of a change redone by publish --rebase is still the task it was given.
      summary:
        inst.summary !== undefined
          ? pullRequestSummary(inst.summary, rebasesOf(inst).rebases ? inst.prompt : undefined)
          : (inst.text ?? ''),
      diffstat: { ...diffstat, text: diffstatText(diffstat) },
      repo: { name: basename(inst.git.root), path: repoPath },
      run: { id: state.runId },
    };
    const scope = { inputs: recipe.inputValues, env: {}, tasks: {}, names };
    const rendered: Partial<Record<keyof PublishSpec, string>> = {};
    let failed = false;
    for (const field of ['remote', 'repository', 'branch', 'base', 'commitMessage', 'title', 'body'] as const) {
      const text = spec[field];
      if (text === undefined) continue;
      const r = renderText(text, scope);
      if (!r.ok) {
        problems.push(`${inst.label}: publish ${field}: ${r.error}`);
        failed = true;
      } else rendered[field] = String(r.value);
    }
    if (failed) continue;
    const base: Changeset = {
      key: inst.label,
      task: inst.task,
      instance: inst.key,
      forge: spec.forge,
      repo: repoPath,
      remote: rendered.remote!,
      ...(rendered.repository ? { repository: rendered.repository } : {}),
      ...(spec.baseUrl ? { baseUrl: spec.baseUrl } : {}),
      branch: safeBranchName(rendered.branch!),
      base: rendered.base!,
      baseCommit: inst.git.commit,
      patchFile: inst.patchFile ?? `patches/${inst.key}.diff`,
      title: rendered.title!,
      body: rendered.body!,
      commitMessage: rendered.commitMessage!,
      draft: spec.draft,
      labels: spec.labels,
      reviewers: spec.reviewers,
      diffstat,
      ...(inst.summary ? { summary: inst.summary } : {}),
      ...rebasesOf(inst),
      ...followUpsOf(inst, spec.followUp?.approve !== undefined),
      // When its result was made (a later event, e.g. a failed rebase, must not change the commit's date).
      doneTs: inst.doneTs ?? inst.lastTs,
      state: old?.state ?? 'unpublished',
    };
    if (old?.pushedCommit) base.pushedCommit = old.pushedCommit;
    if (old?.pr) base.pr = old.pr;
    if (old?.publishedAt) base.publishedAt = old.publishedAt;
    // A published branch keeps its name: renaming it would open a second pull request.
    if (old?.pr || old?.pushedCommit) base.branch = old.branch;
    changesets.push(base);
  }
  return { file: { version: 1, runId: state.runId, updatedAt: Date.now(), changesets }, problems };
}

/**
 * The run's changesets as planned now, keeping what its changesets.json recorded (branches,
 * pull requests, pushed commits); a corrupt file is planned afresh.
 */
export function replanChangesets(runDir: string, recipe: LoadedRecipe): PlanResult {
  let previous: ChangesetsFile | undefined;
  try {
    previous = readChangesets(runDir);
  } catch {
    previous = undefined;
  }
  return planChangesets(runDir, recipe, previous);
}

/**
 * The run's end: writes changesets.json when any task publishes (nothing is pushed). Returns
 * what could not be computed; a run without publish: writes nothing.
 */
export function writeRunChangesets(runDir: string, recipe: LoadedRecipe): string[] {
  if (!recipe.tasks.some((t) => t.publish)) return [];
  const { file, problems } = replanChangesets(runDir, recipe);
  writeChangesets(runDir, file);
  return problems;
}
