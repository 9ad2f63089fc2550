// `orchestrate publish <run> --follow-up [--apply]` (and `status --watch --follow-up`): each
// published changeset whose task's publish: block has `follow_up:` is looked at on its forge, and
// what its pull request needs goes back to the instance's agent: failing CI (the failing jobs'
// logs), review comments not answered yet (with file and line), or a conflict with its base (a
// `publish --rebase`). A round runs the agent on the branch as orchestrate pushed it
// (rerun-attempt.ts), puts its change on the branch as a new commit on top (a fast-forward, never
// a force push) and answers each handled comment with what changed. `merge_when:` turns on the
// forge's auto-merge once its conditions hold. Without --apply it only says what it would do.
//
// Rounds are in the run log (instance_followup_start / _end / _pushed), named by the changeset's
// instance, the round number and the evidence's id. A restart after kill -9 finds its place: a
// round whose agent ended but whose commit is not recorded as pushed is pushed first (its commit
// is the same commit again: follow-up-commits.ts; a branch already there is not pushed again); a
// round killed while its agent ran runs again under the same number; a comment already answered
// on the forge (the reply carries ANSWER_MARK) is not answered twice. With follow_up.approve a
// round's change waits at a gate before it is pushed (follow-up-gate.ts).
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import type { LoadedRecipe } from '../recipe/index.js';
import type { PublishSpec } from '../recipe/publish-spec.js';
import { type Changeset, type ChangesetsFile, readChangesets, writeChangesets } from '../run/changesets.js';
import { type InstanceState as FoldedInstance, foldEvents } from '../run/run-fold.js';
import { takeRunLease } from '../run/run-lease.js';
import { runRootOf } from '../run/run-paths.js';
import type { RunEventInput } from '../run/run-events.js';
import { RunStore, readRunLog } from '../run/run-store.js';
import { runRedactor } from '../run/secrets.js';
import { type FollowUpRecord, roundMayPush } from '../run/follow-up-record.js';
import { missingApiKey } from '../orchestrator/run-recipe.js';
import { recordedRemotes } from '../orchestrator/workspace/repo-remotes.js';
import { describeApproval } from '../run/approval-record.js';
import { type ResolvedRemote, pushBranch, remoteBranchCommit, resolveRemote } from './branch-push.js';
import { planChangesets } from './changeset-plan.js';
import { roundCommit } from './follow-up-commits.js';
import { awaitingText, roundGateRequest, timeoutAnswer } from './follow-up-gate.js';
import {
  type FollowUpEvidence,
  ciEvidence,
  evidenceText,
  followUpPrompt,
  replyText,
  reviewEvidence,
} from './follow-up-evidence.js';
import { type Forge, type PullRequestStatus, withoutSecrets } from './forge.js';
import { type ForgeAccess, forgeAccess, selectChangesets, unmatchedText } from './publish-run.js';
import { rebaseChangeset } from './rebase-run.js';
import { runInstanceAgain } from './rerun-attempt.js';

export interface FollowUpOptions {
  runDir: string;
  /** The run's recipe (its publish: blocks say follow_up: and merge_when:). */
  recipe: LoadedRecipe;
  apply: boolean;
  only?: readonly string[];
  env: Readonly<Record<string, string | undefined>>;
  say?: (line: string) => void;
}

export type FollowUpOutcome =
  /** Nothing to do now (CI pending or green, no comment waiting, or no follow_up:/merge_when:). */
  | 'none'
  /** Without --apply: what a follow-up would do. */
  | 'preview'
  /** A round ran and its commit is on the branch (and the comments it handled are answered). */
  | 'followed_up'
  /** A round made before (a restart) was pushed, or its comments answered. */
  | 'resumed'
  | 'rebased'
  | 'auto_merge'
  | 'merged'
  /** Merged or closed: the campaign is done with it. */
  | 'settled'
  | 'max_rounds'
  /** follow_up.approve: a round's change waits for `orchestrate approve <run> --follow-up`; nothing pushed. */
  | 'awaiting_approval'
  | 'failed';

