// Best-of-N attempts in the run's record (recipe `attempts:`, `pick:`): the pick of one instance's
// attempts (which attempt, why, and every attempt's verify result, changed lines and cost) and the
// landing of the picked one. The two event shapes are spread into run-events.ts's union; the fold
// (applyPickEvent, from run-fold.ts) keeps one AttemptPick per instance, a plain object that
// `show`, the report and a web view read as it is. Resume reads it too: a pick is made once, and
// a pick whose landing is not logged lands again.
import { z } from 'zod';
import { attemptOf, judgeOf } from '../recipe/attempts-spec.js';
import type { InstanceRecord } from './instance-record.js';
import { FailureClassSchema } from './usage-summary.js';

/** How one attempt stood when the pick was made. */
export const PickCandidateSchema = z.object({
  /** The attempt's instance id (`<instance>.attempt-<n>`). */
  key: z.string(),
  attempt: z.number().int().min(1),
  /** The model it ran on. */
  model: z.string().optional(),
  /** passed: it finished and its verify passed (or it has none); failed / cancelled / skipped: it did not. */
  outcome: z.enum(['passed', 'failed', 'cancelled', 'skipped']),
  /** Its last verify command's result (absent: it ran none). */
  verify: z.object({ ok: z.boolean(), command: z.string(), output: z.string().optional() }).optional(),
  /** Lines its diff adds and removes (a passed attempt). */
  lines: z.number().int().nonnegative().optional(),
  /** What it spent, in dollars. */
  cost: z.number(),
  failure: FailureClassSchema.optional(),
  error: z.string().optional(),
  /** Its patch, relative to the run folder. */
  patchFile: z.string().optional(),
});
export type PickCandidate = z.infer<typeof PickCandidateSchema>;

export const PICK_RULE_NAMES = ['verify', 'judge', 'first'] as const;

/** The pick of one instance's attempts. `picked` absent: none passed, and the instance fails. */
export const AttemptPickFields = {
  type: z.literal('attempt_pick'),
  task: z.string(),
  /** The instance the attempts belong to (`<task>` or `<task>.<item key>`). */
  group: z.string(),
  rule: z.enum(PICK_RULE_NAMES),
  picked: z.string().optional(),
  /** Why, in a sentence (the rule applied, or the judge's reasoning). */
  reason: z.string(),
  candidates: z.array(PickCandidateSchema),
  /** pick: judge: the judge's model and what it cost. */
  judge: z.object({ model: z.string().optional(), cost: z.number() }).optional(),
};

/** The picked attempt's work landed where its task's merge: says (or did not: failure, error). */
export const AttemptLandedFields = {
  type: z.literal('attempt_landed'),
  task: z.string(),
  group: z.string(),
  key: z.string(),
  ok: z.boolean(),
  patchFile: z.string().optional(),
  branch: z.string().optional(),
  applied: z.boolean().optional(),
  files: z.array(z.string()).optional(),
  failure: FailureClassSchema.optional(),
  error: z.string().optional(),
};

const PickEvent = z.object(AttemptPickFields);
const LandedEvent = z.object(AttemptLandedFields);
export type AttemptPickEventFields = z.infer<typeof PickEvent>;
export type AttemptLandedEventFields = z.infer<typeof LandedEvent>;

/** One instance's attempts as the log tells them: the pick, then its landing. */
export interface AttemptPick {
  task: string;
  group: string;
  rule: (typeof PICK_RULE_NAMES)[number];
  ts: number;
  picked?: string;
  reason: string;
  candidates: PickCandidate[];
  judge?: { model?: string; cost: number };
  /** Absent until the picked attempt's landing is logged. */
  landed?: { ok: boolean; branch?: string; applied?: boolean; files?: string[]; failure?: string; error?: string };
}

/** Picks by instance id. */
export type AttemptPicks = Map<string, AttemptPick>;

