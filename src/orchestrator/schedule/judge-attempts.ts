// `pick: judge`: a judge agent reads the attempts of one instance that passed (each one's diff,
// verify result, changed lines and cost) and answers which one lands and why, as JSON. It runs as
// an agent of the run (`<instance>.judge`, its own session, its calls permitted and counted in the
// budgets like any other), with no tools: it changes nothing, it only reads what it is given.
// Its start and end are logged like an instance's, so `show` lists it beside the attempts.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { LoadedRecipe } from '../../recipe/index.js';
import { judgeId } from '../../recipe/attempts-spec.js';
import type { PickCandidate } from '../../run/attempt-pick-record.js';
import { zeroUsage, type RunEventInput } from '../../run/run-events.js';
import type { InstanceState, TaskState } from '../../run/run-state.js';
import type { RunStore } from '../../run/run-store.js';
import type { InstanceRunner } from '../execution/instance-runner.js';
import { doneEvent, failedEvent, outputOf, startEvent } from './attempt-lifecycle.js';
import type { JudgeVerdict } from './attempt-picks.js';

/** Characters of each attempt's diff the judge is shown (the rest is cut, with a note). */
const DIFF_CHARS = 12_000;

const VERDICT_SCHEMA = {
  type: 'object',
  required: ['attempt', 'reasoning'],
  properties: { attempt: { type: 'integer' }, reasoning: { type: 'string' } },
};

export interface JudgeContext {
  recipe: LoadedRecipe;
  store: Pick<RunStore, 'dir' | 'sessionFile'>;
  runner: Pick<InstanceRunner, 'runAgent'>;
  record(e: RunEventInput): void;
}

/** The judge's prompt: the task, then each passing attempt's result and diff. */
export function judgePrompt(taskPrompt: string, candidates: readonly PickCandidate[], runDir: string): string {
  const parts = [
    `You are the judge of ${candidates.length} independent attempts at the same task; each passed its checks. Pick the one that should land: correct and complete first, then the smallest sound change.`,
    '',
    'The task:',
    taskPrompt.trim() || '(no prompt)',
  ];
  for (const c of candidates) {
    let diff = '(no changes)';
    if (c.patchFile) {
      try {
        const text = readFileSync(join(runDir, c.patchFile), 'utf8');
        diff =
          text.length > DIFF_CHARS
            ? `${text.slice(0, DIFF_CHARS)}\n[... ${text.length - DIFF_CHARS} more characters cut ...]`
            : text;
      } catch {
        diff = '(its patch could not be read)';
      }
    }
    const verify = c.verify ? `verify \`${c.verify.command}\` passed` : 'no verify command';
    parts.push(
      '',
      `## Attempt ${c.attempt}${c.model ? ` (model ${c.model})` : ''}: ${verify}, ${c.lines ?? 0} changed lines, $${c.cost.toFixed(4)}`,
      '```diff',
      diff.trimEnd(),
      '```',
    );
  }
  parts.push(
    '',
    `Answer with JSON only: {"attempt": <the number of the attempt to land, one of ${candidates.map((c) => c.attempt).join(', ')}>, "reasoning": "<why, in two or three sentences>"}`,
  );
  return parts.join('\n');
}

/** Runs the judge of `group`'s passing attempts; never throws (a failure is a verdict that is not ok). */
export async function judgeAttempts(
  ctx: JudgeContext,
  t: TaskState,
  group: string,
  candidates: PickCandidate[],
  judgeAgent: string,
  taskPrompt: string,
): Promise<JudgeVerdict> {
  const id = judgeId(group);
  const inst: InstanceState = {
    id,
    task: t.task.id,
    index: 0,
    status: 'running',
    attempt: 1,
    usage: zeroUsage(),
    modifiedFiles: [],
    readFiles: [],
    durationMs: 0,
    sessionFiles: [ctx.store.sessionFile(id)],
    resolved: {
      id,
      taskId: t.task.id,
      index: 0,
      prompt: judgePrompt(taskPrompt, candidates, ctx.store.dir),
      cwd: ctx.store.dir,
      writes: [],
      verify: [],
      env: {},
      agent: judgeAgent,
    },
  };
  // The judge answers in JSON and runs no checks of the task's own.
  const judgeTask: TaskState = {
    ...t,
    instances: [],
    task: { ...t.task, output: 'json', outputSchema: VERDICT_SCHEMA, verify: [], verifyRetries: 0, context: 'fresh' },
  };
  ctx.record(startEvent(inst, false));
  const started = Date.now();
  const r = await ctx.runner.runAgent(judgeTask, inst);
  inst.usage = r.usage;
  inst.durationMs = Date.now() - started;
  const model = ctx.recipe.agents[judgeAgent]?.model;
  if (!r.ok) {
    ctx.record(failedEvent(inst, r.failure, r.error));
    return { ok: false, error: `the judge failed (${r.failure}): ${r.error}`, cost: r.usage.cost };
  }
  // The worker checked the answer against VERDICT_SCHEMA; outputOf parses it as every json task's.
  const out = outputOf(judgeTask.task, r.text);
  const verdict: { attempt?: unknown; reasoning?: unknown } = out && typeof out === 'object' ? out : {};
  inst.output = out;
  ctx.record(doneEvent(inst, r, [], {}));
  if (typeof verdict.attempt !== 'number' || typeof verdict.reasoning !== 'string')
    return { ok: false, error: 'its answer named no attempt', cost: r.usage.cost };
  return {
    ok: true,
    attempt: verdict.attempt,
    reasoning: verdict.reasoning.trim(),
    cost: r.usage.cost,
    ...(model ? { model } : {}),
  };
}