export interface FollowUpResult {
  key: string;
  outcome: FollowUpOutcome;
  detail?: string;
  round?: number;
  reason?: 'ci_failed' | 'changes_requested' | 'conflict';
}

type Evidence = FollowUpEvidence | { reason: 'conflict'; id: string };

interface Ctx {
  opts: FollowUpOptions;
  c: Changeset;
  spec: PublishSpec;
  forge: Forge;
  access: ForgeAccess;
  repository: string;
  number: number;
}

const say = (o: FollowUpOptions, line: string) => o.say?.(line);

function fold(runDir: string) {
  return foldEvents(readRunLog(resolve(runDir, 'run.jsonl')).events);
}

function instanceOf(state: ReturnType<typeof fold>, c: Changeset): FoldedInstance | undefined {
  return [...state.instances.values()].find((i) => i.task === c.task && i.key === c.instance);
}

/** changesets.json re-planned from the log, with `key`'s pushed commit set. */
function recordPushed(o: FollowUpOptions, key: string, commit: string): Changeset {
  const file: ChangesetsFile | undefined = readChangesets(o.runDir);
  const before = file?.changesets.find((x) => x.key === key);
  if (before) before.pushedCommit = commit;
  const planned = planChangesets(o.runDir, o.recipe, file).file;
  planned.updatedAt = Date.now();
  writeChangesets(o.runDir, planned);
  return planned.changesets.find((x) => x.key === key)!;
}

export async function followUpRun(o: FollowUpOptions): Promise<{ results: FollowUpResult[]; problems: string[] }> {
  const file = readChangesets(o.runDir);
  if (!file) return { results: [], problems: [`${o.runDir} has no changesets.json: publish the run first`] };
  const { selected, unknown } = selectChangesets(file.changesets, o.only);
  if (unknown.length) return { results: [], problems: unknown.map(unmatchedText) };
  const specs = new Map(o.recipe.tasks.map((t) => [t.id, t.publish]));
  const cache = new Map<string, ForgeAccess>();
  const results: FollowUpResult[] = [];
  for (const c of selected) {
    const spec = specs.get(c.task);
    if (!spec?.followUp && !spec?.mergeWhen) {
      results.push({ key: c.key, outcome: 'none', detail: 'its publish: block has no follow_up: or merge_when:' });
      continue;
    }
    if (!c.pr || c.forge === 'git' || !c.repository) {
      // Why there is none, and what would give it one.
      const detail =
        c.forge === 'git'
          ? 'forge: git pushes a branch and opens no pull request, so there is nothing to follow up (follow_up and merge_when need forge: github or gitlab)'
          : c.state === 'unpublished'
            ? `not published yet: orchestrate publish ${file.runId} --apply --only ${c.key} opens its pull request`
            : 'no pull request was opened for it';
      results.push({ key: c.key, outcome: 'none', detail });
      continue;
    }
    let access: ForgeAccess = {};
    try {
      access = forgeAccess(c, o.env, cache, o.say);
      const ctx = { opts: o, c, spec, forge: access.forge!, access, repository: c.repository, number: c.pr.number };
      results.push(await followUpOne(ctx));
    } catch (err) {
      const detail = withoutSecrets(err instanceof Error ? err.message : String(err), [
        access.token,
        access.auth?.header,
      ]);
      results.push({ key: c.key, outcome: 'failed', detail });
    }
  }
  return { results, problems: [] };
}

