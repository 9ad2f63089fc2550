// Turns what a user typed after `show` / `report` (a run id, a unique prefix of one, or a run
// folder's path) into a run folder, or into an error that lists the recent runs to choose from.
import { existsSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { ORCHESTRATOR_DEFAULTS } from '../orchestrator/defaults.js';
import { RUN_LOG, listRuns, resolveRunDir } from '../run/run-store.js';
import { DISPLAY_DEFAULTS } from './defaults.js';
import { formatCost, formatDateTime } from './format-units.js';

/** `.orchestrate/runs` under `cwd`: where runs started from that folder are recorded. */
export function defaultRunsDir(cwd: string): string {
  return join(cwd, ORCHESTRATOR_DEFAULTS.stateDirName, ORCHESTRATOR_DEFAULTS.runsDirName);
}

export type FoundRun = { ok: true; dir: string } | { ok: false; message: string };

/**
 * `cwd` resolves a relative folder path the way the user typed it; `listAll` names what lists every
 * run for this reader (the CLI's `orchestrate runs`, the MCP server's list_runs tool).
 */
export function findRun(
  runsDir: string,
  query: string,
  cwd: string = process.cwd(),
  listAll = '`orchestrate runs`',
): FoundRun {
  const asPath = resolve(cwd, query);
  if (existsSync(join(asPath, RUN_LOG))) return { ok: true, dir: asPath };
  const dir = resolveRunDir(runsDir, query);
  if (dir) return { ok: true, dir };
  const runs = listRuns(runsDir);
  const lines = [`no run "${query}" in ${runsDir}`];
  const ambiguous = runs.filter((r) => r.runId.startsWith(query));
  if (ambiguous.length > 1)
    lines.push(
      `  "${query}" matches ${ambiguous.length} runs; give more of the id: ${ambiguous.map((r) => r.runId).join(', ')}`,
    );
  if (runs.length === 0) {
    lines.push('  there are no runs there yet; pass --run-dir DIR to look elsewhere, or the path of a run folder');
  } else {
    lines.push('  recent runs:');
    for (const r of runs.slice(0, DISPLAY_DEFAULTS.recentRunsInErrors)) {
      lines.push(`    ${r.runId}  ${r.name}  ${formatDateTime(r.startedAt)}  ${r.status}  ${formatCost(r.cost)}`);
    }
    lines.push(`  hint: ${listAll} lists them all; a unique prefix of an id is enough`);
  }
  return { ok: false, message: lines.join('\n') };
}
