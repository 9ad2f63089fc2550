// run_recipe and resume: start a run (or continue one) as a process of its own (run-launcher.ts)
// and return at once with its id, or, with `wait: true`, follow it to its end while sending
// progress notifications (run-waiter.ts). Everything a terminal run checks before it starts
// (recipe problems, a missing API key, an unwritable runs folder) is checked here first, so the
// caller gets it as a tool error with file:line:col rather than as a process that died.
import { join } from 'node:path';
import { z } from 'zod';
import { resumeInputsNote } from '../display/plain-log.js';
import { missingApiKey } from '../orchestrator/run-recipe.js';
import { loadRecipe } from '../recipe/index.js';
import { runsDirWriteProblem, runFolderWriteProblem } from '../run/run-dir-access.js';
import type { countStatuses } from '../run/run-fold.js';
import { describeHolder, liveLeaseHolder } from '../run/run-lease.js';
import { readRunLog } from '../run/run-store.js';
import { runStatus } from '../service/show-run.js';
import { LAUNCH_LOG, type LaunchedRun } from '../service/run-launcher.js';
import { ProgressSender, waitForRun, type WaitEnd } from './run-waiter.js';
import {
  loadOptionsOf,
  locateRun,
  overrideArgs,
  overrideFlags,
  problemsText,
  recipeArgs,
  runArg,
  runDirArg,
  runsDirOf,
  setAssignments,
} from './tool-args.js';
import { defineTool, ToolError, type ServerContext, type ToolCall, type ToolReply } from './tool-table.js';

const waitArg = z
  .boolean()
  .default(false)
  .describe(
    'false (default): return as soon as the run has started, with its id. true: return when the run ends, with its final status; progress notifications go out meanwhile (at least one a second by default), so keep the request timeout reset on progress',
  );

function headline(status: Record<string, unknown>): string {
  const c = status.counts as ReturnType<typeof countStatuses>;
  const secs = typeof status.durationMs === 'number' ? ` in ${(status.durationMs / 1000).toFixed(1)}s` : '';
  return `run ${String(status.runId)}: ${String(status.status)}${secs}; instances: ${c.done} done, ${c.failed} failed, ${c.cancelled} cancelled, ${c.skipped} skipped, ${c.running} running, ${c.queued} queued`;
}

function startedReply(run: LaunchedRun, verb: string): ToolReply {
  const data = {
    runId: run.runId,
    runDir: run.runDir,
    pid: run.pid,
    status: 'running',
    next: 'run_events (from cursor "0") and run_status follow it; cancel and steer drive its instances; it keeps running if this server stops',
  };
  return {
    text: `run ${run.runId} ${verb} (process ${run.pid}, folder ${run.runDir}).\n${JSON.stringify(data, null, 2)}`,
    data,
  };
}

async function waitAndReport(
  run: LaunchedRun,
  sinceTs: number,
  progress: ProgressSender,
  call: ToolCall,
  ctx: ServerContext,
): Promise<ToolReply> {
  const end: WaitEnd = await waitForRun(run, sinceTs, progress, ctx.progressMs, call.signal);
  const status = runStatus(run.runDir);
  if (end === 'cancelled')
    return {
      text: `stopped waiting (the request was cancelled); run ${run.runId} goes on: ${headline(status)}`,
      data: status,
    };
  if (end === 'process_exited') {
    throw new ToolError(
      `the process of run ${run.runId} (pid ${run.pid}) exited with ${run.exitCode() === null ? 'a signal' : `code ${String(run.exitCode())}`} before the run ended; ` +
        `its output is in ${join(run.runDir, LAUNCH_LOG)}. ${headline(status)}. The resume tool continues it.`,
    );
  }
  return { text: `${headline(status)}\n${JSON.stringify(status, null, 2)}`, data: status };
}

export const runRecipeTool = defineTool({
  name: 'run_recipe',
  title: 'Run a recipe',
  description:
    'Start an orchestrate run of a recipe file: its tasks fan out to agents per the recipe. The run is a process of its own, recorded in a run folder, ' +
    'and keeps going if this server stops. Returns its run id at once, or with wait: true its final status when it ends. ' +
    'Recipe problems come back as file:line:col errors before anything starts; dry_run shows the plan and the cost estimate first.',
  input: { ...recipeArgs, ...overrideArgs, run_dir: runDirArg, wait: waitArg },
  annotations: { readOnlyHint: false, destructiveHint: false, openWorldHint: true },
  handler: async (args, call, ctx) => {
    const runsDir = runsDirOf(ctx, args.run_dir);
    const loaded = loadRecipe(args.recipe, loadOptionsOf(args, ctx));
    if (!loaded.ok) throw new ToolError(problemsText(loaded.problems));
    const missing = missingApiKey(loaded.recipe, ctx.env);
    if (missing)
      throw new ToolError(
        missing
          .replace('--provider scripted', 'provider: "scripted"')
          .replace(
            'export ANTHROPIC_API_KEY=sk-ant-...',
            "set ANTHROPIC_API_KEY in this MCP server's environment (the env of its entry in your client's MCP config)",
          ),
      );
    const unwritable = runsDirWriteProblem(runsDir);
    if (unwritable) throw new ToolError(unwritable);
    const progress = new ProgressSender(call);
    const sinceTs = Date.now();
    const launched = await ctx.launcher.launch({
      args: [
        'run',
        loaded.recipe.file,
        '--run-dir',
        runsDir,
        '--no-color',
        ...setAssignments(args.inputs).flatMap((s) => ['--set', s]),
        ...overrideFlags(args),
      ],
      cwd: ctx.cwd,
      env: ctx.env,
      runsDir,
      signal: call.signal,
      onWait: () => progress.heartbeat(ctx.progressMs, () => 'starting the run process'),
    });
    if (!launched.ok) throw new ToolError(`the run did not start: ${launched.message}`);
    ctx.log(`started run ${launched.run.runId} (pid ${launched.run.pid}) of ${loaded.recipe.file}`);
    if (!args.wait) return startedReply(launched.run, 'started');
    return waitAndReport(launched.run, sinceTs, progress, call, ctx);
  },
});

