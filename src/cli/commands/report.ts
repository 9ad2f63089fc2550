// `orchestrate report <run>`: writes report.html (self-contained: timeline, task graph, usage,
// conversations, plan) into the run folder and prints its path.
import { resolve } from 'node:path';
import { defaultRunsDir, findRun } from '../../display/find-run.js';
import { writeHtmlReport } from '../../display/html-report.js';
import { EXIT } from '../cli-io.js';
import { type CliCommand } from '../command.js';

export const reportCommand: CliCommand = {
  command: 'report <run>',
  describe: 'Write report.html (timeline, task graph, usage, conversations, plan) into the run folder',
  builder: (y) =>
    y
      .positional('run', { type: 'string', describe: 'Run id, unique prefix of one, or run folder path', demandOption: true })
      .option('run-dir', { type: 'string', describe: 'Folder holding run records (default .orchestrate/runs)' }),
  run: async (args, ctx) => {
    const runsDir = typeof args['run-dir'] === 'string' ? resolve(ctx.cwd, args['run-dir']) : defaultRunsDir(ctx.cwd);
    const located = findRun(runsDir, String(args.run), ctx.cwd);
    if (!located.ok) {
      ctx.stderr(`orchestrate: ${located.message}\n`);
      return EXIT.usage;
    }
    let file: string;
    try {
      file = writeHtmlReport(located.dir);
    } catch (e) {
      ctx.stderr(`orchestrate: could not write the report into ${located.dir}: ${(e as Error).message}\n  hint: check that the run folder is writable\n`);
      return EXIT.taskFailed;
    }
    ctx.stdout(`${file}\n`);
    return EXIT.ok;
  },
};
