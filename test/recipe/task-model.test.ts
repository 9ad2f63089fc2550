// A task's own `model:` / `thinking:`: one task moved to another model without a new agent
// definition. It runs on that model (the calls and the session say so), is priced by it in the
// dry run, and a typo in it is caught at its file:line:col before anything runs.
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { estimateRecipe } from '../../src/recipe/estimate.js';
import { loadRecipe } from '../../src/recipe/load.js';
import { buildPlan } from '../../src/recipe/plan.js';
import { runRecipeFile } from '../../src/orchestrator/run-recipe.js';
import { cleanupTempDirs, tempProject } from '../orchestrator/helpers/run-fixtures.js';

afterAll(() => cleanupTempDirs());

const recipe = (extra: string) => `name: task-model
model: claude-sonnet-4-5
provider: scripted
script: script.yaml
agents:
  worker: { tools: [], thinking: low }
tasks:
  - id: big
    agent: worker
    prompt: "big job"
  - id: small
    agent: worker
    prompt: "small job"
${extra}`;

describe('a task with its own model', () => {
  it("runs on that model while the other tasks of the same agent keep the agent's", async () => {
    const dir = tempProject({
      'recipe.yaml': recipe('    model: claude-haiku-4-5\n    thinking: off\n'),
      'script.yaml': 'turns:\n  - text: done\n',
    });
    const loaded = loadRecipe(join(dir, 'recipe.yaml'));
    if (!loaded.ok) throw new Error(JSON.stringify(loaded.problems));
    const small = loaded.recipe.tasks.find((t) => t.id === 'small')!;
    expect(loaded.recipe.agents[small.agent!]).toMatchObject({ model: 'claude-haiku-4-5', thinking: 'off' });
    expect(loaded.recipe.agents.worker).toMatchObject({ model: 'claude-sonnet-4-5', thinking: 'low' });

    const r = await runRecipeFile(join(dir, 'recipe.yaml'), { cwd: dir }, { runsDir: join(dir, 'runs') });
    if (!r.ok) throw new Error(JSON.stringify(r));
    expect(r.outcome.status).toBe('succeeded');
    const sessions = join(r.outcome.dir, 'sessions');
    const modelsOf = (file: string) =>
      readFileSync(join(sessions, file), 'utf8')
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l) as { type: string; message?: { role: string; model?: string } })
        .filter((e) => e.type === 'message' && e.message?.role === 'assistant')
        .map((e) => e.message!.model);
    const files = readdirSync(sessions);
    expect(modelsOf(files.find((f) => f.startsWith('small'))!)).toEqual(['claude-haiku-4-5']);
    expect(modelsOf(files.find((f) => f.startsWith('big'))!)).toEqual(['claude-sonnet-4-5']);
  });

  it('the dry run prices the task by its own model', () => {
    const dir = tempProject({
      'recipe.yaml': recipe('    model: claude-haiku-4-5\n').replace('provider: scripted\nscript: script.yaml\n', ''),
      'script.yaml': '',
    });
    const loaded = loadRecipe(join(dir, 'recipe.yaml'));
    if (!loaded.ok) throw new Error(JSON.stringify(loaded.problems));
    const planned = buildPlan(loaded.recipe);
    if (!planned.ok) throw new Error(JSON.stringify(planned.problems));
    const est = estimateRecipe(loaded.recipe, planned.plan);
    const of = (id: string) => est.tasks.find((t) => t.taskId === id)!;
    expect(of('small').models).toEqual(['claude-haiku-4-5']);
    expect(of('big').models).toEqual(['claude-sonnet-4-5']);
    expect(of('small').usd.high).toBeLessThan(of('big').usd.high);
  });

  it('an unknown task model is an error at its position; a pair or run: task cannot set one', () => {
    const dir = tempProject({
      'recipe.yaml': recipe('    model: claude-haiku-4-55\n').replace('provider: scripted\nscript: script.yaml\n', ''),
      'script.yaml': '',
    });
    const bad = loadRecipe(join(dir, 'recipe.yaml'));
    expect(bad.ok).toBe(false);
    if (bad.ok) return;
    expect(bad.problems).toEqual([
      expect.objectContaining({
        code: 'unknown_model',
        line: 12,
        col: 12,
        message: 'unknown model "claude-haiku-4-55"',
      }),
    ]);

    const pair = tempProject({
      'recipe.yaml': `name: p
provider: scripted
script: s.yaml
agents:
  a: { tools: [] }
  b: { tools: [] }
tasks:
  - id: review
    pair: { planner: a, worker: b }
    model: claude-haiku-4-5
    prompt: go
  - id: sh
    run: "true"
    thinking: high
`,
      's.yaml': 'turns:\n  - text: ok\n',
    });
    const conflict = loadRecipe(join(pair, 'recipe.yaml'));
    expect(conflict.ok).toBe(false);
    if (conflict.ok) return;
    expect(conflict.problems.map((p) => [p.code, p.line, p.message])).toEqual([
      ['conflict', 10, 'task "review" sets model, which only an agent task can use'],
      ['conflict', 14, 'task "sh" sets thinking, which only an agent task can use'],
    ]);
  });
});
