// `orchestrate runs [--run-dir D]`: the recorded runs, newest first (id, recipe, start, status, cost).
import { existsSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { defaultRunsDir } from '../../display/find-run.js';
import { formatRunsTable } from '../../display/runs-table.js';
import { RUN_LOG } from '../../run/run-store.js';
import { makePainter, shouldUseColor } from '../../display/terminal-text.js';
import { listRunsIn } from '../../service/list-runs.js';
import { EXIT } from '../cli-io.js';
import type { CliCommand } from '../command.js';
import { givenOnce } from '../flag-values.js';
import { holdsRuns, RUN_DIR_OPTION, runsDirArg } from '../locate-run.js';

/**
 * Where the runs probably are when a runs folder holds none: --run-dir naming one run's folder, or
 * the .orchestrate folder above the runs, or a command typed in a subfolder of the project. The
 * hint used to be the same "pass --run-dir DIR" in every case.
 */
function whereRunsAre(runsDir: string, cwd: string): string {
  if (!existsSync(runsDir)) {
    for (let dir = dirname(resolve(cwd)); ; dir = dirname(dir)) {
      if (holdsRuns(defaultRunsDir(dir)))
        return `there is no such folder; runs started in ${dir} are in ${defaultRunsDir(dir)}: orchestrate runs --run-dir ${defaultRunsDir(dir)}`;
      if (dirname(dir) === dir) break;
    }
  } else if (existsSync(join(runsDir, RUN_LOG)))
    return `${runsDir} is the folder of one run, not a folder of runs: orchestrate runs --run-dir ${dirname(runsDir)}, or orchestrate show ${runsDir}`;
  else if (holdsRuns(join(runsDir, 'runs')))
    return `the runs are in ${join(runsDir, 'runs')}: orchestrate runs --run-dir ${join(runsDir, 'runs')}`;
  return 'runs are recorded where `orchestrate <recipe.yaml>` ran; pass --run-dir DIR to look elsewhere';
}

export const runsCommand: CliCommand = {
  command: 'runs',
  describe: 'List recorded runs, newest first',
  builder: (y) =>
    y
      .option('run-dir', RUN_DIR_OPTION)
      .check(givenOnce('run-dir'))
      .option('json', { type: 'boolean', default: false, describe: 'Print the list as JSON on stdout' })
      .option('color', {
        type: 'boolean',
        default: true,
        describe: 'Colour the table (--no-color, or NO_COLOR=1, turns it off)',
      }),
  run: async (args, ctx) => {
    const runsDir = runsDirArg(args, ctx);
    const listed = listRunsIn(runsDir);
    if (!listed.ok) {
      ctx.stderr(`orchestrate: ${listed.message}\n`);
      return EXIT.usage;
    }
    const runs = listed.runs;
    if (args.json === true) {
      ctx.stdout(`${JSON.stringify(runs, null, 2)}\n`);
      return EXIT.ok;
    }
    if (runs.length === 0) {
      ctx.stdout(`no runs in ${runsDir}\n  hint: ${whereRunsAre(runsDir, ctx.cwd)}\n`);
      return EXIT.ok;
    }
    const painter = makePainter(shouldUseColor({ isTTY: ctx.isTTY, noColorFlag: args.color === false, env: ctx.env }));
    ctx.stdout(formatRunsTable(runs, painter));
    return EXIT.ok;
  },
};
