// The commits follow-up rounds put on a changeset's branch: each round's patch applied on the
// commit before it, with the round's message and dates fixed to the round's end (changeCommit):
// the same rounds always make the same commits. `publish --apply` rebuilds the whole chain (the
// change's commit, then every round), so publishing again after a follow-up pushes nothing and
// never drops a round's commit; a follow-up pushes the same commit a restart computes again.
import { existsSync, readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import type { Changeset } from '../run/changesets.js';
import { changeCommit } from './branch-push.js';
import { followUpMessage } from './follow-up-evidence.js';

type Round = NonNullable<Changeset['followUps']>[number];

/** The commit of one round on `parent`. */
export async function roundCommit(args: {
  repo: string;
  runDir: string;
  parent: string;
  round: Pick<Round, 'round' | 'reason' | 'at' | 'patchFile'>;
  branch: string;
}): Promise<{ ok: true; commit: string } | { ok: false; error: string }> {
  const path = resolve(args.runDir, args.round.patchFile);
  if (!existsSync(path))
    return { ok: false, error: `the patch of follow-up round ${args.round.round} (${path}) is missing` };
  const r = await changeCommit({
    repo: args.repo,
    baseCommit: args.parent,
    patch: readFileSync(path, 'utf8'),
    message: followUpMessage(args.round.reason, args.round.round),
    whenMs: args.round.at,
    ref: `refs/orchestrate/publish/${args.branch}`,
  });
  return r.ok ? { ok: true, commit: r.commit } : r;
}

/** The branch's head: the change's commit with every round of the changeset on top, in order. */
export async function chainHead(args: {
  repo: string;
  runDir: string;
  changeCommit: string;
  changeset: Pick<Changeset, 'followUps' | 'branch'>;
}): Promise<{ ok: true; commit: string } | { ok: false; error: string }> {
  let head = args.changeCommit;
  for (const round of args.changeset.followUps ?? []) {
    const r = await roundCommit({
      repo: args.repo,
      runDir: args.runDir,
      parent: head,
      round,
      branch: args.changeset.branch,
    });
    if (!r.ok) return r;
    head = r.commit;
  }
  return { ok: true, commit: head };
}
