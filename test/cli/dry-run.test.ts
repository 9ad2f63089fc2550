// `orchestrate <recipe> --dry-run` on the shipped examples: the plan tree, the estimate, the
// budget warning, overrides and --json. No model is called and no step runs.
import { cpSync, existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { DryRunReport } from '../../src/recipe/index.js';
import { runCli } from './run-cli.js';

const ROOT = resolve(import.meta.dirname, '../..');
const run = (argv: string[]) => runCli(argv, { cwd: ROOT });
const json = async (argv: string[]) => {
  const r = await run([...argv, '--dry-run', '--json']);
  expect(r.code, r.stderr).toBe(0);
  return JSON.parse(r.stdout) as DryRunReport & { ok: boolean; dryRun: boolean };
};

describe('dry run of recipes/fan-out', () => {
  it('prints the glob fan-out as a tree of instances, then the estimate', async () => {
    const r = await run(['recipes/fan-out/recipe.yaml', '--dry-run']);
    expect(r.code).toBe(0);
    expect(r.stderr).toBe('');
    const out = r.stdout;
    expect(out).toContain('Recipe fan-out  (recipes/fan-out/recipe.yaml)');
    expect(out).toContain('Plan: 2 tasks in 2 levels, 4 instances');
    expect(out).toMatch(
      /level 0 {2}width: 3 instances\n└─ survey {2}agent surveyor \(claude-haiku-4-5\)\n {3}for_each: 3 instances\n {3}├─ survey\.projects-alpha {2}item "projects\/alpha"\n {3}├─ survey\.projects-beta {2}item "projects\/beta"\n {3}└─ survey\.projects-gamma {2}item "projects\/gamma"/,
    );
    expect(out).toMatch(
      /level 1 {2}width: 1 instance\n└─ overview {2}agent editor \(claude-haiku-4-5\) {2}needs: survey/,
    );
    expect(out).toContain('Estimate (no model was called):');
    expect(out).toMatch(/\n {2}total\s+\S+\s+\S+\s+\$0\.00\n/);
    expect(out).toContain('survey: scripted provider: offline, no cost');
    expect(out).toContain('each agent instance runs 2 (low) to 12 (high) model turns');
  });

  it('--json holds the same plan as data', async () => {
    const report = await json(['recipes/fan-out/recipe.yaml']);
    expect(report.ok).toBe(true);
    expect(report.plan.levels.map((l) => [l.tasks, l.instances])).toEqual([
      [['survey'], 3],
      [['overview'], 1],
    ]);
    const survey = report.plan.tasks.find((t) => t.id === 'survey')!;
    expect(survey.fanOut).toBe('static');
    expect(survey.instances.map((i) => [i.id, i.key, i.item])).toEqual([
      ['survey.projects-alpha', 'projects-alpha', 'projects/alpha'],
      ['survey.projects-beta', 'projects-beta', 'projects/beta'],
      ['survey.projects-gamma', 'projects-gamma', 'projects/gamma'],
    ]);
    expect(report.estimate.tasks.map((t) => t.instances)).toEqual([
      { low: 3, high: 3 },
      { low: 1, high: 1 },
    ]);
    expect(report.estimate.total.usd).toEqual({ low: 0, high: 0 });
    expect(report.estimate.total.inputTokens.high).toBeGreaterThan(report.estimate.total.inputTokens.low);
  });

  it('with a real provider the estimate has a cost, and a small budget draws a warning', async () => {
    const r = await run(['recipes/fan-out/recipe.yaml', '--dry-run', '--provider', 'anthropic', '--budget-usd', '0.5']);
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/warning: the upper estimate \(\$\d+\.\d\d\) exceeds the budget of \$0\.5/);
    const report = await json(['recipes/fan-out/recipe.yaml', '--provider', 'anthropic', '--budget-usd', '1000']);
    expect(report.estimate.total.usd.low).toBeGreaterThan(0);
    expect(report.estimate.total.usd.high).toBeGreaterThan(report.estimate.total.usd.low);
    expect(report.warnings).toEqual([]);
    expect(report.recipe.budget.usd).toBe(1000);
  });

  it('--model and --concurrency override the recipe; a pricier model costs more', async () => {
    const haiku = await json(['recipes/fan-out/recipe.yaml', '--provider', 'anthropic', '--concurrency', '7']);
    const opus = await json(['recipes/fan-out/recipe.yaml', '--provider', 'anthropic', '--model', 'claude-opus-4-1']);
    expect(haiku.recipe.concurrency).toBe(7);
    expect(opus.recipe.agents.map((a) => a.model)).toEqual(['claude-opus-4-1', 'claude-opus-4-1']);
    expect(opus.estimate.total.usd.high).toBeGreaterThan(haiku.estimate.total.usd.high * 10);
  });
});

