// A run or a resume started as a process of its own (run-launcher.ts), for callers that must not
// hold the run themselves: the MCP server's run_recipe / resume tools, and the web view. The
// process is `orchestrate run` / `resume`, which runs start-run.ts / resume-run.ts; what it would
// refuse at its start is checked here first, so the caller gets a reason as data (recipe problems
// at file:line:col, a missing API key, an unwritable folder) rather than a process that died:
//
//   launchRun(request: RunRequest, where: LaunchWhere): Promise<LaunchRunResult>
//     { ok: true, run: LaunchedRun, recipeFile, startedAt } once the process holds its new run
//     folder (startedAt: the time just before the process started, for following its events)
//   launchResume(runDir: string, request: Omit<ResumeRequest, 'run' | 'runsDir'>, where: LaunchWhere)
//     : Promise<LaunchResumeResult>
//     { ok: true, run, startedAt, inputsNote? } once the process holds the run folder (`runDir`: located
//     with locate-run.ts); inputsNote words what the resume did with files changed since the start
//
// Failures are { ok: false, code, message } (codes below; `problems` carries the problems).
import { join, resolve } from 'node:path';
import { resumeInputsNote } from '../display/plain-log.js';
import { defaultRunsDir, missingApiKey } from '../orchestrator/run-recipe.js';
import type { RecipeProblem } from '../recipe/index.js';
import { runFolderWriteProblem, runsDirWriteProblem } from '../run/run-dir-access.js';
import { describeHolder, liveLeaseHolder } from '../run/run-lease.js';
import { readRunLog } from '../run/run-store.js';
import type { ServiceEnv } from './dry-run.js';
import type { LaunchedRun, RunLauncher } from './run-launcher.js';
import { type ResumeRequest, type RunRequest, resumeCommandArgs, runCommandArgs } from './run-request.js';
import { runStatus } from './show-run.js';
import { prepareRun } from './start-run.js';

/** Where the process starts and who starts it. */
export interface LaunchWhere extends ServiceEnv {
  launcher: RunLauncher;
  /** Stops waiting for the process to take its run folder (the process is then stopped too). */
  signal?: AbortSignal;
  /** Called while waiting for the process to take its run folder (progress for a client). */
  onWait?: (elapsedMs: number) => void;
}

/**
 * `missing_api_key`: an agent calls the Anthropic API and ANTHROPIC_API_KEY is not set (the
 * message says it the command line's way);
 * `runs_dir_unwritable`; `launch_failed`: the process ended (or was stopped) before taking a run
 * folder, the message holds its output.
 */
export type LaunchRunResult =
  | { ok: true; run: LaunchedRun; recipeFile: string; startedAt: number }
  | { ok: false; code: 'problems'; problems: readonly RecipeProblem[] }
  | { ok: false; code: 'missing_api_key'; message: string }
  | { ok: false; code: 'runs_dir_unwritable' | 'launch_failed'; message: string };

/** `succeeded` and `running`: nothing to resume (the run's end is written, or a coordinator holds it). */
export type LaunchResumeResult =
  | { ok: true; run: LaunchedRun; startedAt: number; inputsNote?: string }
  | {
      ok: false;
      code: 'succeeded' | 'running' | 'run_dir_unwritable' | 'launch_failed';
      message: string;
      runId: string;
    };

/** Starts a new run of the request's recipe as a process of its own; resolves once it has its run folder. */
export async function launchRun(request: RunRequest, where: LaunchWhere): Promise<LaunchRunResult> {
  const runsDir = request.runsDir !== undefined ? resolve(where.cwd, request.runsDir) : defaultRunsDir(where.cwd);
  const prepared = prepareRun(request, where);
  if (!prepared.ok) return prepared;
  const missing = missingApiKey(prepared.recipe, where.env);
  if (missing) return { ok: false, code: 'missing_api_key', message: missing };
  const unwritable = runsDirWriteProblem(runsDir);
  if (unwritable) return { ok: false, code: 'runs_dir_unwritable', message: unwritable };
  const startedAt = Date.now();
  const launched = await where.launcher.launch({
    args: runCommandArgs({ ...request, recipe: prepared.recipe.file, runsDir }),
    cwd: where.cwd,
    env: where.env,
    runsDir,
    ...(where.signal ? { signal: where.signal } : {}),
    ...(where.onWait ? { onWait: where.onWait } : {}),
  });
  if (!launched.ok) return { ok: false, code: 'launch_failed', message: launched.message };
  return { ok: true, run: launched.run, recipeFile: prepared.recipe.file, startedAt };
}

/** The inputs note of the run_resume written since `sinceTs` (display/plain-log.ts words it), if any. */
function inputsNoteSince(runDir: string, sinceTs: number): string | undefined {
  const resumed = readRunLog(join(runDir, 'run.jsonl'))
    .events.filter((e) => e.type === 'run_resume' && e.ts >= sinceTs)
    .at(-1);
  const note = resumed?.type === 'run_resume' ? resumeInputsNote(resumed.inputs) : undefined;
  return note ? `Inputs: ${note}.` : undefined;
}

/** Continues the run in `runDir` as a process of its own; resolves once it holds the run folder. */
export async function launchResume(
  runDir: string,
  request: Omit<ResumeRequest, 'run' | 'runsDir'>,
  where: LaunchWhere,
): Promise<LaunchResumeResult> {
  const runId = runDir.split('/').pop() ?? runDir;
  // The log first: a run whose run_end is written has ended, even while its coordinator has not
  // let go of the lease yet (right after a waiting caller saw its end, the lease may still be held).
  const before = runStatus(runDir);
  if (before.status === 'succeeded')
    return {
      ok: false,
      code: 'succeeded',
      runId: String(before.runId),
      message: `run ${String(before.runId)} already succeeded; there is nothing to resume.`,
    };
  const holder = liveLeaseHolder(runDir);
  if (holder)
    return {
      ok: false,
      code: 'running',
      runId,
      message: `run ${runId} is running (held by ${describeHolder(holder)}); there is nothing to resume.`,
    };
  const unwritable = runFolderWriteProblem(runDir);
  if (unwritable) return { ok: false, code: 'run_dir_unwritable', runId, message: unwritable };
  const startedAt = Date.now();
  const launched = await where.launcher.launch({
    args: resumeCommandArgs({ ...request, run: runDir }),
    cwd: where.cwd,
    env: where.env,
    runDir,
    ...(where.signal ? { signal: where.signal } : {}),
    ...(where.onWait ? { onWait: where.onWait } : {}),
  });
  if (!launched.ok) return { ok: false, code: 'launch_failed', runId, message: launched.message };
  const inputsNote = inputsNoteSince(runDir, startedAt);
  return { ok: true, run: launched.run, startedAt, ...(inputsNote ? { inputsNote } : {}) };
}
