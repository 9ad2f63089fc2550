// The merge train in the run's record (`land: train`): each instance whose work lands through the
// train is a car, and each step of it is a `train_step` event: `waiting` (`land_order: task`: its
// agent has finished and its work waits for its turn behind earlier tasks), `landing` (its work
// merged onto the repository's tip, about to be written to the checkout), `landed` (it is there,
// with the verify result on the merged tree), `conflict` / `verify_failed` (it did not land),
// `repair` (its agent runs again on the new tip) and `failed` (no repairs left, or cancelled while
// it waited). The fold keeps the train as a plain object (no Maps), so the views and a web page
// can show it as it is, and a resume reads from it what already landed (never landed twice),
// which repair an instance is in, and which finished work waits for its turn (its agent's answer
// kept, so it lands without running again).
import { z } from 'zod';
import { FailureClassSchema } from './usage-summary.js';

export const TRAIN_PHASES = ['waiting', 'landing', 'landed', 'conflict', 'verify_failed', 'repair', 'failed'] as const;
export type TrainPhase = (typeof TRAIN_PHASES)[number];

/** One verify command run on a merged tree, with the tail of its output. */
export const TrainVerifySchema = z.object({ command: z.string(), ok: z.boolean(), output: z.string() });
export type TrainVerify = z.infer<typeof TrainVerifySchema>;

/** The fields of a `train_step` event (run-events.ts adds the instance it belongs to). */
export const TrainStepFields = {
  type: z.literal('train_step'),
  phase: z.enum(TRAIN_PHASES),
  /** The repository, as the run names paths (relative to the recipe's folder). */
  repo: z.string(),
  /** The checkout's tree the work was merged onto. */
  tipTree: z.string().optional(),
  /** The merged tree (landing, landed, verify_failed). */
  tree: z.string().optional(),
  /** landed: the commit recording the landing (the merged tree on top of the tip). */
  commit: z.string().optional(),
  /** landed: the files it changed; conflict: the files that conflict. */
  files: z.array(z.string()).optional(),
  verify: z.array(TrainVerifySchema).optional(),
  /** repair: which repair of the instance starts (1-based); its new base and worktree; the prompt its agent gets. */
  repair: z.number().int().optional(),
  baseCommit: z.string().optional(),
  baseTree: z.string().optional(),
  worktree: z.string().optional(),
  prompt: z.string().optional(),
  /** waiting: the earlier tasks it waits behind (land_order: task) and their unfinished instances then. */
  behind: z.array(z.string()).optional(),
  behindKeys: z.array(z.string()).optional(),
  /** waiting: its agent's answer and handoff summary, so a resume lands the kept work without running it again. */
  text: z.string().optional(),
  summary: z.string().optional(),
  failure: FailureClassSchema.optional(),
  error: z.string().optional(),
};

export type TrainCarStatus = 'waiting' | 'landing' | 'landed' | 'repairing' | 'failed';

/** One step as the views list it. */
export interface TrainStepRecord {
  ts: number;
  key: string;
  phase: TrainPhase;
  files?: string[];
  verify?: { command: string; ok: boolean }[];
  commit?: string;
  error?: string;
  repair?: number;
  /** waiting: the tasks it waits behind. */
  behind?: string[];
}

/** One instance in the train. */
export interface TrainCar {
  key: string;
  task: string;
  repo: string;
  status: TrainCarStatus;
  /** Repairs started. */
  repairs: number;
  /** landing: the tip and merged tree (a resume checks which of them the checkout holds). */
  tipTree?: string;
  tree?: string;
  /** landed: its commit. */
  commit?: string;
  files?: string[];
  /** The last verify on a merged tree of this car: passed or not. */
  verifyOk?: boolean;
  error?: string;
  /** repairing: where the repair works and what its agent is asked. */
  repair?: { baseCommit?: string; baseTree: string; worktree?: string; prompt?: string };
  /** waiting: the tasks it waits behind (land_order: task). */
  behind?: string[];
  /** waiting: its finished agent's answer, landed by a resume without running the agent again. */
  kept?: { text: string; summary?: string };
}

