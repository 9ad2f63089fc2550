// `orchestrate resume <run>`: continues an interrupted (or failed) run from its log. Finished
// instances keep their results; interrupted ones continue from their session leaf.
import { type Argv } from 'yargs';
import { resumeRunDir } from '../../orchestrator/run-recipe.js';
import { type CliContext } from '../cli-io.js';
import { type CliCommand, type CommandArgs } from '../command.js';
import { executeRun } from './run.js';

function options(y: Argv): Argv<object> {
  return y
    .positional('run', { type: 'string', describe: 'Run id, a unique prefix of one, or the path of a run folder', demandOption: true })
    .option('run-dir', { type: 'string', describe: 'Folder holding run records (default .orchestrate/runs)' })
    .option('json', { type: 'boolean', default: false, describe: 'JSON lines of run events on stdout' })
    .option('concurrency', { type: 'number', describe: 'Task instances running at once (overrides the recorded value)' })
    .option('budget-usd', { type: 'number', describe: 'Run budget in US dollars (raise it to finish a budget-exhausted run)' })
    .option('full-events', { type: 'boolean', default: false, describe: 'Also log streaming deltas of every agent' })
    .option('color', { type: 'boolean', default: true, describe: 'Colour the live view and summary (--no-color, or NO_COLOR=1, turns it off)' })
    .option('agents-per-thread', { type: 'number', describe: 'Agents sharing one worker thread (default 1: each agent isolated; more saves memory on large fan-outs)' })
    .check((a) => {
      const apt = a['agents-per-thread'];
      if (apt !== undefined && !(typeof apt === 'number' && Number.isInteger(apt) && apt >= 1)) throw new Error(`--agents-per-thread must be a whole number of at least 1 (got ${String(apt)})`);
      const c = a.concurrency;
      if (c !== undefined && !(typeof c === 'number' && Number.isInteger(c) && c >= 1)) throw new Error(`--concurrency must be a whole number of at least 1 (got ${String(c)})`);
      const b = a['budget-usd'];
      if (b !== undefined && !(typeof b === 'number' && Number.isFinite(b) && b >= 0)) throw new Error(`--budget-usd must be a number of dollars, 0 or more (got ${String(b)})`);
      return true;
    });
}

async function resume(args: CommandArgs, ctx: CliContext): Promise<number> {
  const overrides = {
    ...(typeof args.concurrency === 'number' ? { concurrency: args.concurrency } : {}),
    ...(typeof args['budget-usd'] === 'number' ? { budgetUsd: args['budget-usd'] } : {}),
  };
  return executeRun(args, ctx, (opts) =>
    resumeRunDir(String(args.run), { ...opts, cwd: ctx.cwd, overrides, ...(typeof args['run-dir'] === 'string' ? { runsDir: args['run-dir'] } : {}) }),
  );
}

export const resumeCommand: CliCommand = {
  command: 'resume <run>',
  describe: 'Continue an interrupted run (finished instances are not run again)',
  builder: options,
  run: resume,
};
