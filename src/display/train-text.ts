// The merge train (`land: train`) as text, from the fold's TrainState (run/train-record.ts): a
// summary per repository (landed / repairing / failed, and waiting for its turn) and a line per car with its repairs and the
// verify result of its last landing step; `show`, the report and the live view print it, and the
// plain log words each step as it happens.
import { type TrainCar, type TrainState, type TrainStepRecord, turnWaitText } from '../run/train-record.js';

/** A car's line: `five  landed after 1 repair · verify passed · commit 1a2b3c4d5e6f`. */
export function trainCarLine(car: TrainCar): string {
  if (car.status === 'waiting') return `${car.key}  ${turnWaitText(car.behind)}`;
  const repairs = car.repairs > 0 ? ` after ${car.repairs} repair${car.repairs === 1 ? '' : 's'}` : '';
  const parts = [`${car.key}  ${car.status}${car.status === 'repairing' ? ` (repair ${car.repairs})` : repairs}`];
  if (car.verifyOk !== undefined) parts.push(`verify ${car.verifyOk ? 'passed' : 'failed'}`);
  if (car.commit) parts.push(`commit ${car.commit.slice(0, 12)}`);
  if (car.status !== 'landed' && car.files?.length) parts.push(`conflicts in ${car.files.join(', ')}`);
  if (car.status === 'failed' && car.error) parts.push(car.error.split('\n')[0]!);
  return parts.join(' · ');
}

/** `merge train of repo: 5 landed, 1 repairing, 0 failed`, one per repository. */
export function trainSummaries(train: TrainState): string[] {
  const byRepo = new Map<string, TrainCar[]>();
  for (const car of Object.values(train.cars)) byRepo.set(car.repo, [...(byRepo.get(car.repo) ?? []), car]);
  return [...byRepo].map(([repo, cars]) => {
    const n = (s: TrainCar['status']) => cars.filter((c) => c.status === s).length;
    const landing = n('landing');
    const waiting = n('waiting');
    return `merge train of ${repo || '.'}: ${n('landed')} landed, ${n('repairing')} repairing, ${n('failed')} failed${landing ? `, ${landing} landing` : ''}${waiting ? `, ${waiting} waiting for its turn` : ''}`;
  });
}

/** The train's block in `show` and the report: its summaries, then a line per car. Empty without a train. */
export function trainBlock(train: TrainState): string[] {
  const cars = Object.values(train.cars);
  if (cars.length === 0) return [];
  const out: string[] = [];
  for (const summary of trainSummaries(train)) {
    out.push(summary);
    const repo = summary.slice('merge train of '.length, summary.indexOf(':'));
    for (const car of cars) if ((car.repo || '.') === repo) out.push(`  ${trainCarLine(car)}`);
  }
  return out;
}

/** One step as the plain log says it. */
export function trainStepText(
  step: Pick<TrainStepRecord, 'key' | 'phase' | 'files' | 'verify' | 'repair' | 'error' | 'behind'>,
): string {
  const verify = step.verify?.length
    ? ` (verify ${step.verify.every((v) => v.ok) ? 'passed' : `failed: \`${step.verify.find((v) => !v.ok)?.command}\``})`
    : '';
  switch (step.phase) {
    case 'waiting':
      return `${step.key}: ${turnWaitText(step.behind)}`;
    case 'landing':
      return `${step.key}: landing in the checkout`;
    case 'landed':
      return `${step.key}: landed${verify}`;
    case 'conflict':
      return `${step.key}: conflicts with what landed before it${step.files?.length ? ` in ${step.files.join(', ')}` : ''}`;
    case 'verify_failed':
      return `${step.key}: not landed, verify fails on the merged tree${verify}`;
    case 'repair':
      return `${step.key}: repair ${step.repair ?? ''} starts on the new tip`;
    case 'failed':
      return `${step.key}: failed to land${step.error ? `: ${step.error.split('\n')[0]}` : ''}`;
  }
}
