// `orchestrate runs [--run-dir D]`: the recorded runs, newest first (id, recipe, start, status, cost).
import { formatRunsTable } from '../../display/runs-table.js';
import { makePainter, shouldUseColor } from '../../display/terminal-text.js';
import { listRunsIn } from '../../service/list-runs.js';
import { EXIT } from '../cli-io.js';
import type { CliCommand } from '../command.js';
import { givenOnce } from '../flag-values.js';
import { RUN_DIR_OPTION, runsDirArg } from '../locate-run.js';

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
      ctx.stdout(
        `no runs in ${runsDir}\n  hint: runs are recorded where \`orchestrate <recipe.yaml>\` ran; pass --run-dir DIR to look elsewhere\n`,
      );
      return EXIT.ok;
    }
    const painter = makePainter(shouldUseColor({ isTTY: ctx.isTTY, noColorFlag: args.color === false, env: ctx.env }));
    ctx.stdout(formatRunsTable(runs, painter));
    return EXIT.ok;
  },
};
