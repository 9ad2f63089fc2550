// How work lands, as the web page shows it: the merge train per repository (`land: train`: each
// car waiting for its turn (`land_order: task`: behind which tasks), landing, landed, repairing or
// failed, with its repairs, the verify result on the merged tree and the commit recording it) and
// the pick of each instance's best-of-N attempts (`attempts:`: every attempt's verify result,
// changed lines and cost, which one was picked and why, where it landed). Both come as they are
// from the one fold (run/train-record.ts, run/attempt-pick-record.ts), so the page shows what
// `show` prints, live as the events land.
import { DISPLAY_DEFAULTS } from '../display/defaults.js';
import { abbreviate } from '../display/conversation-text.js';
import { type AttemptLookup, type AttemptPick, type AttemptPicks, attemptsWork } from '../run/attempt-pick-record.js';
import type { TrainCar, TrainCarStatus, TrainState } from '../run/train-record.js';

export interface TrainCarView {
  key: string;
  task: string;
  status: TrainCarStatus;
  /** Repairs started (a repairing car is in its last one). */
  repairs: number;
  /** The last verify on a merged tree of this car; absent: none ran. */
  verifyOk?: boolean;
  /** landed: the commit recording the landing. */
  commit?: string;
  /** landed: the files it changed; otherwise the files that conflict. */
  files?: string[];
  error?: string;
  /** waiting: the tasks it waits behind (land_order: task). */
  behind?: string[];
}

export interface TrainView {
  /** The repository, as the run names it (`.` for the recipe's folder). */
  repo: string;
  counts: Record<TrainCarStatus, number>;
  cars: TrainCarView[];
}

export interface PickCandidateView {
  key: string;
  attempt: number;
  model?: string;
  outcome: string;
  verify?: { ok: boolean; command: string };
  lines?: number;
  cost: number;
  /** Why it did not pass (first line). */
  error?: string;
  picked: boolean;
  /** Its work, relative to the run folder (absent: it changed nothing). */
  patchFile?: string;
  /** Why its work did not land (absent: it landed). */
  notLanded?: string;
}

export interface PickView {
  task: string;
  /** The instance the attempts belong to. */
  group: string;
  rule: string;
  /** Absent: none passed, and the instance failed. */
  picked?: string;
  reason: string;
  judge?: { model?: string; cost: number };
  /** Where the picked attempt's work went; absent until its landing is logged. */
  landed?: { ok: boolean; where?: string; error?: string };
  candidates: PickCandidateView[];
}

const firstLine = (s: string): string => abbreviate(s.split('\n')[0] ?? '', DISPLAY_DEFAULTS.errorPreviewChars);

function carView(car: TrainCar): TrainCarView {
  return {
    key: car.key,
    task: car.task,
    status: car.status,
    repairs: car.repairs,
    ...(car.verifyOk !== undefined ? { verifyOk: car.verifyOk } : {}),
    ...(car.commit ? { commit: car.commit } : {}),
    ...(car.files?.length ? { files: car.files } : {}),
    ...(car.error ? { error: firstLine(car.error) } : {}),
    ...(car.status === 'waiting' ? { behind: car.behind ?? [] } : {}),
  };
}

/** The train of each repository, in the order its cars first stepped. Empty without `land: train`. */
export function trainViews(train: TrainState): TrainView[] {
  const byRepo = new Map<string, TrainView>();
  for (const car of Object.values(train.cars)) {
    const repo = car.repo || '.';
    let view = byRepo.get(repo);
    if (!view) {
      view = { repo, counts: { waiting: 0, landing: 0, landed: 0, repairing: 0, failed: 0 }, cars: [] };
      byRepo.set(repo, view);
    }
    view.counts[car.status]++;
    view.cars.push(carView(car));
  }
  return [...byRepo.values()];
}

function landedView(p: AttemptPick): PickView['landed'] {
  const l = p.landed;
  if (!l) return undefined;
  if (!l.ok) return { ok: false, error: firstLine(l.error ?? l.failure ?? 'unknown') };
  const where = l.branch ? `branch ${l.branch}` : l.applied ? 'applied to the checkout' : undefined;
  return { ok: true, ...(where ? { where } : {}) };
}

/** Each instance's pick, in the order the picks were made. */
export function pickViews(picks: AttemptPicks, lookup?: AttemptLookup): PickView[] {
  return [...picks.values()].map((p) => {
    const landed = landedView(p);
    const work = attemptsWork(p, lookup);
    return {
      task: p.task,
      group: p.group,
      rule: p.rule,
      ...(p.picked !== undefined ? { picked: p.picked } : {}),
      reason: abbreviate(p.reason, DISPLAY_DEFAULTS.reportTextChars),
      ...(p.judge ? { judge: p.judge } : {}),
      ...(landed ? { landed } : {}),
      candidates: p.candidates.map((c, k) => ({
        key: c.key,
        attempt: c.attempt,
        ...(c.model ? { model: c.model } : {}),
        outcome: c.outcome,
        ...(c.verify ? { verify: { ok: c.verify.ok, command: c.verify.command } } : {}),
        ...(c.lines !== undefined ? { lines: c.lines } : {}),
        cost: work[k]!.cost,
        ...(c.outcome !== 'passed' && c.error ? { error: firstLine(c.error) } : {}),
        picked: c.key === p.picked,
        ...(work[k]!.patchFile ? { patchFile: work[k]!.patchFile } : {}),
        ...(work[k]!.notLanded ? { notLanded: work[k]!.notLanded } : {}),
      })),
    };
  });
}
