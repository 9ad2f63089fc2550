// One `publish --rebase` attempt of a done instance: its agent runs again (rerun-attempt.ts) in a
// fresh worktree at the new base commit, with a first message that carries the earlier summary and
// patch (rebase-instance.ts), follow-up rounds' patches included. Logged as instance_rebase_start /
// instance_rebase_end; on success its patch is patches/<instance>.rebase-<attempt>.diff and
// instance_rebase_end moves the instance to it. The caller holds the run's lease. A kill leaves a start without an end: nothing changes.
import { existsSync, readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import type { Changeset } from '../run/changesets.js';
import { rebasePrompt } from './rebase-instance.js';
import { type RerunInput, type RerunResult, runInstanceAgain } from './rerun-attempt.js';

/** A re-run's input, started at the base branch's commit. */
export interface RebaseAttemptInput extends Omit<RerunInput, 'startCommit'> {
  /** The base branch's commit now (fetched into `repo`): the worktree starts there. */
  baseCommit: string;
}

export type RebaseAttemptResult = RerunResult;

/**
 * The change as it is on the branch: the instance's patch, then each follow-up round's patch on
 * top (a rebase redoes them all: a CI fix or a reviewer's change must not be lost).
 */
export function changeOnBranch(runDir: string, patchPath: string, c: Pick<Changeset, 'followUps'>): string {
  const read = (p: string) => (existsSync(p) ? readFileSync(p, 'utf8') : '');
  const rounds = (c.followUps ?? []).map(
    (f) =>
      `\n# then follow-up round ${f.round} (${f.reason.replace('_', ' ')}), on top:\n${read(resolve(runDir, f.patchFile))}`,
  );
  return read(patchPath) + rounds.join('');
}

export function runRebaseAttempt(a: RebaseAttemptInput): Promise<RebaseAttemptResult> {
  const base = { base: a.changeset.base, baseCommit: a.baseCommit, fromCommit: a.changeset.baseCommit };
  const patchPath = resolve(a.runDir, a.changeset.patchFile);
  return runInstanceAgain(
    { ...a, startCommit: a.baseCommit },
    {
      name: 'rebase',
      prompt: ({ prompt }) =>
        rebasePrompt({
          prompt,
          ...(a.changeset.summary ? { summary: a.changeset.summary } : {}),
          base: a.changeset.base,
          fromCommit: a.changeset.baseCommit,
          baseCommit: a.baseCommit,
          oldPatch: changeOnBranch(a.runDir, patchPath, a.changeset),
          patchFile: a.changeset.patchFile,
        }),
      start: (ref, sessionFile) => ({ type: 'instance_rebase_start', ...ref, ...base, sessionFile }),
      end: (ref, r) => ({ type: 'instance_rebase_end', ...ref, ...base, ...r }),
    },
  );
}
