// service/run-request.ts: one request becomes the recipe's load options and the command line of
// a detached run. The command line is read back by the real `orchestrate run` flags (yargs with
// cli/commands/run.ts's runOptions), so a detached run gets exactly what the caller asked for.
import yargs from 'yargs';
import { describe, expect, it } from 'vitest';
import { runOptions } from '../../src/cli/commands/run.js';
import {
  loadOptionsOf,
  resumeCommandArgs,
  resumeOverridesOf,
  type RunRequest,
  runCommandArgs,
} from '../../src/service/run-request.js';

const REQUEST: RunRequest & { runsDir: string } = {
  recipe: '/p/recipe.yaml',
  set: ['who=Ana', 'files=["a","b"]'],
  model: 'qwen',
  provider: 'gpu',
  concurrency: 3,
  budgetUsd: 1.5,
  budgetTokens: 400000,
  runsDir: '/p/runs',
};

describe('service: a run request', () => {
  it('becomes load options with only what was given', () => {
    expect(loadOptionsOf({ recipe: 'r.yaml' }, { cwd: '/p', env: {} })).toEqual({ cwd: '/p', env: {}, set: [] });
    expect(loadOptionsOf(REQUEST, { cwd: '/p', env: { A: '1' } })).toEqual({
      cwd: '/p',
      env: { A: '1' },
      set: ['who=Ana', 'files=["a","b"]'],
      model: 'qwen',
      provider: 'gpu',
      concurrency: 3,
      budgetUsd: 1.5,
      budgetTokens: 400000,
    });
    expect(resumeOverridesOf({ concurrency: 2 })).toEqual({ concurrency: 2 });
  });

  it("becomes an `orchestrate run` command line that the command's own flags read back the same", async () => {
    const argv = runCommandArgs(REQUEST);
    expect(argv.slice(0, 2)).toEqual(['run', '/p/recipe.yaml']);
    const parsed = await yargs(argv)
      .command('run <recipe>', 'run', runOptions)
      .strict()
      .fail((msg, err) => {
        throw err ?? new Error(msg);
      })
      .parse();
    expect(parsed).toMatchObject({
      recipe: '/p/recipe.yaml',
      set: ['who=Ana', 'files=["a","b"]'],
      model: 'qwen',
      provider: 'gpu',
      concurrency: 3,
      'budget-usd': 1.5,
      'budget-tokens': '400000',
      'run-dir': '/p/runs',
      color: false,
    });
  });

  it('becomes an `orchestrate resume` command line with its retries and --reload-recipe', () => {
    expect(
      resumeCommandArgs({ run: '/p/runs/r1', budgetUsd: 2, retry: ['fix.alpha', 'fix.beta'], reloadRecipe: true }),
    ).toEqual([
      'resume',
      '/p/runs/r1',
      '--no-color',
      '--budget-usd',
      '2',
      '--retry',
      'fix.alpha',
      '--retry',
      'fix.beta',
      '--reload-recipe',
    ]);
    expect(resumeCommandArgs({ run: '/p/runs/r1' })).toEqual(['resume', '/p/runs/r1', '--no-color']);
  });
});
