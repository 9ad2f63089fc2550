// Continuing a run in this process from its log, as `orchestrate resume` does (and the process a
// detached resume starts: launch-run.ts, for the MCP server's resume tool and the web view):
//
//   resumeRun(request: ResumeRequest, exec: RunExecution, by: ResumeActor): Promise<RunResult>
//     { ok: true, outcome } once the run ends or is interrupted again, or { ok: false, code, ... }
//     (`usage`: no such run, a run another process holds, an unwritable run folder, nothing left)
//
// Finished instances keep their results, interrupted ones continue from their session leaf,
// failed ones run again, cancelled ones only when named in `retry`. Nothing here prints or exits.
import { resumeRunDir } from '../orchestrator/run-recipe.js';
import { executeRun, type RunExecution, type RunResult } from './run-execution.js';
import { type ResumeRequest, resumeOverridesOf } from './run-request.js';

/**
 * Who the run log names for what this resume decides for the user: `retry` re-opening cancelled
 * instances, `reloadRecipe` taking the recipe as it is now (e.g. controlBy('resume', env)).
 */
export interface ResumeActor {
  retry: string;
  reloadRecipe: string;
}

/** Finds the run the request names and continues it to its end. */
export function resumeRun(request: ResumeRequest, exec: RunExecution, by: ResumeActor): Promise<RunResult> {
  const retry = (request.retry ?? []).filter((k) => k.trim() !== '');
  return executeRun(
    (opts) =>
      resumeRunDir(request.run, {
        ...opts,
        ...(retry.length ? { retry, retryBy: by.retry } : {}),
        ...(request.reloadRecipe === true ? { reloadRecipeBy: by.reloadRecipe } : {}),
        // What the user should know about the inputs (files changed since the capture, an older run).
        onNotice: (text: string) => exec.onNotice?.(`orchestrate: ${text}\n`),
        cwd: exec.cwd,
        overrides: resumeOverridesOf(request),
        ...(request.runsDir !== undefined ? { runsDir: request.runsDir } : {}),
      }),
    exec,
  );
}
