// The dry-run estimate follows its documented heuristic: n turns re-sending a growing context.
import { afterEach, describe, expect, it } from 'vitest';
import { estimateTextTokens } from '../../src/ai/token-estimate.js';
import { RECIPE_DEFAULTS } from '../../src/recipe/defaults.js';
import { estimateRecipe } from '../../src/recipe/estimate.js';
import { loadRecipe } from '../../src/recipe/load.js';
import { buildPlan } from '../../src/recipe/plan.js';
import { lookupModelPrice } from '../../src/recipe/prices.js';
import { type TempRecipe, tempRecipe } from './recipe-files.js';

let temp: TempRecipe | undefined;
afterEach(() => temp?.cleanup());
const E = RECIPE_DEFAULTS.estimate;

function estimate(yaml: string) {
  temp = tempRecipe(yaml);
  const r = loadRecipe(temp.file, { cwd: temp.dir, env: {} });
  if (!r.ok) throw new Error(r.problems.map((p) => p.message).join('\n'));
  const plan = buildPlan(r.recipe, { env: {} });
  if (!plan.ok) throw new Error('plan failed');
  return { recipe: r.recipe, estimate: estimateRecipe(r.recipe, plan.plan, { env: {} }) };
}

describe('estimateRecipe', () => {
  it('one agent task: input = n*C + g*n(n-1)/2 and output = n*o at both ends, plus the handoff summary call, priced by the model', () => {
    const prompt = 'Summarise the repository.';
    const { estimate: e } = estimate(
      `name: r\nmodel: claude-haiku-4-5\nagents:\n  w: { system: "You summarise.", tools: [read, ls] }\ntasks:\n  - id: a\n    prompt: "${prompt}"\n`,
    );
    const start =
      E.runtimeSystemTokens +
      estimateTextTokens('You summarise.') +
      2 * E.toolSchemaTokens +
      estimateTextTokens(prompt);
    // n turns, then one summary call over the final context (start + n-1 turns of growth) and the summarizer's instructions.
    const turns = (n: number, o: number, r: number) => ({
      input: n * start + ((o + r) * n * (n - 1)) / 2 + (start + (o + r) * (n - 1) + E.summarizerPromptTokens),
      output: n * o + E.handoffSummaryTokens,
    });
    const low = turns(E.turns.low, E.outputTokensPerTurn.low, E.toolResultTokensPerTurn.low);
    const high = turns(E.turns.high, E.outputTokensPerTurn.high, E.toolResultTokensPerTurn.high);
    const [t] = e.tasks;
    expect(t!.inputTokens).toEqual({ low: low.input, high: high.input });
    expect(t!.outputTokens).toEqual({ low: low.output, high: high.output });
    const price = lookupModelPrice('claude-haiku-4-5', 'anthropic');
    // Upper: every input token at the input price.
    expect(t!.usd.high).toBeCloseTo((high.input * price.input + high.output * price.output) / 1e6, 10);
    // Lower: with prompt caching. Turn 1 writes its context (start) to the cache; turn k (k >= 2)
    // reads the context turn k-1 sent and writes the growth g; the summary reads the final context
    // and sends its instructions uncached.
    const n = E.turns.low;
    const g = E.outputTokensPerTurn.low + E.toolResultTokensPerTurn.low;
    let read = 0;
    let written = start;
    for (let k = 2; k <= n; k++) {
      read += start + g * (k - 2);
      written += g;
    }
    read += start + g * (n - 1); // the summary call
    expect(read + written + E.summarizerPromptTokens).toBe(low.input); // every input token is priced once
    expect(price).toMatchObject({ input: 1, cacheRead: 0.1, cacheWrite: 1.25, output: 5 });
    expect(t!.usd.low).toBeCloseTo(
      (read * 0.1 + written * 1.25 + E.summarizerPromptTokens * 1 + low.output * 5) / 1e6,
      10,
    );
    expect(t!.usd.low).toBeLessThan((low.input * price.input + low.output * price.output) / 1e6);
    expect(e.total.usd).toEqual(t!.usd);
  });

  it('an agent with summaries: extractive is estimated without the handoff summary call', () => {
    const base = 'name: r\nmodel: claude-haiku-4-5\nagents:\n  w: { system: w';
    const tail = ' }\ntasks:\n  - id: a\n    agent: w\n    prompt: go\n';
    const model = estimate(`${base}${tail}`).estimate.tasks[0]!;
    const extractive = estimate(`${base}, summaries: extractive${tail}`).estimate.tasks[0]!;
    expect(model.outputTokens.low - extractive.outputTokens.low).toBe(E.handoffSummaryTokens);
    expect(model.inputTokens.high).toBeGreaterThan(extractive.inputTokens.high);
  });

  it('static fan-outs are summed per instance; shell steps cost nothing', () => {
    const { estimate: e } = estimate(
      'name: r\ntasks:\n  - id: one\n    prompt: "x"\n  - id: three\n    for_each: [a, b, c]\n    prompt: "${{ item }}"\n  - id: sh\n    run: echo hi\n',
    );
    const [one, three, sh] = e.tasks;
    expect(three!.instances).toEqual({ low: 3, high: 3 });
    expect(three!.inputTokens.low).toBe(3 * one!.inputTokens.low);
    expect(sh).toMatchObject({
      usd: { low: 0, high: 0 },
      inputTokens: { low: 0, high: 0 },
      notes: ['shell step: no model calls'],
    });
  });

  it('a dynamic fan-out takes its instance range from the source output_schema', () => {
    const { estimate: e } = estimate(
      'name: r\ntasks:\n  - id: plan\n    prompt: p\n    output_schema: { type: object, properties: { items: { type: array, minItems: 2, maxItems: 4 } } }\n  - id: each\n    needs: [plan]\n    for_each: ${{ tasks.plan.output.items }}\n    prompt: "${{ item }}"\n  - id: guess\n    needs: [plan]\n    for_each: ${{ tasks.plan.output.other }}\n    prompt: "${{ item }}"\n',
    );
    expect(e.tasks[1]).toMatchObject({ instances: { low: 2, high: 4 }, instancesKnown: false });
    expect(e.tasks[2]).toMatchObject({ instances: { low: E.dynamicFanOut.low, high: E.dynamicFanOut.high } });
  });

  it('verify retries raise only the upper figure; pair rounds multiply it', () => {
    const base = 'name: r\nagents:\n  p: { system: p }\n  w: { system: w }\ntasks:\n';
    const plain = estimate(`${base}  - id: a\n    agent: w\n    prompt: go\n`).estimate.tasks[0]!;
    const verified = estimate(
      `${base}  - id: a\n    agent: w\n    prompt: go\n    verify: [make test]\n    verify_retries: 2\n`,
    ).estimate.tasks[0]!;
    expect(verified.inputTokens.low).toBe(plain.inputTokens.low);
    expect(verified.inputTokens.high).toBeGreaterThan(plain.inputTokens.high);
    const one = estimate(`${base}  - id: a\n    pair: { planner: p, worker: w, max_rounds: 1 }\n    prompt: go\n`)
      .estimate.tasks[0]!;
    const three = estimate(`${base}  - id: a\n    pair: { planner: p, worker: w, max_rounds: 3 }\n    prompt: go\n`)
      .estimate.tasks[0]!;
    // Rounds multiply the turns; the worker's one handoff summary comes once, at the end.
    expect(three.outputTokens.high - E.handoffSummaryTokens).toBe(3 * (one.outputTokens.high - E.handoffSummaryTokens));
    expect(three.outputTokens.low).toBe(one.outputTokens.low);
  });

  it('warns when the upper figure passes the run budget, and caps by a task budget', () => {
    const over = estimate('name: r\nbudget: { usd: 0.01, tokens: 1000 }\ntasks:\n  - id: a\n    prompt: go\n').estimate;
    expect(over.warnings).toHaveLength(2);
    expect(over.warnings[0]).toMatch(/estimate \(\$\d+\.\d\d\) exceeds the budget of \$0\.01/);
    expect(over.warnings[1]).toContain('exceeds the token budget of 1000');
    const capped = estimate(
      'name: r\ntasks:\n  - id: a\n    for_each: [x, y]\n    prompt: "${{ item }}"\n    budget: { usd: 0.05 }\n',
    ).estimate.tasks[0]!;
    expect(capped.usd.high).toBeCloseTo(0.1, 10);
    expect(capped.notes).toContain('upper cost capped by the task budget of $0.05 per instance');
  });

  it('a model declared under models: is priced by its declaration, with no fallback note', () => {
    const body = 'tasks:\n  - id: a\n    prompt: "Summarise the repository."\n';
    const haiku = estimate(`name: r\nmodel: claude-haiku-4-5\n${body}`).estimate.tasks[0]!;
    const declared = estimate(
      `name: r\nmodel: claude-future-7\nmodels:\n  claude-future-7: { price: { input: 1, output: 5 } }\n${body}`,
    ).estimate.tasks[0]!;
    const dearer = estimate(
      `name: r\nmodel: claude-future-7\nmodels:\n  claude-future-7: { price: { input: 2, output: 10 } }\n${body}`,
    ).estimate.tasks[0]!;
    expect(declared.usd).toEqual(haiku.usd);
    expect(dearer.usd.high).toBeCloseTo(haiku.usd.high * 2, 10);
    expect(declared.notes.join('\n')).not.toContain('no price known');
  });

  it('prices come from the ai model table; unknown models get a flagged fallback; scripted is free', () => {
    expect(lookupModelPrice('some-future-model', 'anthropic')).toEqual({
      input: 3,
      output: 15,
      cacheRead: 0.3,
      cacheWrite: 3.75,
      known: false,
    });
    expect(lookupModelPrice('claude-opus-4-1', 'anthropic')).toMatchObject({ input: 15, output: 75, known: true });
    expect(lookupModelPrice('anthropic/claude-haiku-4-5', 'anthropic')).toMatchObject({
      input: 1,
      output: 5,
      known: true,
    });
    expect(lookupModelPrice('claude-opus-4-1', 'scripted')).toEqual({
      input: 0,
      output: 0,
      cacheRead: 0,
      cacheWrite: 0,
      known: true,
    });
  });
});

