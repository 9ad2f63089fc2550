// `orchestrate resume <run>`: continues an interrupted (or failed) run from its log. Finished
// instances keep their results; interrupted ones continue from their session leaf.
import type { Argv } from 'yargs';
import { resumeRunDir } from '../../orchestrator/run-recipe.js';
import type { CliContext } from '../cli-io.js';
import type { CliCommand, CommandArgs } from '../command.js';
import { controlBy } from '../../service/run-control.js';
import { budgetTokensOf, executeRun, executionOptions } from './run.js';

function options(y: Argv): Argv<object> {
  return executionOptions(
    y.positional('run', {
      type: 'string',
      describe: 'Run id, a unique prefix of one, or the path of a run folder',
      demandOption: true,
    }),
    {
      json: 'JSON on stdout: every run event as a JSON line; --json=full adds message deltas',
      concurrency: 'Task instances running at once (overrides the recorded value)',
      budgetUsd:
        "Run budget in US dollars: replaces the run's budget with this total, and the spend so far counts against it (raise it to finish a budget-exhausted run)",
      budgetTokens:
        "Run budget in tokens (input + output; 500000, 400k, 3M): replaces the run's token budget with this total, and the tokens used so far count against it",
      runDir: 'Folder holding run records (default .orchestrate/runs in the current folder)',
    },
  )
    .option('retry', {
      type: 'string',
      array: true,
      describe:
        'Run this cancelled instance again (repeatable; a resume keeps cancelled instances cancelled otherwise, and reruns failed ones anyway)',
    })
    .option('reload-recipe', {
      type: 'boolean',
      describe:
        'Use the recipe and its files (agent files, scripts, .mcp.json, hook settings, extensions) as they are now, validated and captured again; without it a resume uses the copies captured when the run started and names any file changed since',
    })
    .example([
      ['orchestrate resume 20261203', 'the run whose id starts with 20261203 (orchestrate runs lists them)'],
      [
        'orchestrate resume .orchestrate/runs/<id> --budget-usd 10',
        'a budget-exhausted run with a higher total budget',
      ],
      ['orchestrate resume 20261203 --retry fix.alpha', 'also run again fix.alpha, which a user cancelled'],
      ['orchestrate resume 20261203 --reload-recipe', 'continue with the recipe you edited since the run started'],
    ]);
}

async function resume(args: CommandArgs, ctx: CliContext): Promise<number> {
  const overrides = {
    ...(typeof args.concurrency === 'number' ? { concurrency: args.concurrency } : {}),
    ...(typeof args['budget-usd'] === 'number' ? { budgetUsd: args['budget-usd'] } : {}),
    ...(budgetTokensOf(args['budget-tokens']) !== undefined
      ? { budgetTokens: budgetTokensOf(args['budget-tokens']) }
      : {}),
  };
  const retry = Array.isArray(args.retry) ? args.retry.map(String).filter((k) => k.trim() !== '') : [];
  const retryOpts = retry.length ? { retry, retryBy: controlBy('resume', ctx.env) } : {};
  return executeRun(args, ctx, (opts) =>
    resumeRunDir(String(args.run), {
      ...opts,
      ...retryOpts,
      ...(args['reload-recipe'] === true ? { reloadRecipeBy: controlBy('resume --reload-recipe', ctx.env) } : {}),
      onNotice: (text: string) => ctx.stderr(`orchestrate: ${text}\n`),
      cwd: ctx.cwd,
      overrides,
      ...(typeof args['run-dir'] === 'string' ? { runsDir: args['run-dir'] } : {}),
    }),
  );
}

export const resumeCommand: CliCommand = {
  command: 'resume <run>',
  describe: 'Continue an interrupted run (finished instances are not run again)',
  builder: options,
  run: resume,
};
