// The run folder a live `orchestrate` process is writing under `runsDir`. Only a folder holding
// run.jsonl counts: while a run starts, the runs folder also briefly holds the CLI's
// `.write-check-*` probe file (run-dir-access.ts), which sorts first and is not a run.
import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';

/** The name (run id) of the first run folder in `runsDir`, or undefined while there is none. */
export function runFolderName(runsDir: string): string | undefined {
  if (!existsSync(runsDir)) return undefined;
  return readdirSync(runsDir)
    .sort()
    .find((n) => existsSync(join(runsDir, n, 'run.jsonl')));
}
