// Pre-flight token and cost ranges for a dry run. No model is called: the figures come from
// prompt sizes, model prices and the per-turn heuristic in RECIPE_DEFAULTS.estimate.
import { DEFAULT_RUN_LIMITS } from '../runtime/run-limits.js';
import { estimateTextTokens as estimateTokens } from '../ai/token-estimate.js';
import { RECIPE_DEFAULTS } from './defaults.js';
import { referencePath, referencedTasks } from './expressions.js';
import type { LoadedAgent, LoadedRecipe, LoadedTask } from './loaded-recipe.js';
import { type InstanceSeed, type RecipePlan, resolveInstance, staticScope } from './plan.js';
import { attemptAgent } from './attempts-spec.js';
import { FALLBACK_PRICE, lookupModelPrice, type ModelPrice } from './prices.js';

export interface Range {
  low: number;
  high: number;
}

export interface TaskEstimate {
  taskId: string;
  kind: LoadedTask['kind'];
  /** Model(s) the task calls, e.g. "claude-sonnet-4-5"; empty for shell steps. */
  models: string[];
  instances: Range;
  /** False for a fan-out over an output not known before the run (the range is a guess). */
  instancesKnown: boolean;
  inputTokens: Range;
  outputTokens: Range;
  usd: Range;
  notes: string[];
}

export interface RecipeEstimate {
  tasks: TaskEstimate[];
  total: { inputTokens: Range; outputTokens: Range; usd: Range };
  /** The heuristic, in words, so the output explains its own numbers. */
  heuristic: string[];
  warnings: string[];
}

const E = RECIPE_DEFAULTS.estimate;

const zero = (): Range => ({ low: 0, high: 0 });
const add = (a: Range, b: Range): Range => ({ low: a.low + b.low, high: a.high + b.high });
const scale = (a: Range, k: Range): Range => ({ low: a.low * k.low, high: a.high * k.high });

/**
 * The handoff summary a real model writes when an instance ends: one call over the final context
 * (the start plus n-1 turns of growth) and the summarizer's instructions.
 */
function handoffCall(startContext: number, extraHighTurns: number): { input: Range; output: Range } {
  const final = (n: number, g: number) => startContext + g * (n - 1) + E.summarizerPromptTokens;
  return {
    input: {
      low: final(E.turns.low, E.outputTokensPerTurn.low + E.toolResultTokensPerTurn.low),
      high: final(E.turns.high + extraHighTurns, E.outputTokensPerTurn.high + E.toolResultTokensPerTurn.high),
    },
    output: { low: E.handoffSummaryTokens, high: E.handoffSummaryTokens },
  };
}

/**
 * The lower cost of a run of n turns from context c growing by g per turn, with prompt caching as
 * the runtime uses it (a breakpoint on the last message): the first turn writes its context to the
 * cache, each later turn reads the previous context from it and writes only what is new; the
 * handoff summary then reads the final context and sends its instructions uncached. Output is not
 * cached. In dollars, per million-token prices.
 */
function cachedRunUsd(c: number, n: number, o: number, g: number, handoff: boolean, p: ModelPrice): number {
  const read = (n - 1) * c + (g * (n - 1) * (n - 2)) / 2;
  const written = c + (n - 1) * g;
  const summary = handoff
    ? (c + g * (n - 1)) * p.cacheRead + E.summarizerPromptTokens * p.input + E.handoffSummaryTokens * p.output
    : 0;
  return (read * p.cacheRead + written * p.cacheWrite + n * o * p.output + summary) / 1e6;
}

/** Tokens over n turns starting from context c, growing by g per turn: n*c + g*n(n-1)/2. */
function agentRun(startContext: number, extraHighTurns: number): { input: Range; output: Range } {
  type Turns = { n: number; o: number; g: number };
  const low: Turns = {
    n: E.turns.low,
    o: E.outputTokensPerTurn.low,
    g: E.outputTokensPerTurn.low + E.toolResultTokensPerTurn.low,
  };
  const high: Turns = {
    n: E.turns.high + extraHighTurns,
    o: E.outputTokensPerTurn.high,
    g: E.outputTokensPerTurn.high + E.toolResultTokensPerTurn.high,
  };
  const input = (t: Turns) => t.n * startContext + (t.g * t.n * (t.n - 1)) / 2;
  return { input: { low: input(low), high: input(high) }, output: { low: low.n * low.o, high: high.n * high.o } };
}

function systemTokens(agent: LoadedAgent | undefined): number {
  if (!agent) return E.runtimeSystemTokens;
  return E.runtimeSystemTokens + estimateTokens(agent.system ?? '') + agent.tools.length * E.toolSchemaTokens;
}

