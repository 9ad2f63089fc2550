// run_recipe and resume: start a run (or continue one) as a process of its own with the service's
// launchRun / launchResume (service/launch-run.ts, which checks first what the process would
// refuse) and return at once with its id, or, with `wait: true`, follow it to its end while
// sending progress notifications (run-waiter.ts). A refusal comes back as a tool error worded for
// the calling agent (recipe problems at file:line:col). resume with `dry_run: true` says what a
// resume would do (service/resume-preview.ts) and starts nothing.
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { z } from 'zod';
import type { countStatuses } from '../run/run-fold.js';
import { type LaunchWhere, launchResume, launchRun } from '../service/launch-run.js';
import { MCP_SERVER_DEFAULTS } from '../service/mcp-server-defaults.js';
import { LAUNCH_LOG, type LaunchedRun } from '../service/run-launcher.js';
import { controlSocketPath } from '../run/run-control-socket.js';
import { RUN_LOG } from '../run/run-store.js';
import { previewResume, resumePreviewText } from '../service/resume-preview.js';
import { resumeOverridesOf } from '../service/run-request.js';
import { runStatus } from '../service/show-run.js';
import { ProgressSender, waitForRun, type WaitEnd } from './run-waiter.js';
import {
  locateRun,
  overrideArgs,
  overridesOf,
  problemsText,
  recipeArgs,
  runArg,
  runDirArg,
  runRequestOf,
  runsDirOf,
} from './tool-args.js';
import { defineTool, inToolTerms, ToolError, type ServerContext, type ToolCall, type ToolReply } from './tool-table.js';

const waitArg = z
  .boolean()
  .default(false)
  .describe(
    'false (default): return as soon as the run has started, with its id. true: return when the run ends, with its final status; progress notifications go out meanwhile (at least one a second by default), so keep the request timeout reset on progress',
  );

/** The missing-key message, with the ways forward said for an MCP server rather than a terminal. */
function missingKeyText(message: string): string {
  return message
    .replace('--provider scripted', 'provider: "scripted"')
    .replace(
      'export ANTHROPIC_API_KEY=sk-ant-...',
      "set ANTHROPIC_API_KEY in this MCP server's environment (the env of its entry in your client's MCP config)",
    );
}

function headline(status: Record<string, unknown>): string {
  const c = status.counts as ReturnType<typeof countStatuses>;
  const secs = typeof status.durationMs === 'number' ? ` in ${(status.durationMs / 1000).toFixed(1)}s` : '';
  // Once the run is over (or its process is gone) nothing runs: what never ended is unfinished, as `show` says.
  const live = status.status === 'running' || status.status === 'waiting';
  const open = live ? `${c.running} running, ${c.queued} queued` : `${c.running + c.queued} unfinished`;
  return `run ${String(status.runId)}: ${String(status.status)}${secs}; instances: ${c.done} done, ${c.failed} failed, ${c.cancelled} cancelled, ${c.notPicked ? `${c.notPicked} not picked, ` : ''}${c.skipped} skipped, ${open}`;
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

/**
 * Until the run can be followed and driven: its log exists (a run is found by its log) and its
 * coordinator listens on the control socket, or said in the log that it cannot. The launch returns
 * once the process holds its run folder, a moment before both, so a run_status or cancel right
 * after run_recipe was refused ("no run", "does not answer on its control socket") with the id it
 * had just returned. Ends early when the process ends or the call is cancelled.
 */
async function untilDrivable(run: LaunchedRun, signal: AbortSignal): Promise<void> {
  const log = join(run.runDir, RUN_LOG);
  const ready = (): boolean =>
    existsSync(log) &&
    (existsSync(controlSocketPath(run.runDir)) || readFileSync(log, 'utf8').includes('"control_unavailable"'));
  const deadline = Date.now() + MCP_SERVER_DEFAULTS.startTimeoutMs;
  while (!ready() && !run.hasExited() && !signal.aborted && Date.now() < deadline)
    await new Promise((done) => setTimeout(done, MCP_SERVER_DEFAULTS.pollMs));
}

/**
 * Where and how this server starts a run's process: in its folder and environment, through its
 * launcher, given up with the tool call; the client hears `starting` while the process starts.
 */
function launchWhere(ctx: ServerContext, call: ToolCall, progress: ProgressSender, starting: string): LaunchWhere {
  return {
    cwd: ctx.cwd,
    env: ctx.env,
    launcher: ctx.launcher,
    signal: call.signal,
    onWait: () => progress.heartbeat(ctx.progressMs, () => starting),
  };
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
    const progress = new ProgressSender(call);
    const launched = await launchRun(
      { ...runRequestOf(args), runsDir: runsDirOf(ctx, args.run_dir) },
      launchWhere(ctx, call, progress, 'starting the run process'),
    );
    if (!launched.ok) {
      if (launched.code === 'problems') throw new ToolError(problemsText(launched.problems));
      if (launched.code === 'missing_api_key') throw new ToolError(missingKeyText(launched.message));
      if (launched.code === 'launch_failed') throw new ToolError(`the run did not start: ${launched.message}`);
      throw new ToolError(launched.message);
    }
    await untilDrivable(launched.run, call.signal);
    ctx.log(`started run ${launched.run.runId} (pid ${launched.run.pid}) of ${launched.recipeFile}`);
    if (!args.wait) return startedReply(launched.run, 'started');
    return waitAndReport(launched.run, launched.startedAt, progress, call, ctx);
  },
});

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
    dry_run: z
      .boolean()
      .optional()
      .describe(
        'Say what the resume would do and start nothing (as `orchestrate resume --dry-run`): the instances kept and those run again, the spend so far against the budget, and the pairs that may touch the same files. Nothing in the run folder is written',
      ),
    wait: waitArg,
  },
  annotations: { readOnlyHint: false, destructiveHint: false, openWorldHint: true },
  handler: async (args, call, ctx) => {
    const runDir = locateRun(ctx, args.run, args.run_dir);
    const request = {
      ...resumeOverridesOf(overridesOf(args)),
      ...(args.retry ? { retry: args.retry } : {}),
      ...(args.reload_recipe ? { reloadRecipe: true } : {}),
    };
    if (args.dry_run) {
      const preview = await previewResume({ run: runDir, ...request }, { cwd: ctx.cwd, env: ctx.env });
      if (!preview.ok)
        throw new ToolError(preview.code === 'problems' ? problemsText(preview.problems) : preview.message);
      return {
        text: inToolTerms(resumePreviewText(preview.preview), ctx.cwd),
        data: { ok: true, dryRun: true, ...preview.preview },
      };
    }
    const progress = new ProgressSender(call);
    const launched = await launchResume(
      runDir,
      request,
      launchWhere(ctx, call, progress, 'starting the resume process'),
    );
    if (!launched.ok) {
      if (launched.code === 'succeeded') throw new ToolError(`${launched.message} run_status shows its results.`);
      if (launched.code === 'running') throw new ToolError(`${launched.message} run_status and run_events follow it.`);
      if (launched.code === 'launch_failed') throw new ToolError(`the run was not resumed: ${launched.message}`);
      throw new ToolError(launched.message);
    }
    await untilDrivable(launched.run, call.signal);
    ctx.log(`resumed run ${launched.run.runId} (pid ${launched.run.pid})`);
    // What the resume did with the recipe's files (changed ones are named, not used): the client is told too.
    const note = launched.inputsNote;
    const reply = args.wait
      ? await waitAndReport(launched.run, launched.startedAt, progress, call, ctx)
      : startedReply(launched.run, 'resumed');
    return note ? { ...reply, text: `${note}\n${reply.text}` } : reply;
  },
});
