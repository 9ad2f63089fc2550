// The runs recorded in a runs folder, newest first, shared by `orchestrate runs` and the MCP
// server's list_runs tool: the list as data, or a folder it may not read as a code with the reason.
import { runsDirReadProblem } from '../run/run-dir-access.js';
import { listRuns, type RunListing } from '../run/run-store.js';

export type RunList = { ok: true; runs: RunListing[] } | { ok: false; code: 'runs_dir_unreadable'; message: string };

export function listRunsIn(runsDir: string): RunList {
  const unreadable = runsDirReadProblem(runsDir);
  if (unreadable) return { ok: false, code: 'runs_dir_unreadable', message: unreadable };
  return { ok: true, runs: listRuns(runsDir) };
}