/** Prompt size of one instance: rendered when possible, else the template plus a guess per unknown output. */
function promptTokens(
  recipe: LoadedRecipe,
  task: LoadedTask,
  seed: InstanceSeed | undefined,
  env: Readonly<Record<string, string | undefined>>,
): number {
  const template = task.prompt ?? '';
  if (seed) {
    const r = resolveInstance(task, seed, staticScope(recipe, env));
    if (r.ok) return estimateTokens(r.instance.prompt ?? '');
  }
  return estimateTokens(template) + referencedTasks(template).length * E.unknownOutputTokens;
}

/** Instance count of a dynamic fan-out, from the source task's output_schema (minItems/maxItems). */
function dynamicInstances(recipe: LoadedRecipe, task: LoadedTask): { range: Range; note: string } {
  const fallback = {
    range: { low: E.dynamicFanOut.low, high: E.dynamicFanOut.high },
    note: `instance count unknown until the run; assumed ${E.dynamicFanOut.low}-${E.dynamicFanOut.high}`,
  };
  if (task.forEach?.kind !== 'expression') return fallback;
  const ref = referencePath(task.forEach.expression);
  if (ref?.root !== 'tasks' || typeof ref.segments[0] !== 'string' || ref.segments[1] !== 'output') return fallback;
  const source = recipe.tasks.find((t) => t.id === ref.segments[0]);
  let schema: unknown = source?.outputSchema;
  for (const seg of ref.segments.slice(2)) {
    const s = schema as { properties?: Record<string, unknown>; items?: unknown } | undefined;
    schema = typeof seg === 'number' ? s?.items : typeof seg === 'string' ? s?.properties?.[seg] : undefined;
  }
  const s = schema as { maxItems?: unknown; minItems?: unknown } | undefined;
  if (typeof s?.maxItems !== 'number') return fallback;
  const low = typeof s.minItems === 'number' ? s.minItems : Math.min(E.dynamicFanOut.low, s.maxItems);
  return {
    range: { low, high: s.maxItems },
    note: `instance count from ${source!.id}'s output_schema: ${low}-${s.maxItems}`,
  };
}

/** The upper cost: every input token at the full input price. */
function uncachedUsd(tokens: { input: Range; output: Range }, p: ModelPrice): number {
  return (tokens.input.high * p.input + tokens.output.high * p.output) / 1e6;
}

/**
 * The judge of `pick: judge`: one call per instance, reading the task and every attempt's diff
 * (each counted as large as all an agent writes in a run) and writing its reasons. Nothing at the
 * low end: with fewer than two passing attempts no judge is asked.
 */
function judgeCall(
  recipe: LoadedRecipe,
  task: LoadedTask,
  prompt: number,
  extraTurns: number,
): { input: Range; output: Range; usd: Range; model: string } {
  const agent = recipe.agents[task.attempts?.judgeAgent ?? task.agent ?? ''];
  const model = agent?.model ?? recipe.model;
  const provider = agent?.provider ?? recipe.provider;
  const diffs = (task.attempts?.count ?? 1) * agentRun(0, extraTurns).output.high;
  const input = { low: 0, high: systemTokens(agent) + prompt + diffs };
  const output = { low: 0, high: E.handoffSummaryTokens };
  const price = lookupModelPrice(model, provider, recipe.models, recipe.providers);
  return { input, output, usd: { low: 0, high: uncachedUsd({ input, output }, price) }, model };
}

