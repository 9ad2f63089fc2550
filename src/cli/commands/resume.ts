// `orchestrate resume <run>`: continues an interrupted (or failed) run from its log. Finished
// instances keep their results; interrupted ones continue from their session leaf. The flags
// become a ResumeRequest for the service's resumeRun (service/resume-run.ts); the terminal's part
// (Ctrl-C, the view, the summary, the exit code) is run.ts's executeRun. `--dry-run` says what a
// resume would do (service/resume-preview.ts) and runs nothing.
import type { Argv } from 'yargs';
import { type CliContext, EXIT } from '../cli-io.js';
import type { CliCommand, CommandArgs } from '../command.js';
import { resumeRun } from '../../service/resume-run.js';
import { controlBy } from '../../service/run-control.js';
import { type ResumePreview, previewResume, resumePreviewText } from '../../service/resume-preview.js';
import { notARunArgMessage } from '../locate-run.js';
import { printProblems } from '../print-problems.js';
import type { ResumeRequest } from '../../service/run-request.js';
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
    .option('dry-run', {
      type: 'boolean',
      describe:
        'Say what the resume would do and run nothing: the instances kept and those run again, the spend so far, and the pairs that may touch the same files (their earlier patches, or their writes:); --json prints it as JSON',
    })
    .example([
      ['orchestrate resume 20261203', 'the run whose id starts with 20261203 (orchestrate runs lists them)'],
      ['orchestrate resume 20261203 --dry-run', 'what a resume would run again, and which instances overlap'],
      [
        'orchestrate resume .orchestrate/runs/<id> --budget-usd 10',
        'a budget-exhausted run with a higher total budget',
      ],
      ['orchestrate resume 20261203 --retry fix.alpha', 'also run again fix.alpha, which a user cancelled'],
      ['orchestrate resume 20261203 --reload-recipe', 'continue with the recipe you edited since the run started'],
    ]);
}

async function resume(args: CommandArgs, ctx: CliContext): Promise<number> {
  const notARun = notARunArgMessage(args, ctx);
  if (notARun !== undefined) {
    ctx.stderr(`orchestrate: ${notARun}\n`);
    return EXIT.usage;
  }
  const budgetTokens = budgetTokensOf(args['budget-tokens']);
  const request: ResumeRequest = {
    run: String(args.run),
    ...(typeof args.concurrency === 'number' ? { concurrency: args.concurrency } : {}),
    ...(typeof args['budget-usd'] === 'number' ? { budgetUsd: args['budget-usd'] } : {}),
    ...(budgetTokens !== undefined ? { budgetTokens } : {}),
    ...(Array.isArray(args.retry) ? { retry: args.retry.map(String) } : {}),
    ...(args['reload-recipe'] === true ? { reloadRecipe: true } : {}),
    ...(typeof args['run-dir'] === 'string' ? { runsDir: args['run-dir'] } : {}),
  };
  if (args['dry-run'] === true) return dryRun(request, Boolean(args.json), ctx);
  if (request.budgetUsd !== undefined || request.budgetTokens !== undefined) {
    const preview = await previewResume(request, { cwd: ctx.cwd, env: ctx.env });
    const below = preview.ok ? budgetNotAboveSpent(preview.preview, request) : undefined;
    if (below !== undefined) {
      ctx.stderr(`orchestrate: ${below}\n`);
      return EXIT.usage;
    }
  }
  return executeRun(args, ctx, (exec) =>
    resumeRun(request, exec, {
      retry: controlBy('resume', ctx.env),
      reloadRecipe: controlBy('resume --reload-recipe', ctx.env),
    }),
  );
}

/** `--dry-run`: the preview, human or JSON; nothing runs and the run folder is only read. */
async function dryRun(request: ResumeRequest, json: boolean, ctx: CliContext): Promise<number> {
  const r = await previewResume(request, { cwd: ctx.cwd, env: ctx.env });
  if (!r.ok) {
    if (r.code === 'problems') printProblems(r.problems, ctx);
    else ctx.stderr(`orchestrate: ${r.message}\n`);
    return EXIT.usage;
  }
  const below = budgetNotAboveSpent(r.preview, request);
  ctx.stdout(
    json
      ? `${JSON.stringify({ ok: true, dryRun: true, ...r.preview }, null, 2)}\n`
      : `${resumePreviewText(r.preview)}${below ? `  budget: ${below.replace('\n  hint:', ';')}\n` : ''}`,
  );
  return EXIT.ok;
}

/**
 * A budget flag whose total is not above what the run has spent: the resume would stop before its
 * first model call. It used to start anyway, fail an instance on the budget and end with "resume:
 * orchestrate resume <run>", the same command again.
 */
export function budgetNotAboveSpent(p: ResumePreview, request: ResumeRequest): string | undefined {
  const short: string[] = [];
  if (request.budgetTokens !== undefined && request.budgetTokens > 0 && request.budgetTokens <= p.spent.tokens)
    short.push(`--budget-tokens ${request.budgetTokens} is not above the ${p.spent.tokens} tokens the run has spent`);
  if (request.budgetUsd !== undefined && request.budgetUsd > 0 && request.budgetUsd <= p.spent.usd)
    short.push(`--budget-usd ${request.budgetUsd} is not above the $${p.spent.usd.toFixed(4)} the run has spent`);
  if (short.length === 0) return undefined;
  return `${short.join('; ')}, so the resume would stop before its first model call\n  hint: a resume's budget is a total that counts the spend so far: give one above it`;
}

export const resumeCommand: CliCommand = {
  command: 'resume <run>',
  describe: 'Continue an interrupted run (finished instances are not run again)',
  builder: options,
  run: resume,
};