async function followUpOne(x: Ctx): Promise<FollowUpResult> {
  const { opts: o, c } = x;
  let resumed = false;
  if (o.apply) {
    const pending = await pushPendingRounds(x);
    if (!pending.ok) return { key: c.key, outcome: 'failed', detail: pending.error };
    resumed = pending.pushed > 0;
  }
  const held = (instanceOf(fold(o.runDir), c)?.followUps ?? []).find((f) => f.approval?.state === 'waiting');
  if (held)
    return {
      key: c.key,
      outcome: 'awaiting_approval',
      round: held.round,
      reason: held.reason,
      detail: awaitingText(fold(o.runDir).runId, c, held),
    };
  const st = await x.forge.status(x.repository, x.number);
  if (st.state === 'merged' || st.state === 'closed')
    return { key: c.key, outcome: 'settled', detail: `${st.url} is ${st.state}` };
  const evidence = x.spec.followUp ? await evidenceOf(x, st) : undefined;
  if (!evidence) {
    const merge = await autoMerge(x, st);
    if (merge) return merge;
    return { key: c.key, outcome: resumed ? 'resumed' : 'none', detail: waitingFor(st) };
  }
  const inst = instanceOf(fold(o.runDir), c);
  if (!inst) return { key: c.key, outcome: 'failed', detail: `the run log has no instance ${c.key}` };
  const rounds = inst.followUps ?? [];
  const same = evidence.reason === 'conflict' ? undefined : rounds.find((f) => f.evidence === evidence.id);
  if (same?.ok === true && same.commit && evidence.reason === 'changes_requested') {
    // Pushed before a kill, its comments not all answered: answer them now.
    if (!o.apply) return { key: c.key, outcome: 'preview', detail: `would answer the comments of round ${same.round}` };
    await answer(x, evidence, same.round, same.commit, same.patchFile, same.text);
    return { key: c.key, outcome: 'resumed', round: same.round, reason: evidence.reason, detail: 'comments answered' };
  }
  if (same?.ok !== undefined)
    return {
      key: c.key,
      outcome: same.ok ? 'none' : 'failed',
      round: same.round,
      detail: same.ok
        ? same.approval?.state === 'rejected'
          ? `round ${same.round} on this evidence was ${describeApproval(same.approval)}; not pushed, not run again`
          : `round ${same.round} answered this already; waiting for the forge`
        : `round ${same.round} on the same evidence failed (${same.error ?? 'no change'}); not run again`,
    };
  const used = new Set(rounds.map((f) => f.round)).size + rebasesSincePublish(inst, c);
  const max = x.spec.followUp!.maxRounds;
  const round = same?.round ?? new Set(rounds.map((f) => f.round)).size + 1;
  if (!same && used >= max)
    return {
      key: c.key,
      outcome: 'max_rounds',
      detail: `${max} follow-up rounds done (max_rounds); ${waitingFor(st)}`,
    };
  if (!o.apply)
    return {
      key: c.key,
      outcome: 'preview',
      round,
      reason: evidence.reason,
      detail: evidence.reason === 'conflict' ? 'would rebase it' : `would send back:\n${evidenceText(evidence)}`,
    };
  if (evidence.reason === 'conflict') {
    const r = await rebaseChangeset({
      runDir: o.runDir,
      recipe: o.recipe,
      key: c.key,
      apply: true,
      env: o.env,
      ...(o.say ? { say: o.say } : {}),
    });
    if (r.kind === 'rebased')
      return { key: c.key, outcome: 'rebased', reason: 'conflict', detail: `onto ${r.to.slice(0, 12)}` };
    return {
      key: c.key,
      outcome: r.kind === 'current' ? 'none' : 'failed',
      detail: r.kind === 'current' ? r.message : r.error,
    };
  }
  return runRound(x, inst, evidence, round);
}

/** Rebases done for conflicts since the changeset was published (each counts as a round). */
function rebasesSincePublish(inst: FoldedInstance, c: Changeset): number {
  return (inst.rebases ?? []).filter((r) => r.ok === true && r.startTs >= (c.publishedAt ?? 0)).length;
}

function waitingFor(st: PullRequestStatus): string {
  return `checks ${st.checks}, review ${st.review}, ${st.mergeable}${st.autoMerge ? ', auto-merge on' : ''}`;
}