/** Applies an attempt_pick or attempt_landed event (`ts` is the event's). */
export function applyPickEvent(
  picks: AttemptPicks,
  e: (AttemptPickEventFields | AttemptLandedEventFields) & { ts: number },
): void {
  if (e.type === 'attempt_pick') {
    const p: AttemptPick = {
      task: e.task,
      group: e.group,
      rule: e.rule,
      ts: e.ts,
      reason: e.reason,
      candidates: e.candidates,
    };
    if (e.picked !== undefined) p.picked = e.picked;
    if (e.judge) p.judge = e.judge;
    picks.set(e.group, p);
    return;
  }
  const p = picks.get(e.group);
  if (!p) return;
  const landed: NonNullable<AttemptPick['landed']> = { ok: e.ok };
  if (e.branch !== undefined) landed.branch = e.branch;
  if (e.applied) landed.applied = true;
  if (e.files) landed.files = e.files;
  if (e.failure) landed.failure = e.failure;
  if (e.error !== undefined) landed.error = e.error;
  p.landed = landed;
}

/** Whether an instance's attempts are settled: none passed, or the picked one's landing is logged. */
export function pickSettled(p: AttemptPick | undefined): boolean {
  return p !== undefined && (p.picked === undefined || p.landed !== undefined);
}

/** Whether an instance's attempts gave it a result: one was picked and its work landed. */
export function pickSucceeded(p: AttemptPick | undefined): boolean {
  return p?.picked !== undefined && p.landed?.ok === true;
}

/** Where one attempt's work is, and whether it landed or why not. */
export interface AttemptWork {
  key: string;
  attempt: number;
  /** Its work, relative to the run folder; absent: it changed nothing, or nothing was recorded. */
  patchFile?: string;
  /** What it spent in all, in dollars (an attempt `pick: first` stopped spent after the pick too). */
  cost: number;
  landed: boolean;
  /** Why its work did not land (absent for the attempt that landed). */
  notLanded?: string;
}

/** What the run's record says of an attempt beyond its pick: its kept patch and all it spent. */
export interface AttemptFacts {
  patchFile?: string | undefined;
  cost?: number | undefined;
  /** Its instance's status now: an attempt `pick: first` told to stop may have finished first. */
  status?: string | undefined;
}

/**
 * An attempt's facts by its key (and task). The pick is a snapshot: an attempt that ended after it
 * (stopped by `pick: first`) has its patch and its whole cost only on its instance's record.
 */
export type AttemptLookup = (key: string, task: string) => AttemptFacts | undefined;

/** Why attempt `c` of pick `p` did not land, in a few words; undefined when it landed. */
export function whyNotLanded(p: AttemptPick, c: PickCandidate, facts?: AttemptFacts): string | undefined {
  if (c.key === p.picked) {
    if (p.landed === undefined) return 'picked, not landed yet';
    return p.landed.ok ? undefined : 'picked, but its landing failed';
  }
  const first = (text: string | undefined) => (text ? `: ${text.split('\n')[0]}` : '');
  switch (c.outcome) {
    case 'passed':
      return `not picked (pick: ${p.rule})`;
    case 'cancelled':
      if (p.rule !== 'first' || p.picked === undefined) return `cancelled${first(c.error)}`;
      // Told to stop when the pick was made, it may have finished before the stop reached it.
      return facts?.status === 'done'
        ? `finished after ${p.picked} had passed first (pick: first)`
        : `stopped by pick: first once ${p.picked} passed`;
    case 'failed':
      return c.failure === 'verify_failed' || c.verify?.ok === false
        ? 'its verify failed'
        : `it failed (${c.failure ?? 'error'})`;
    default:
      return `it did not run${first(c.error)}`;
  }
}

/** Every attempt of a pick: where its work is and why it did not land. */
export function attemptsWork(p: AttemptPick, lookup: AttemptLookup = () => undefined): AttemptWork[] {
  return p.candidates.map((c) => {
    const facts = lookup(c.key, p.task);
    const patchFile = c.patchFile ?? facts?.patchFile;
    const notLanded = whyNotLanded(p, c, facts);
    return {
      key: c.key,
      attempt: c.attempt,
      ...(patchFile ? { patchFile } : {}),
      cost: Math.max(c.cost, facts?.cost ?? 0),
      landed: notLanded === undefined,
      ...(notLanded ? { notLanded } : {}),
    };
  });
}

