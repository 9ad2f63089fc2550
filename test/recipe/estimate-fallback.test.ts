// The dry run prices fallback models (issue 41): a call that moves to a `fallback:` model is paid at
// that model's price, so an agent's cost range spans the cheapest and the dearest of its model and
// its fallbacks (an agent's own list, or its provider's), and the dry run says so. Through the
// service's dryRunRecipe, as `--dry-run` and the MCP dry_run tool call it.
import { afterEach, describe, expect, it } from 'vitest';
import { loadRecipe } from '../../src/recipe/load.js';
import { dryRunRecipe } from '../../src/service/dry-run.js';
import { type TempRecipe, tempRecipe } from './recipe-files.js';

const temps: TempRecipe[] = [];
afterEach(() => {
  for (const t of temps.splice(0)) t.cleanup();
});

async function taskEstimate(model: string, fallback?: string) {
  const temp = tempRecipe(
    `name: r\nmodel: ${model}\nagents:\n  w: { tools: [read]${fallback ? `, fallback: [${fallback}]` : ''} }\ntasks:\n  - id: a\n    agent: w\n    prompt: "Summarise the repository."\n`,
  );
  temps.push(temp);
  const r = loadRecipe(temp.file, { cwd: temp.dir, env: {} });
  if (!r.ok) throw new Error(r.problems.map((p) => p.message).join('\n'));
  const out = await dryRunRecipe(r.recipe, { cwd: temp.dir, env: {} }, { listMcp: false });
  if (!out.ok) throw new Error('dry run failed');
  return out.report.estimate.tasks[0]!;
}

describe('dry run: fallback models are priced', () => {
  it('a cheaper fallback lowers the lower figure, a dearer one raises the upper; the note names them', async () => {
    const sonnet = await taskEstimate('claude-sonnet-4-5');
    const haiku = await taskEstimate('claude-haiku-4-5');
    const opus = await taskEstimate('claude-opus-4-1');
    expect(haiku.usd.low).toBeLessThan(sonnet.usd.low);
    expect(opus.usd.high).toBeGreaterThan(sonnet.usd.high);

    const toHaiku = await taskEstimate('claude-sonnet-4-5', 'anthropic/claude-haiku-4-5');
    expect(toHaiku.usd).toEqual({ low: haiku.usd.low, high: sonnet.usd.high });
    expect(toHaiku.notes).toContain(
      "claude-sonnet-4-5 falls back to anthropic/claude-haiku-4-5: a call that moves is paid at that model's price, so the cost spans the cheapest and the dearest of them",
    );
    const toOpus = await taskEstimate('claude-sonnet-4-5', 'anthropic/claude-opus-4-1');
    expect(toOpus.usd).toEqual({ low: sonnet.usd.low, high: opus.usd.high });
    // Tokens do not change: the same calls, served elsewhere.
    expect(toOpus.inputTokens).toEqual(sonnet.inputTokens);
  });

  it("a fallback nobody priced is flagged like the agent's own model", async () => {
    const e = await taskEstimate('claude-haiku-4-5', 'openrouter/some/unpriced-model');
    expect(e.notes.join('\n')).toContain('no price known for some/unpriced-model');
  });
});
