// Best-of-N attempts as the DAG walk sees them: a task with `attempts:` runs each of its instances
// as a group of attempts (`<instance>.attempt-<n>`), and a group, not an attempt, is what succeeds
// or fails. These pure functions say which group an attempt belongs to, whether a group has
// settled (picked and landed, or none passed), how many groups of a task failed, which failed or
// cancelled attempts do not count against the run (their group's picked attempt landed), and the
// stated rule of `pick: verify`.
import { attemptOf, judgeOf } from '../../recipe/attempts-spec.js';
import { type AttemptPick, type PickCandidate, pickSettled, pickSucceeded } from '../../run/attempt-pick-record.js';
import { isFailedOrCancelled, isTerminal, type InstanceState, type TaskState } from '../../run/run-state.js';

/** A task's attempts by the instance they are attempts of, in attempt order. */
export function attemptGroups(t: TaskState): Map<string, InstanceState[]> {
  const groups = new Map<string, InstanceState[]>();
  if (!t.task.attempts) return groups;
  for (const inst of t.instances) {
    const a = attemptOf(inst.id);
    if (!a) continue;
    const list = groups.get(a.group) ?? [];
    list.push(inst);
    groups.set(a.group, list);
  }
  return groups;
}

/** The pick of `group` in task `t`, if one is logged. */
export function pickOf(t: TaskState, group: string): AttemptPick | undefined {
  return t.picks?.get(group);
}

/** Every group of a task with attempts has settled (always true for a task without). */
export function groupsSettled(t: TaskState): boolean {
  for (const group of attemptGroups(t).keys()) if (!pickSettled(pickOf(t, group))) return false;
  return true;
}

/** Failures that count against a task (max_failed, on_failure): its failed groups, or its failed instances. */
export function taskFailures(t: TaskState): number {
  if (!t.task.attempts) return t.instances.filter((i) => isFailedOrCancelled(i.status)).length;
  let failed = 0;
  for (const [group, members] of attemptGroups(t)) {
    const p = pickOf(t, group);
    if (pickSettled(p) && !pickSucceeded(p) && members.every((m) => isTerminal(m.status))) failed++;
  }
  return failed;
}

/**
 * Whether an attempt's failure or cancel is part of its group's success (another attempt landed);
 * so is a judge's failure (the verify rule picked instead).
 */
export function excusedAttempt(t: TaskState | undefined, inst: InstanceState): boolean {
  if (!t?.task.attempts) return false;
  const group = attemptOf(inst.id)?.group ?? judgeOf(inst.id);
  return group !== undefined && pickSucceeded(pickOf(t, group));
}

/**
 * `pick: verify`'s rule over the attempts that passed: fewest changed lines, then lowest cost,
 * then lowest attempt number. Undefined when none passed.
 */
export function pickByVerify(candidates: readonly PickCandidate[]): PickCandidate | undefined {
  const passed = candidates.filter((c) => c.outcome === 'passed');
  passed.sort((a, b) => (a.lines ?? 0) - (b.lines ?? 0) || a.cost - b.cost || a.attempt - b.attempt);
  return passed[0];
}

/** Why the rule chose `picked` over the other passing attempts, in a sentence. */
export function verifyReason(picked: PickCandidate, candidates: readonly PickCandidate[]): string {
  const passed = candidates.filter((c) => c.outcome === 'passed');
  const verified = picked.verify ? 'its verify passed' : 'it finished';
  if (passed.length === 1)
    return `attempt ${picked.attempt} is the only one of ${candidates.length} attempts where ${verified}`;
  const others = passed.filter((c) => c !== picked);
  const tie = others.every((c) => (c.lines ?? 0) === (picked.lines ?? 0));
  const costTie = tie && others.every((c) => c.cost === picked.cost);
  const by = !tie
    ? `fewest changed lines (${picked.lines ?? 0})`
    : !costTie
      ? `the same changed lines (${picked.lines ?? 0}), lowest cost ($${picked.cost.toFixed(4)})`
      : 'the same changed lines and cost, lowest attempt number';
  return `${passed.length} of ${candidates.length} attempts passed; attempt ${picked.attempt} has ${by}`;
}

/** Lines a unified diff adds and removes (its file headers not counted). */
export function changedLines(patch: string): number {
  let n = 0;
  for (const line of patch.split('\n')) {
    if (line.startsWith('+++ ') || line.startsWith('--- ')) continue;
    if (line.startsWith('+') || line.startsWith('-')) n++;
  }
  return n;
}
