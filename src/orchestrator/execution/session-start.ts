// How one session of a run begins: run_start for a new run, or, on resume, run_resume and the
// coordinator's instances taken from the fold of the run's log (run/run-fold.ts). On resume a
// done instance keeps its result and is never run again (so never paid twice); a cancelled one
// stays cancelled unless `resume --retry` names it; every other one runs again, continuing from
// its session. Each instance's spend (every call_usage, its pair members' included) is charged to
// the budget again, so the budget picks up where it was.
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import type { LoadedRecipe, RecipePlan } from '../../recipe/index.js';
import {
  instanceUsage,
  recordOf,
  resumableInstances,
  type InstanceState as FoldedInstance,
  type RunState,
} from '../../run/run-fold.js';
import type { RunEventInput } from '../../run/run-events.js';
import { storedPath } from '../../run/run-paths.js';
import type { InputsUsed } from '../../run/trusted-recipe.js';
import type { InstanceState } from '../../run/run-state.js';
import { parseSummary } from '../../session/parse-summary.js';

type EventOf<T extends RunEventInput['type']> = Extract<RunEventInput, { type: T }>;

/** The first 16 hex digits of the recipe file's sha256 (a resume notes a changed recipe). */
export function recipeHash(file: string): string {
  try {
    return createHash('sha256')
      .update(readFileSync(resolve(file)))
      .digest('hex')
      .slice(0, 16);
  } catch {
    return 'unknown';
  }
}

/** The run budget for run_start / run_resume (live meters read it), when the recipe has one. */
function budgetField(recipe: LoadedRecipe): { budget?: { usd?: number; tokens?: number } } {
  const b = recipe.budget;
  if (b.usd === undefined && b.tokens === undefined) return {};
  return {
    budget: { ...(b.usd !== undefined ? { usd: b.usd } : {}), ...(b.tokens !== undefined ? { tokens: b.tokens } : {}) },
  };
}

const overridesField = (overrides: Record<string, unknown> | undefined) =>
  overrides && Object.keys(overrides).length ? { overrides } : {};

export function runStartEvent(
  recipe: LoadedRecipe,
  plan: RecipePlan,
  overrides?: Record<string, unknown>,
): EventOf<'run_start'> {
  return {
    type: 'run_start',
    recipe: recipe.file,
    name: recipe.name,
    recipeHash: recipeHash(recipe.file),
    inputs: recipe.inputValues,
    plan: plan.tasks.map((t) => ({
      task: t.id,
      keys: t.instances.map((i) => i.id),
      needs: t.needs,
      dynamic: t.fanOut === 'dynamic',
    })),
    ...overridesField(overrides),
    ...budgetField(recipe),
  };
}

export function runResumeEvent(
  recipe: LoadedRecipe,
  fold: RunState,
  overrides?: Record<string, unknown>,
  inputs?: InputsUsed,
): EventOf<'run_resume'> {
  const changed = fold.start !== undefined && fold.start.recipeHash !== recipeHash(recipe.file);
  return {
    type: 'run_resume',
    ...(fold.lastEndStatus ? { previousStatus: fold.lastEndStatus } : {}),
    ...(changed ? { recipeChanged: true } : {}),
    ...(inputs ? { inputs: inputsField(recipe, inputs) } : {}),
    ...budgetField(recipe),
    ...overridesField(overrides),
  };
}

/** Where the session's inputs came from, each changed file named relative to the recipe's folder. */
function inputsField(recipe: LoadedRecipe, inputs: InputsUsed): NonNullable<EventOf<'run_resume'>['inputs']> {
  return {
    source: inputs.source,
    ...(inputs.reloadedBy ? { reloadedBy: inputs.reloadedBy } : {}),
    changed: inputs.changed.map((c) => ({ ...c, file: storedPath(recipe.dir, c.file) })),
  };
}

/** The coordinator's state of an instance the log knows. */
export function restoredInstance(r: FoldedInstance): InstanceState {
  const inst: InstanceState = {
    ...recordOf(r),
    id: r.key,
    task: r.task,
    index: 0,
    // Turns as every view counts them (run/turn-count.ts); spend counts each call as one.
    usage: { ...r.spend, turns: instanceUsage(r).turns ?? 0 },
    readFiles: [],
    sessionFiles: [],
  };
  inst.modifiedFiles ??= [];
  inst.durationMs ??= 0;
  if (inst.status === 'done') {
    inst.restored = true;
    if (inst.summary) {
      inst.handoff = parseSummary(inst.summary);
      inst.readFiles = inst.handoff.readFiles;
    }
    return inst;
  }
  delete inst.skipReason;
  // A cancel is the user's decision: the resume keeps it (a retry through the control channel runs it again).
  if (inst.status === 'cancelled') return inst;
  inst.status = 'pending';
  delete inst.failure;
  return inst;
}

/** Every instance the log has an event of (one only named in the plan starts afresh anyway). */
export function restoredInstances(fold: RunState, keepFailed?: (task: string) => boolean): InstanceState[] {
  return resumableInstances(fold)
    .filter((r) => r.attempts.length > 0 || r.spend.totalTokens > 0 || r.status !== 'pending')
    .map((r) => {
      const inst = restoredInstance(r);
      // A failed attempt of a task with attempts: is finished: its instance's pick reads it as it ended.
      if (r.status === 'failed' && keepFailed?.(r.task)) Object.assign(inst, recordOf(r));
      return inst;
    });
}