/** What the pull request needs, in the order follow_up.on allows: a conflict first, then CI, then comments. */
async function evidenceOf(x: Ctx, st: PullRequestStatus): Promise<Evidence | undefined> {
  const on = x.spec.followUp!.on;
  if (on.includes('conflict') && st.mergeable === 'needs_rebase')
    return { reason: 'conflict', id: `conflict:${st.headSha ?? ''}` };
  if (on.includes('ci_failed') && st.checks === 'failing' && st.headSha) {
    const failures = await x.forge.ciFailures(x.repository, x.number, st.headSha);
    if (failures.length) return ciEvidence(st.headSha, failures);
  }
  if (on.includes('changes_requested') && (st.unanswered ?? 0) > 0) {
    const open = (await x.forge.reviewComments(x.repository, x.number)).filter((cm) => !cm.answered);
    if (open.length) return reviewEvidence(open);
  }
  return undefined;
}

/** merge_when: the forge's auto-merge, once nothing it lists is missing and nothing asks for work. */
async function autoMerge(x: Ctx, st: PullRequestStatus): Promise<FollowUpResult | undefined> {
  const when = x.spec.mergeWhen;
  if (!when || st.state !== 'open' || st.autoMerge) return undefined;
  if (st.checks === 'failing' || st.review === 'changes_requested' || st.mergeable === 'needs_rebase') return undefined;
  if (when.includes('approved') && st.review !== 'approved') return undefined;
  if (!x.opts.apply) return { key: x.c.key, outcome: 'preview', detail: "would turn on the forge's auto-merge" };
  const r = await x.forge.enableAutoMerge(x.repository, x.number);
  return r === 'merged'
    ? { key: x.c.key, outcome: 'merged', detail: `${st.url}: nothing left to wait for, merged` }
    : { key: x.c.key, outcome: 'auto_merge', detail: `${st.url}: auto-merge on` };
}

/** Takes the run's lease for `fn` (only its holder writes the run log). */
async function withLease<T>(runDir: string, fn: () => Promise<T>): Promise<T | { ok: false; error: string }> {
  const state = fold(runDir);
  const taken = takeRunLease(runDir, state.runId);
  if (!taken.ok) return { ok: false, error: taken.message };
  try {
    return await fn();
  } finally {
    await taken.lease.release();
  }
}

async function remoteOf(
  x: Ctx,
): Promise<{ ok: true; repo: string; remote: ResolvedRemote } | { ok: false; error: string }> {
  const state = fold(x.opts.runDir);
  const root = runRootOf(x.opts.runDir, state.start) ?? x.opts.recipe.dir;
  const repo = resolve(root, x.c.repo);
  const remote = await resolveRemote(
    repo,
    x.c.remote,
    root,
    x.c.forge,
    x.c.baseUrl,
    x.opts.env,
    recordedRemotes(state, x.c.task, x.c.instance),
  );
  return remote.ok ? { ok: true, repo, remote } : remote;
}

/**
 * Rounds whose agent made a change that is not recorded as pushed (a kill came between): their
 * commit is made again (the same commit) and pushed onto the commit before it, and recorded.
 */