function estimateTask(
  recipe: LoadedRecipe,
  task: LoadedTask,
  seeds: InstanceSeed[],
  dynamic: boolean,
  env: Readonly<Record<string, string | undefined>>,
): TaskEstimate {
  const est: TaskEstimate = {
    taskId: task.id,
    kind: task.kind,
    models: [],
    instances: { low: seeds.length, high: seeds.length },
    instancesKnown: !dynamic,
    inputTokens: zero(),
    outputTokens: zero(),
    usd: zero(),
    notes: [],
  };
  // What is estimated one by one: each seed of a known fan-out (attempts: included, one seed per
  // attempt), or for a dynamic fan-out one template instance as its attempts, multiplied below.
  const attempts = task.attempts;
  let units: { seed?: InstanceSeed; n: number }[] = seeds.map((seed) => ({ seed, n: seed.attempt?.n ?? 1 }));
  let items: Range = { low: 1, high: 1 };
  if (dynamic) {
    const d = dynamicInstances(recipe, task);
    items = d.range;
    est.notes.push(d.note);
    const count = attempts?.count ?? 1;
    units = Array.from({ length: count }, (_, k) => ({ n: k + 1 }));
    est.instances = scale(d.range, { low: count, high: count });
    if (count > 1) est.notes.push(`each instance runs ${count} attempts (attempts: ${count}), counted in the figures`);
  }
  if (task.kind === 'run') {
    est.notes.push('shell step: no model calls');
    return est;
  }
  const summaries = task.context === 'summaries' ? task.needs.length * E.summaryTokensPerNeed : 0;
  const extraTurns = task.verify.length ? task.verifyRetries * E.verifyFixTurns : 0;
  // An attempt runs its own agent (models: round-robin), priced at that agent's model.
  const rolesOf = (n: number): string[] =>
    task.kind === 'pair'
      ? [task.pair!.worker, task.pair!.planner]
      : [(attempts ? attemptAgent(attempts, n) : '') || task.agent!];
  const roles = [...new Set(Array.from({ length: attempts?.count ?? 1 }, (_, k) => rolesOf(k + 1)).flat())];
  const rounds: Range = task.kind === 'pair' ? { low: 1, high: task.pair!.maxRounds } : { low: 1, high: 1 };
  let usdSum = zero();
  for (const { seed, n } of units) {
    const prompt = promptTokens(recipe, task, seed, env);
    for (const [i, role] of rolesOf(n).entries()) {
      const agent = recipe.agents[role];
      const model = agent?.model ?? recipe.model;
      const provider = agent?.provider ?? recipe.provider;
      if (!est.models.includes(model)) est.models.push(model);
      // The pair's planner reviews the worker's summary rather than doing the work itself.
      const start = systemTokens(agent) + prompt + summaries + (i === 1 ? E.summaryTokensPerNeed : 0);
      const run = agentRun(start, extraTurns);
      const tokens = { input: scale(run.input, rounds), output: scale(run.output, rounds) };
      // The instance's summary (the worker's, for a pair) is written by the model; offline it is extractive.
      const writesSummary = i === 0 && provider !== 'scripted' && agent?.summaries !== 'extractive';
      if (writesSummary) {
        const handoff = handoffCall(start, extraTurns);
        tokens.input = add(tokens.input, handoff.input);
        tokens.output = add(tokens.output, handoff.output);
      }
      est.inputTokens = add(est.inputTokens, tokens.input);
      est.outputTokens = add(est.outputTokens, tokens.output);
      // Upper: every input token at the full price; lower: one round with prompt caching. A call
      // that moves to a fallback model (`fallback:`) is paid at that model's price: the range spans
      // the cheapest and the dearest of the agent's models.
      const lowTurns = {
        n: E.turns.low,
        o: E.outputTokensPerTurn.low,
        g: E.outputTokensPerTurn.low + E.toolResultTokensPerTurn.low,
      };
      const served = [{ model, provider }, ...(provider === 'scripted' ? [] : (agent?.fallback ?? []))];
      const prices = served.map((m) => ({
        ...m,
        price: lookupModelPrice(m.model, m.provider, recipe.models, recipe.providers),
      }));
      usdSum = add(usdSum, {
        low: Math.min(
          ...prices.map(
            (m) => cachedRunUsd(start, lowTurns.n, lowTurns.o, lowTurns.g, writesSummary, m.price) * rounds.low,
          ),
        ),
        high: Math.max(...prices.map((m) => uncachedUsd(tokens, m.price))),
      });
      const note = (text: string) => {
        if (!est.notes.includes(text)) est.notes.push(text);
      };
      if (prices.length > 1)
        note(
          `${model} falls back to ${prices
            .slice(1)
            .map((m) => `${m.provider}/${m.model}`)
            .join(
              ', ',
            )}: a call that moves is paid at that model's price, so the cost spans the cheapest and the dearest of them`,
        );
      for (const m of prices) {
        if (!m.price.known)
          note(
            `no price known for ${m.model}; assumed $${FALLBACK_PRICE.input} / $${FALLBACK_PRICE.output} per million input / output tokens`,
          );
        if (m.price.local)
          note(
            `${m.model} on ${m.provider}: a local model nobody priced, counted at $0 (declare a price under models: to count one)`,
          );
      }
      if (provider === 'scripted' && !est.notes.includes('scripted provider: offline, no cost'))
        est.notes.push('scripted provider: offline, no cost');
    }
    // pick: judge: one judge call per instance (its first attempt's seed stands for the instance).
    if (attempts?.pick === 'judge' && n === 1) {
      const judge = judgeCall(recipe, task, prompt, extraTurns);
      est.inputTokens = add(est.inputTokens, judge.input);
      est.outputTokens = add(est.outputTokens, judge.output);
      usdSum = add(usdSum, judge.usd);
      if (!est.models.includes(judge.model)) est.models.push(judge.model);
      const text = `upper figure includes one judge call per instance (pick: judge; none when fewer than two attempts pass)`;
      if (!est.notes.includes(text)) est.notes.push(text);
    }
  }
  if (dynamic) {
    // One template-based instance (its attempts and judge) was estimated; multiply by the guessed item range.
    est.inputTokens = scale(est.inputTokens, items);
    est.outputTokens = scale(est.outputTokens, items);
    est.usd = scale(usdSum, items);
  } else {
    est.usd = usdSum; // static instances were each estimated and summed
  }
  const cap = task.budget.usd;
  if (cap !== undefined && est.usd.high > cap * est.instances.high) {
    est.usd.high = cap * est.instances.high;
    est.usd.low = Math.min(est.usd.low, est.usd.high);
    est.notes.push(`upper cost capped by the task budget of $${cap} per instance`);
  }
  if (task.verify.length && task.verifyRetries)
    est.notes.push(`upper figure includes ${task.verifyRetries} verify fix round(s) of ${E.verifyFixTurns} turns`);
  // The recipe's own caps (the default one is in the heuristic lines).
  if (task.maxTurns !== undefined || roles.some((r) => recipe.agents[r]?.maxTurns !== undefined)) {
    const caps = [
      ...new Set(roles.map((r) => task.maxTurns ?? recipe.agents[r]?.maxTurns ?? DEFAULT_RUN_LIMITS.maxTurns)),
    ];
    est.notes.push(
      `a runaway attempt stops after ${caps.map((c) => (c === 0 ? 'no cap' : `${c} turns`)).join(' / ')} (max_turns)`,
    );
  }
  return est;
}