describe('estimateRecipe: attempts', () => {
  const head =
    'name: r\nmodel: claude-haiku-4-5\nagents:\n  w: { tools: [read, edit] }\ntasks:\n  - id: plan\n    agent: w\n    prompt: p\n    output_schema: { type: object, properties: { items: { type: array, minItems: 2, maxItems: 4 } } }\n';
  const fanOut = (extra: string) =>
    estimate(
      `${head}  - id: each\n    agent: w\n    needs: [plan]\n    for_each: \${{ tasks.plan.output.items }}\n${extra}    prompt: "Fix \${{ item }}"\n`,
    ).estimate.tasks[1]!;

  it('a dynamic fan-out counts every attempt of each instance: instances and cost times attempts', () => {
    const one = fanOut('');
    const three = fanOut('    attempts: 3\n');
    // Items unknown until the run (2-4 from the schema), each run as 3 attempts.
    expect(three.instances).toEqual({ low: 6, high: 12 });
    expect(three.instancesKnown).toBe(false);
    expect(three.usd.low).toBeCloseTo(3 * one.usd.low, 10);
    expect(three.usd.high).toBeCloseTo(3 * one.usd.high, 10);
    expect(three.inputTokens).toEqual({ low: 3 * one.inputTokens.low, high: 3 * one.inputTokens.high });
    expect(three.notes).toContain('each instance runs 3 attempts (attempts: 3), counted in the figures');
  });

  it('a dynamic fan-out with pick: judge adds one judge call per instance, not per attempt', () => {
    const verify = fanOut('    attempts: 3\n');
    const judge = fanOut('    attempts: 3\n    pick: judge\n');
    // Up to 4 instances, one judge call each, each writing its reasons.
    expect(judge.outputTokens.high - verify.outputTokens.high).toBe(4 * E.handoffSummaryTokens);
    expect(judge.usd.low).toBeCloseTo(verify.usd.low, 10);
  });

  it('prices each attempt at its own model (models: round-robin)', () => {
    const task = (extra: string) =>
      estimate(
        `name: r\nmodel: claude-haiku-4-5\nagents:\n  w: { tools: [read] }\ntasks:\n  - id: fix\n    agent: w\n    attempts: 2\n${extra}    prompt: go\n`,
      ).estimate.tasks[0]!;
    const same = task('');
    const mixed = task('    models: [claude-haiku-4-5, claude-opus-4-1]\n');
    expect(mixed.instances).toEqual({ low: 2, high: 2 });
    expect(mixed.models).toEqual(['claude-haiku-4-5', 'claude-opus-4-1']);
    // Attempt 2 runs on opus (15x haiku's input price), so the upper figure is well above two haiku attempts.
    expect(mixed.usd.high).toBeGreaterThan(2 * same.usd.high);
  });
});