export interface TrainState {
  /** By instance key. */
  cars: Record<string, TrainCar>;
  /** Every step in log order. */
  steps: TrainStepRecord[];
}

export function createTrainState(): TrainState {
  return { cars: {}, steps: [] };
}

export interface TrainStepEvent {
  ts: number;
  task: string;
  key: string;
  phase: TrainPhase;
  repo: string;
  tipTree?: string;
  tree?: string;
  commit?: string;
  files?: string[];
  verify?: TrainVerify[];
  repair?: number;
  baseCommit?: string;
  baseTree?: string;
  worktree?: string;
  prompt?: string;
  behind?: string[];
  behindKeys?: string[];
  text?: string;
  summary?: string;
  error?: string;
}

const STATUS_OF: Record<TrainPhase, TrainCarStatus> = {
  waiting: 'waiting',
  landing: 'landing',
  landed: 'landed',
  conflict: 'landing',
  verify_failed: 'landing',
  repair: 'repairing',
  failed: 'failed',
};

/** Applies one `train_step` to the train. */
export function applyTrainEvent(state: TrainState, e: TrainStepEvent): void {
  state.cars[e.key] ??= { key: e.key, task: e.task, repo: e.repo, status: 'landing', repairs: 0 };
  const car = state.cars[e.key]!;
  car.status = STATUS_OF[e.phase];
  car.repo = e.repo;
  if (e.phase === 'waiting') {
    car.behind = e.behind ?? [];
    if (e.text !== undefined) car.kept = { text: e.text, ...(e.summary ? { summary: e.summary } : {}) };
  } else {
    // The wait is over (its turn came, or it ended): what it kept for a resume is not needed any more.
    delete car.behind;
    delete car.kept;
  }
  if (e.phase === 'landing') {
    car.tipTree = e.tipTree;
    car.tree = e.tree;
  }
  if (e.phase === 'landed') {
    car.commit = e.commit;
    car.tree = e.tree;
    car.files = e.files;
    delete car.error;
    delete car.repair;
  }
  if (e.phase === 'conflict') car.files = e.files;
  // A task without verify: lands with an empty list: that is no verify, not a passed one.
  if (e.verify?.length) car.verifyOk = e.verify.every((v) => v.ok);
  if (e.error !== undefined) car.error = e.error;
  if (e.phase === 'repair' && e.baseTree) {
    car.repairs = Math.max(car.repairs, e.repair ?? car.repairs + 1);
    car.repair = {
      baseTree: e.baseTree,
      ...(e.baseCommit ? { baseCommit: e.baseCommit } : {}),
      ...(e.worktree ? { worktree: e.worktree } : {}),
      ...(e.prompt !== undefined ? { prompt: e.prompt } : {}),
    };
  }
  const step: TrainStepRecord = { ts: e.ts, key: e.key, phase: e.phase };
  if (e.files?.length) step.files = e.files;
  if (e.verify?.length) step.verify = e.verify.map((v) => ({ command: v.command, ok: v.ok }));
  if (e.commit) step.commit = e.commit;
  if (e.error !== undefined) step.error = e.error;
  if (e.repair !== undefined) step.repair = e.repair;
  if (e.phase === 'waiting') step.behind = e.behind ?? [];
  state.steps.push(step);
}

/** What finished work waiting for its turn (land_order: task) is doing, as every view says it. */
export function turnWaitText(behind: readonly string[] | undefined): string {
  return `waiting for its turn behind ${behind?.length ? behind.join(', ') : 'earlier tasks'}`;
}

/** The train's cars in the order they first stepped, for the views. */
export function trainCars(state: TrainState): TrainCar[] {
  return Object.values(state.cars);
}