export interface EstimateOptions {
  env?: Readonly<Record<string, string | undefined>>;
}

/** Estimates every task of the plan and the total; warns when the upper figure passes a budget. */
export function estimateRecipe(recipe: LoadedRecipe, plan: RecipePlan, opts: EstimateOptions = {}): RecipeEstimate {
  const env = opts.env ?? process.env;
  const byId = new Map(recipe.tasks.map((t) => [t.id, t]));
  const tasks = plan.tasks.map((pt) =>
    estimateTask(recipe, byId.get(pt.id)!, pt.instances, pt.fanOut === 'dynamic', env),
  );
  const total = { inputTokens: zero(), outputTokens: zero(), usd: zero() };
  for (const t of tasks) {
    total.inputTokens = add(total.inputTokens, t.inputTokens);
    total.outputTokens = add(total.outputTokens, t.outputTokens);
    total.usd = add(total.usd, t.usd);
  }
  const warnings: string[] = [];
  const { usd, tokens } = recipe.budget;
  if (usd !== undefined && total.usd.high > usd) {
    warnings.push(
      `${total.usd.low > usd ? 'even the lower' : 'the upper'} estimate ($${total.usd[total.usd.low > usd ? 'low' : 'high'].toFixed(2)}) exceeds the budget of $${usd}; the run stops admitting model calls once the budget is spent`,
    );
  }
  const allTokens = total.inputTokens.high + total.outputTokens.high;
  if (tokens !== undefined && allTokens > tokens) {
    warnings.push(`the upper token estimate (${allTokens}) exceeds the token budget of ${tokens}`);
  }
  const heuristic = [
    `each agent instance runs ${E.turns.low} (low) to ${E.turns.high} (high) model turns; every turn re-sends the whole context`,
    `the context starts at the runtime prompt (~${E.runtimeSystemTokens} tokens) + the agent's system prompt + ${E.toolSchemaTokens} per tool + the task prompt (+${E.summaryTokensPerNeed} per needed task with context: summaries)`,
    `and grows each turn by ${E.outputTokensPerTurn.low}-${E.outputTokensPerTurn.high} output tokens plus ${E.toolResultTokensPerTurn.low}-${E.toolResultTokensPerTurn.high} tokens of tool results`,
    `when an instance ends, the model writes its handoff summary: one more call over the final context (+${E.summarizerPromptTokens} tokens of instructions, ${E.handoffSummaryTokens} out)`,
    `a pair runs 1 to max_rounds rounds of worker + planner; fan-outs over task outputs assume ${E.dynamicFanOut.low}-${E.dynamicFanOut.high} instances unless the source output_schema gives maxItems`,
    'the upper cost ignores prompt caching; the lower one assumes it as the runtime uses it (each turn reads the previous context from the cache at 0.1x the input price and writes what is new at 1.25x; the handoff summary reads the final context); task-level retries are not included',
    `an attempt that runs away is stopped at its max_turns (default ${DEFAULT_RUN_LIMITS.maxTurns} model calls) or by loop detection; that worst case is not in the figures`,
  ];
  return { tasks, total, heuristic, warnings };
}