/** The inputs note of the run_resume this launch wrote (display/plain-log.ts words it), if any. */
function inputsNoteSince(runDir: string, sinceTs: number): string | undefined {
  const resumed = readRunLog(join(runDir, 'run.jsonl'))
    .events.filter((e) => e.type === 'run_resume' && e.ts >= sinceTs)
    .at(-1);
  const note = resumed?.type === 'run_resume' ? resumeInputsNote(resumed.inputs) : undefined;
  return note ? `Inputs: ${note}.` : undefined;
}

export const resumeTool = defineTool({
  name: 'resume',
  title: 'Resume a run',
  description:
    'Continue an interrupted, failed, partial or budget-exhausted run from its log, as `orchestrate resume` does: finished instances keep their results, interrupted ones continue from their sessions, ' +
    'failed ones run again; cancelled ones stay cancelled unless named in retry. Returns at once, or with wait: true when the run ends.',
  input: {
    run: runArg,
    run_dir: runDirArg,
    concurrency: overrideArgs.concurrency,
    budget_usd: overrideArgs.budget_usd.describe(
      "Replaces the run's budget with this total in US dollars; the spend so far counts against it (raise it to finish a budget-exhausted run)",
    ),
    budget_tokens: overrideArgs.budget_tokens.describe(
      "Replaces the run's token budget with this total; the tokens used so far count against it",
    ),
    retry: z
      .array(z.string().min(1))
      .optional()
      .describe('Cancelled instances to run again (keys as run_status lists them)'),
    reload_recipe: z
      .boolean()
      .optional()
      .describe(
        'Use the recipe and its files as they are now, validated and captured again (as `orchestrate resume --reload-recipe`); otherwise the copies captured when the run started are used and changed files are named. Only when the user says they changed the recipe themselves',
      ),
    wait: waitArg,
  },
  annotations: { readOnlyHint: false, destructiveHint: false, openWorldHint: true },
  handler: async (args, call, ctx) => {
    const runDir = locateRun(ctx, args.run, args.run_dir);
    // The log first: a run whose run_end is written has ended, even while its coordinator has not
    // let go of the lease yet (right after a `wait: true` returned, the lease may still be held).
    const before = runStatus(runDir);
    if (before.status === 'succeeded')
      throw new ToolError(
        `run ${String(before.runId)} already succeeded; there is nothing to resume. run_status shows its results.`,
      );
    const holder = liveLeaseHolder(runDir);
    if (holder)
      throw new ToolError(
        `run ${runDir.split('/').pop()} is running (held by ${describeHolder(holder)}); there is nothing to resume. run_status and run_events follow it.`,
      );
    const unwritable = runFolderWriteProblem(runDir);
    if (unwritable) throw new ToolError(unwritable);
    const progress = new ProgressSender(call);
    const sinceTs = Date.now();
    const launched = await ctx.launcher.launch({
      args: [
        'resume',
        runDir,
        '--no-color',
        ...overrideFlags(args),
        ...(args.retry ?? []).flatMap((k) => ['--retry', k]),
        ...(args.reload_recipe ? ['--reload-recipe'] : []),
      ],
      cwd: ctx.cwd,
      env: ctx.env,
      runDir,
      signal: call.signal,
      onWait: () => progress.heartbeat(ctx.progressMs, () => 'starting the resume process'),
    });
    if (!launched.ok) throw new ToolError(`the run was not resumed: ${launched.message}`);
    ctx.log(`resumed run ${launched.run.runId} (pid ${launched.run.pid})`);
    // What the resume did with the recipe's files (changed ones are named, not used): the client is told too.
    const note = inputsNoteSince(runDir, sinceTs);
    const reply = args.wait
      ? await waitAndReport(launched.run, sinceTs, progress, call, ctx)
      : startedReply(launched.run, 'resumed');
    return note ? { ...reply, text: `${note}\n${reply.text}` } : reply;
  },
});
