// The dry-run estimate of a task with `attempts:` and `pick: judge` counts the judge: one call per
// instance at the upper end (none at the lower: with fewer than two passing attempts no judge is
// asked), priced by the judge's model; `pick: verify` adds nothing.
import { afterEach, describe, expect, it } from 'vitest';
import { RECIPE_DEFAULTS } from '../../src/recipe/defaults.js';
import { estimateRecipe } from '../../src/recipe/estimate.js';
import { loadRecipe } from '../../src/recipe/load.js';
import { buildPlan } from '../../src/recipe/plan.js';
import { type TempRecipe, tempRecipe } from './recipe-files.js';

let temp: TempRecipe | undefined;
afterEach(() => temp?.cleanup());

function taskEstimate(pick: string, extra = '') {
  temp = tempRecipe(`name: r
model: claude-haiku-4-5
agents:
  w: { tools: [read, edit] }
tasks:
  - id: fix
    agent: w
    for_each: [alpha, beta]
    attempts: 3
    pick: ${pick}
${extra}    prompt: "Fix \${{ item }}"
`);
  const r = loadRecipe(temp.file, { cwd: temp.dir, env: {} });
  if (!r.ok) throw new Error(r.problems.map((p) => p.message).join('\n'));
  const plan = buildPlan(r.recipe, { env: {} });
  if (!plan.ok) throw new Error('plan failed');
  return estimateRecipe(r.recipe, plan.plan, { env: {} }).tasks[0]!;
}

describe('estimate: the judge of pick: judge', () => {
  it('adds one judge call per instance to the upper figure, nothing to the lower', () => {
    const verify = taskEstimate('verify');
    const judge = taskEstimate('judge');
    expect(judge.usd.low).toBeCloseTo(verify.usd.low, 10);
    expect(judge.inputTokens.low).toBe(verify.inputTokens.low);
    expect(judge.usd.high).toBeGreaterThan(verify.usd.high);
    // Two instances (alpha, beta), not six attempts: two judge calls, each writing its reasons.
    expect(judge.outputTokens.high - verify.outputTokens.high).toBe(2 * RECIPE_DEFAULTS.estimate.handoffSummaryTokens);
    expect(judge.notes.some((n) => n.includes('one judge call per instance'))).toBe(true);
    expect(verify.notes.some((n) => n.includes('judge'))).toBe(false);
  });

  it("is priced by the judge's own model (judge: { model })", () => {
    const own = taskEstimate('judge');
    const dear = taskEstimate('judge', '    judge: { model: claude-opus-4-1 }\n');
    // Two instances, one judge call each: the dearer judge model raises only the upper figure.
    expect(dear.usd.high).toBeGreaterThan(own.usd.high);
    expect(dear.usd.low).toBeCloseTo(own.usd.low, 10);
    expect(dear.models).toContain('claude-opus-4-1');
  });
});
