// Best-of-N attempts (`attempts: N`, `pick:`, `models:`, `judge:`): N independent instances of
// one task, each in its own worktree, of which one is picked and lands. This file owns the keys'
// shape (spread into the task schema), the checks that need the whole task, the loaded form, and
// how an instance becomes its N candidates: ids `<instance>.attempt-<n>`, `${{ attempt }}` (1-based)
// in its templates, its agent taken round-robin from `models:`. The pick itself is the
// orchestrator's (orchestrator/schedule/attempt-picks.ts).
import { z } from 'zod';
import type { PendingProblem } from './problems.js';
import type { THINKING_LEVELS } from './schema-parts.js';

/** How the attempt that lands is chosen. */
export const PICK_RULES = ['verify', 'judge', 'first'] as const;
export type PickRule = (typeof PICK_RULES)[number];

const modelEntry = z.union([
  z.string().min(1),
  z.strictObject({
    model: z.string().min(1).describe('Model id'),
    provider: z.string().min(1).optional().describe('Provider: anthropic, scripted, or a name under providers:'),
  }),
]);

/** The task keys of best-of-N attempts (a contract: extend, never rename). */
export const attemptKeys = {
  attempts: z
    .number()
    .int()
    .min(1)
    .max(20)
    .optional()
    .describe(
      'Independent attempts of each instance, run in parallel, each in its own worktree (isolation: worktree is implied); one is picked (pick:) and lands. Prompts may use ${{ attempt }} (1-based)',
    ),
  pick: z
    .enum(PICK_RULES)
    .optional()
    .describe(
      "How the attempt that lands is chosen: verify (the default: of the attempts whose verify passed, fewest changed lines, then lowest cost, then lowest attempt number), judge (a judge agent reads the passing attempts' diffs and verify output and picks one, with its reasons) or first (the first to pass; the others are cancelled)",
    ),
  models: z
    .array(modelEntry)
    .min(1)
    .optional()
    .describe(
      'Models the attempts use, round-robin (attempt 1 the first, attempt 2 the second...): a model id or {model, provider}',
    ),
  judge: z
    .strictObject({
      model: z.string().min(1).optional().describe("The judge's model (default: the task's)"),
      provider: z.string().min(1).optional().describe("The judge's provider (default: the task's)"),
    })
    .optional()
    .describe('The judge of pick: judge'),
};

/** `attempts:` as the coordinator runs it. */
export interface AttemptsSpec {
  count: number;
  pick: PickRule;
  /** The agent of each attempt, round-robin: one per `models:` entry, else the task's own. */
  agents: string[];
  /** The agent that judges (pick: judge): the task's, or a copy with `judge:`'s model. */
  judgeAgent?: string;
}

const SUFFIX = /\.attempt-(\d+)$/;

/** The id of attempt `n` of instance `id`. */
export function attemptId(id: string, n: number): string {
  return `${id}.attempt-${n}`;
}

/** The instance an attempt belongs to and its number, or undefined for an id that is no attempt. */
export function attemptOf(id: string): { group: string; n: number } | undefined {
  const m = SUFFIX.exec(id);
  return m ? { group: id.slice(0, m.index), n: Number(m[1]) } : undefined;
}

/** The id the judge of instance `id`'s attempts runs under (pick: judge). */
export function judgeId(id: string): string {
  return `${id}.judge`;
}

/** The instance whose attempts a judge id judges, or undefined for an id that is no judge. */
export function judgeOf(id: string): string | undefined {
  return id.endsWith('.judge') ? id.slice(0, -'.judge'.length) : undefined;
}

/** The agent attempt `n` (1-based) runs. */
export function attemptAgent(spec: AttemptsSpec, n: number): string {
  return spec.agents[(n - 1) % spec.agents.length]!;
}

type Obj = Record<string, unknown>;
type Path = (string | number)[];

/** Problems of a task's attempt keys that its schema cannot see (they need the other keys). */
export function checkAttempts(r: Obj, base: Path, who: string, problem: (p: PendingProblem) => void): void {
  const count = typeof r.attempts === 'number' ? r.attempts : undefined;
  for (const key of ['pick', 'models', 'judge'] as const) {
    if (r[key] !== undefined && (count === undefined || count < 2))
      problem({
        code: 'conflict',
        path: [...base, key],
        key: true,
        message: `${who} sets ${key} but runs one attempt`,
        hint: 'add attempts: 2 (or more), or remove it',
      });
  }
  if (count === undefined || count < 2) return;
  if (r.run !== undefined)
    problem({
      code: 'conflict',
      path: [...base, 'attempts'],
      key: true,
      message: `${who} is a run: shell step; attempts need an agent (a shell step gives the same result each time)`,
      hint: 'remove attempts, or make the task an agent task (prompt:)',
    });
  if (r.isolation === 'none')
    problem({
      code: 'conflict',
      path: [...base, 'isolation'],
      key: true,
      message: `${who} has attempts but isolation: none; each attempt needs a worktree of its own`,
      hint: 'remove isolation (attempts run in worktrees)',
    });
  if (r.models !== undefined && r.pair !== undefined)
    problem({
      code: 'conflict',
      path: [...base, 'models'],
      key: true,
      message: `${who} is a pair; models: applies to agent tasks`,
      hint: 'remove models, or give the pair agents their own models',
    });
  if (r.judge !== undefined && r.pick !== 'judge')
    problem({
      code: 'conflict',
      path: [...base, 'judge'],
      key: true,
      message: `${who} sets judge but pick is ${typeof r.pick === 'string' ? r.pick : 'verify (the default)'}`,
      hint: 'set pick: judge, or remove judge',
    });
}

/** A model (and provider, thinking) a copy of an agent runs with. */
export interface ModelOverride {
  model?: string | undefined;
  provider?: string | undefined;
  thinking?: (typeof THINKING_LEVELS)[number] | undefined;
  /** The copy's tools instead of the agent's (the judge: none, it only reads what it is given). */
  tools?: string[];
}

type AttemptKeysOf = { attempts?: number | undefined; pick?: PickRule | undefined } & {
  models?: z.output<typeof attemptKeys.models>;
  judge?: z.output<typeof attemptKeys.judge>;
};

/**
 * The loaded form of a task's attempt keys. `copyAgent(base, name, override)` makes a copy of agent
 * `base` with another model (normalize.ts, as for a task's own `model:`) and returns its name.
 */
export function attemptsSpecOf(
  t: AttemptKeysOf,
  task: { id: string; agent?: string; pair?: { planner: string } },
  copyAgent: (base: string, name: string, over: ModelOverride) => string,
): AttemptsSpec {
  const base = task.agent;
  const agents =
    base === undefined || t.models === undefined
      ? [base ?? '']
      : t.models.map((m, k) =>
          copyAgent(base, `${base}@${task.id}#${k + 1}`, typeof m === 'string' ? { model: m } : m),
        );
  const spec: AttemptsSpec = { count: t.attempts ?? 1, pick: t.pick ?? 'verify', agents };
  // A pair's judge is its planner (the agent that reviews).
  const judge = base ?? task.pair?.planner;
  // The judge reads the diffs and verify output it is given and changes nothing: it has no tools.
  if (t.pick === 'judge' && judge !== undefined)
    spec.judgeAgent = copyAgent(judge, `${judge}@${task.id}#judge`, { ...t.judge, tools: [] });
  return spec;
}