/** The work of attempt `key` as its instance's pick tells it (undefined: no pick names it). */
export function workOfAttempt(picks: AttemptPicks, key: string, lookup?: AttemptLookup): AttemptWork | undefined {
  const group = attemptOf(key)?.group;
  const p = group === undefined ? undefined : picks.get(group);
  return p && attemptsWork(p, lookup).find((w) => w.key === key);
}

/**
 * Whether instance `key` is an attempt that lost: another attempt of its instance was picked and
 * landed. Such an attempt is no failure of the run; headers count it as "not picked".
 */
export function notPickedAttempt(picks: AttemptPicks, key: string): boolean {
  const group = attemptOf(key)?.group;
  const p = group === undefined ? undefined : picks.get(group);
  return pickSucceeded(p) && p!.picked !== key;
}

/**
 * Whether instance `inst` is a judge (pick: judge) that failed or was cancelled while its
 * instance's pick landed anyway (the verify rule picked instead): part of that instance's success,
 * no failure of the run; headers leave it out of their counts.
 */
export function excusedJudge(picks: AttemptPicks, inst: { key: string; status: string }): boolean {
  const group = judgeOf(inst.key);
  if (group === undefined || (inst.status !== 'failed' && inst.status !== 'cancelled')) return false;
  return pickSucceeded(picks.get(group));
}

/**
 * What `show` prints of a pick: a headline and one line per attempt, with what it spent, where its
 * work is and why it did not land.
 */
export function describePick(p: AttemptPick, lookup?: AttemptLookup): string[] {
  const head = p.picked
    ? `${p.group}: picked ${p.picked} (pick: ${p.rule}): ${p.reason}`
    : `${p.group}: no attempt picked (pick: ${p.rule}): ${p.reason}`;
  const landing =
    p.landed === undefined
      ? p.picked
        ? ' [not landed yet]'
        : ''
      : p.landed.ok
        ? p.landed.branch
          ? ` [landed on ${p.landed.branch}]`
          : p.landed.applied
            ? ' [applied to the checkout]'
            : p.candidates.some((c) => c.key === p.picked && c.patchFile)
              ? ' [kept as its patch (merge: patch)]'
              : ' [landed]'
        : ` [landing failed: ${p.landed.error ?? p.landed.failure ?? 'unknown'}]`;
  const work = attemptsWork(p, lookup);
  const lines = p.candidates.map((c, k) => {
    // Still running when the pick was made (pick: first), it may have finished before the stop came.
    const finished = c.outcome === 'cancelled' && lookup?.(c.key, p.task)?.status === 'done';
    const verify = c.verify ? `verify ${c.verify.ok ? 'passed' : 'failed'}` : finished ? 'finished' : c.outcome;
    const size = c.lines !== undefined ? `, ${c.lines} lines` : '';
    const model = c.model ? `, ${c.model}` : '';
    const why = c.outcome !== 'passed' && c.error ? ` (${c.error.split('\n')[0]})` : '';
    const mark = c.key === p.picked ? '*' : ' ';
    const w = work[k]!;
    const fate = w.landed ? 'landed' : `not landed: ${w.notLanded}`;
    const where = w.patchFile ? `; its work: ${w.patchFile}` : '';
    return `  ${mark} attempt ${c.attempt}: ${verify}${size}, $${w.cost.toFixed(4)}${model}${why} · ${fate}${where}`;
  });
  return [head + landing, ...lines];
}

/** A landed pick on its attempt's record: where its work went (as instance_done says for any other instance). */
export function landOnInstance(
  inst: Pick<InstanceRecord, 'branch' | 'applied' | 'modifiedFiles'> | undefined,
  e: Pick<AttemptLandedEventFields, 'ok' | 'branch' | 'applied' | 'files'>,
): void {
  if (!inst || !e.ok) return;
  if (e.branch !== undefined) inst.branch = e.branch;
  if (e.applied) inst.applied = true;
  if (e.files?.length) inst.modifiedFiles = [...new Set([...(inst.modifiedFiles ?? []), ...e.files])].sort();
}

/** Whether instance `key` is an attempt whose pick landed it (publish takes only those of a task with attempts:). */
export function landedAttempt(picks: AttemptPicks, key: string): boolean {
  for (const p of picks.values()) if (p.picked === key) return p.landed?.ok === true;
  return false;
}
