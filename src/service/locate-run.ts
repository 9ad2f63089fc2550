// Finding the run a user names (a run id, a unique prefix of one, or a run folder's path) under a
// runs folder, shared by the CLI's `<run>` argument and the MCP tools' `run`: the folder, or why
// not as a code with the message (which lists the recent runs to choose from).
import { findRun } from '../display/find-run.js';
import { runsDirReadProblem } from '../run/run-dir-access.js';

export type LocatedRun =
  | { ok: true; dir: string }
  | { ok: false; code: 'runs_dir_unreadable' | 'no_such_run'; message: string };

/** `listAll` names, in the message, what lists every run for this caller's reader. */
export function locateRun(runsDir: string, query: string, cwd: string, listAll?: string): LocatedRun {
  const unreadable = runsDirReadProblem(runsDir);
  if (unreadable) return { ok: false, code: 'runs_dir_unreadable', message: unreadable };
  const found = findRun(runsDir, query, cwd, listAll);
  return found.ok ? found : { ok: false, code: 'no_such_run', message: found.message };
}