describe('dry run of recipes/planner-worker', () => {
  it('shows the shell step and the pair with both agents', async () => {
    const r = await run(['recipes/planner-worker/recipe.yaml', '--dry-run']);
    expect(r.code).toBe(0);
    expect(r.stdout).toContain('└─ workspace  shell step');
    expect(r.stdout).toContain(
      '└─ build  pair: planner planner (claude-sonnet-4-5) + worker worker (claude-sonnet-4-5)  needs: workspace',
    );
    expect(r.stdout).toContain('upper figure includes 2 verify fix round(s)');
  });

  it('--set changes an input, and the instance prompt sizes follow', async () => {
    const short = await json(['recipes/planner-worker/recipe.yaml', '--provider', 'anthropic', '--set', 'feature=x']);
    const long = await json([
      'recipes/planner-worker/recipe.yaml',
      '--provider',
      'anthropic',
      '--set',
      `feature=${'a very long feature description '.repeat(100)}`,
    ]);
    expect(short.recipe.inputs).toEqual({ feature: 'x' });
    const tokens = (r: DryRunReport) => r.estimate.tasks.find((t) => t.taskId === 'build')!.inputTokens.low;
    expect(tokens(long)).toBeGreaterThan(tokens(short) + 500);
    expect(short.estimate.tasks.find((t) => t.taskId === 'workspace')!.usd).toEqual({ low: 0, high: 0 });
  });
});

describe('dry run of recipes/batch-refactor', () => {
  it('shows the fan-out over the scout output as expanded later, sized by its output_schema', async () => {
    const r = await run(['recipes/batch-refactor/recipe.yaml', '--dry-run']);
    expect(r.code).toBe(0);
    expect(r.stdout).toContain(
      '└─ refactor  agent worker (claude-sonnet-4-5)  needs: inventory\n   └─ for_each ${{ tasks.inventory.output.repos }}: expanded when inventory finishes',
    );
    expect(r.stdout).toContain("refactor: instance count from inventory's output_schema: 1-10");
    expect(r.stdout).toContain('inputs: old_call=log, new_call=logger.info');
  });

  it('runs no step: in a fresh copy of the recipe, the setup task never creates work/', async () => {
    const copy = mkdtempSync(join(tmpdir(), 'orchestrate-dry-'));
    try {
      const from = join(ROOT, 'recipes/batch-refactor');
      cpSync(from, copy, { recursive: true, filter: (src) => !relative(from, src).startsWith('work') });
      const r = await runCli(['recipe.yaml', '--dry-run'], { cwd: copy });
      expect(r.code).toBe(0);
      expect(existsSync(join(copy, 'work'))).toBe(false);
    } finally {
      rmSync(copy, { recursive: true, force: true });
    }
  });

  it('--json marks the dynamic task and its sources', async () => {
    const report = await json(['recipes/batch-refactor/recipe.yaml', '--set', 'new_call=logger.debug']);
    const refactor = report.plan.tasks.find((t) => t.id === 'refactor')!;
    expect(refactor).toMatchObject({ fanOut: 'dynamic', instances: [], dynamic: { sources: ['inventory'] }, level: 2 });
    expect(report.plan.levels.map((l) => l.tasks)).toEqual([['setup'], ['inventory'], ['refactor'], ['review']]);
    expect(report.recipe.inputs).toEqual({ old_call: 'log', new_call: 'logger.debug' });
    expect(report.estimate.tasks.find((t) => t.taskId === 'refactor')).toMatchObject({
      instances: { low: 1, high: 10 },
      instancesKnown: false,
    });
  });

  it('a problem found while planning is reported like a recipe problem', async () => {
    const r = await run(['recipes/batch-refactor/recipe.yaml', '--dry-run', '--set', 'nope=1']);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('--set nope: the recipe has no input "nope"');
  });
});
