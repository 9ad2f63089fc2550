// `orchestrate report <run>`: writes report.html (self-contained: timeline, task graph, usage,
// conversations, plan) into the run folder and prints its path.
import { writeHtmlReport } from '../../display/html-report.js';
import { EXIT } from '../cli-io.js';
import type { CliCommand } from '../command.js';
import { givenOnce } from '../flag-values.js';
import { locateRunArg, RUN_ARG, RUN_DIR_OPTION } from '../locate-run.js';

export const reportCommand: CliCommand = {
  command: 'report <run>',
  describe: 'Write report.html (timeline, task graph, usage, conversations, plan) into the run folder',
  builder: (y) => y.positional('run', RUN_ARG).option('run-dir', RUN_DIR_OPTION).check(givenOnce('run-dir')),
  run: async (args, ctx) => {
    const runDir = locateRunArg(args, ctx);
    if (runDir === undefined) return EXIT.usage;
    let file: string;
    try {
      file = writeHtmlReport(runDir);
    } catch (e) {
      ctx.stderr(
        `orchestrate: could not write the report into ${runDir}: ${(e as Error).message}\n  hint: check that the run folder is writable\n`,
      );
      return EXIT.taskFailed;
    }
    ctx.stdout(`${file}\n`);
    return EXIT.ok;
  },
};
