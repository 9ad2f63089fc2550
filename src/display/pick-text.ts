// Best-of-N picks (recipe `attempts:`) in the live terminal view: one summary line per task with
// attempts, like the merge train's line (train-text.ts), read from the fold's picks
// (run/attempt-pick-record.ts). With a single instance the line names the picked attempt and why.
import type { AttemptPick, AttemptPicks } from '../run/attempt-pick-record.js';

/** `attempt picks of fix: 1 landed (fix.attempt-2: fewest changed lines ...)`, one per task. */
export function pickSummaries(picks: AttemptPicks): string[] {
  const byTask = new Map<string, AttemptPick[]>();
  for (const p of picks.values()) byTask.set(p.task, [...(byTask.get(p.task) ?? []), p]);
  return [...byTask].map(([task, ps]) => {
    const count = (f: (p: AttemptPick) => boolean): number => ps.filter(f).length;
    const parts = [`${count((p) => p.landed?.ok === true)} landed`];
    const landing = count((p) => p.picked !== undefined && p.landed === undefined);
    const refused = count((p) => p.landed?.ok === false);
    const none = count((p) => p.picked === undefined);
    if (landing) parts.push(`${landing} landing`);
    if (refused) parts.push(`${refused} not landed`);
    if (none) parts.push(`${none} none passed`);
    const only = ps.length === 1 && ps[0]!.picked ? ` (${ps[0]!.picked}: ${ps[0]!.reason})` : '';
    return `attempt picks of ${task}: ${parts.join(', ')}${only}`;
  });
}