async function pushPendingRounds(x: Ctx): Promise<{ ok: true; pushed: number } | { ok: false; error: string }> {
  const gate = x.spec.followUp?.approve;
  const made = () =>
    (instanceOf(fold(x.opts.runDir), x.c)?.followUps ?? []).filter(
      (f) => f.ok === true && f.patchFile && !f.commit && f.endTs,
    );
  const now = Date.now();
  // Something to write: a round to push, a gate not asked yet (a kill came between), a deadline passed.
  const todo = (f: FollowUpRecord) =>
    roundMayPush(f, gate !== undefined) || (gate && !f.approval) || timeoutAnswer(x.c, f, now);
  if (!made().some(todo)) return { ok: true, pushed: 0 };
  const r = await withLease(x.opts.runDir, async () => {
    // Gates first (under the lease, folded): asked when missing, answered with on_timeout when due.
    const asked = gate ? made().filter((f) => !f.approval) : [];
    const requests = asked.map((f) =>
      roundGateRequest({ gate: gate!, c: x.c, round: f, files: filesOf(resolve(x.opts.runDir, f.patchFile!)), now }),
    );
    const due = made().flatMap((f) => timeoutAnswer(x.c, f, now) ?? []);
    if (requests.length || due.length) appendEvents(x.opts, [...requests, ...due]);
    const pending = made().filter((f) => roundMayPush(f, gate !== undefined));
    for (const f of pending) {
      const pushed = await pushRound(x, f);
      if (!pushed.ok) return pushed;
    }
    return { ok: true as const, pushed: pending.length };
  });
  return r;
}

function appendEvents(o: FollowUpOptions, events: readonly RunEventInput[]): void {
  const store = RunStore.open(o.runDir, { redactor: runRedactor(o.recipe, o.env) });
  for (const e of events) store.append(e);
  store.flush();
}

/** One round's commit onto the branch (a fast-forward from the commit it was made on), then recorded. */
async function pushRound(
  x: Ctx,
  f: NonNullable<FoldedInstance['followUps']>[number],
): Promise<{ ok: true; commit: string } | { ok: false; error: string }> {
  const where = await remoteOf(x);
  if (!where.ok) return where;
  const made = await roundCommit({
    repo: where.repo,
    runDir: x.opts.runDir,
    parent: f.fromCommit,
    round: { round: f.round, reason: f.reason, at: f.endTs!, patchFile: f.patchFile! },
    branch: x.c.branch,
  });
  if (!made.ok) return made;
  const pushed = await pushBranch({
    repo: where.repo,
    remote: where.remote,
    branch: x.c.branch,
    commit: made.commit,
    lastPushed: f.fromCommit,
    ...(x.access.auth ? { auth: x.access.auth } : {}),
  });
  if (!pushed.ok) return { ok: false, error: pushed.error };
  say(
    x.opts,
    `${x.c.key}: ${pushed.pushed ? 'pushed' : 'found on the branch already'} ${made.commit.slice(0, 12)} (follow-up round ${f.round})`,
  );
  const store = RunStore.open(x.opts.runDir, { redactor: runRedactor(x.opts.recipe, x.opts.env) });
  store.append({
    type: 'instance_followup_pushed',
    task: x.c.task,
    key: x.c.instance,
    attempt: f.attempt,
    parent: x.c.task,
    round: f.round,
    evidence: f.evidence,
    commit: made.commit,
  });
  store.flush();
  x.c = recordPushed(x.opts, x.c.key, made.commit);
  return { ok: true, commit: made.commit };
}

async function runRound(x: Ctx, inst: FoldedInstance, e: FollowUpEvidence, round: number): Promise<FollowUpResult> {
  const { opts: o, c } = x;
  const fail = (detail: string): FollowUpResult => ({ key: c.key, outcome: 'failed', round, reason: e.reason, detail });
  const from = c.pushedCommit;
  if (!from) return fail('it was never pushed');
  const missing = missingApiKey(o.recipe, o.env);
  if (missing) return fail(missing);
  const where = await remoteOf(x);
  if (!where.ok) return fail(where.error);
  // Checked before the round is paid for; the push itself is leased on the same commit.
  const now = await remoteBranchCommit(where.repo, where.remote, c.branch, x.access.auth);
  if (!now.ok) return fail(now.error);
  if (now.commit !== from)
    return fail(
      `${c.branch} on ${where.remote.url} is at ${now.commit?.slice(0, 12) ?? '(nothing)'}, not at ${from.slice(0, 12)} orchestrate pushed; someone else's commit would be built on unseen. Merge it by hand`,
    );
  say(o, `${c.key}: follow-up round ${round} (${e.reason.replace('_', ' ')}) on ${from.slice(0, 12)}`);
  const r = await withLease(o.runDir, async () => {
    const state = fold(o.runDir);
    const latest = instanceOf(state, c) ?? inst;
    const ran = await runInstanceAgain(
      {
        runDir: o.runDir,
        recipe: o.recipe,
        env: o.env,
        fold: state,
        inst: latest,
        changeset: c,
        repo: where.repo,
        startCommit: from,
      },
      {
        name: 'followup',
        prompt: ({ prompt }) =>
          followUpPrompt({
            prompt,
            ...(c.summary ? { summary: c.summary } : {}),
            evidence: e,
            url: c.pr!.url,
            branch: c.branch,
          }),
        start: (ref, sessionFile) => ({
          type: 'instance_followup_start',
          ...ref,
          round,
          reason: e.reason,
          evidence: e.id,
          fromCommit: from,
          sessionFile,
        }),
        end: (ref, res) => ({
          type: 'instance_followup_end',
          ...ref,
          round,
          evidence: e.id,
          ok: res.ok,
          ...(res.patchFile ? { patchFile: res.patchFile } : {}),
          ...(res.text !== undefined ? { text: res.text } : {}),
          ...(res.failure ? { failure: res.failure } : {}),
          ...(res.error !== undefined ? { error: res.error } : {}),
          usage: res.usage,
          durationMs: res.durationMs,
        }),
      },
    );
    if (!ran.ok) return { ok: false as const, error: ran.error };
    const f = instanceOf(fold(o.runDir), c)?.followUps?.find((y) => y.attempt === ran.attempt);
    if (!f) return { ok: false as const, error: 'the round is not in the run log' };
    const gate = x.spec.followUp?.approve;
    if (gate && f.patchFile) {
      const files = filesOf(resolve(o.runDir, f.patchFile));
      appendEvents(o, [roundGateRequest({ gate, c, round: f, files, now: Date.now() })]);
      return { ok: true as const, held: true as const };
    }
    const pushed = await pushRound(x, f);
    if (!pushed.ok) return pushed;
    return { ok: true as const, commit: pushed.commit, patchFile: ran.patchFile, text: ran.text };
  });
  if (!r.ok) return fail(r.error);
  if ('held' in r) {
    const held = instanceOf(fold(o.runDir), c)?.followUps?.find((f) => f.round === round && f.approval);
    return {
      key: c.key,
      outcome: 'awaiting_approval',
      round,
      reason: e.reason,
      detail: held ? awaitingText(fold(o.runDir).runId, c, held) : `round ${round} waits for approval`,
    };
  }
  if (e.reason === 'changes_requested') await answer(x, e, round, r.commit, r.patchFile, r.text);
  return {
    key: c.key,
    outcome: 'followed_up',
    round,
    reason: e.reason,
    detail: `${r.commit.slice(0, 12)} on ${c.branch}`,
  };
}

/** Answers each comment of the evidence not answered yet on the forge (a restart answers none twice). */
async function answer(
  x: Ctx,
  e: Extract<FollowUpEvidence, { reason: 'changes_requested' }>,
  round: number,
  commit: string,
  patchFile: string | undefined,
  said: string | undefined,
): Promise<void> {
  const answered = new Set(
    (await x.forge.reviewComments(x.repository, x.number)).filter((cm) => cm.answered).map((cm) => cm.id),
  );
  const files = patchFile ? filesOf(resolve(x.opts.runDir, patchFile)) : [];
  for (const cm of e.comments) {
    if (answered.has(cm.id)) continue;
    await x.forge.reply(x.repository, x.number, cm, replyText(commit, round, files, said));
  }
}

function filesOf(patchPath: string): string[] {
  try {
    const text = readFileSync(patchPath, 'utf8');
    return [...text.matchAll(/^diff --git a\/(\S+) b\//gm)].map((m) => m[1]!);
  } catch {
    return [];
  }
}
