// `orchestrate cancel <run> [--instance KEY]`: cancel one instance of a live run (it ends
// `cancelled`, the run goes on, its dependants follow on_failure), or without --instance the
// whole run (like Ctrl-C in its terminal: sessions kept, `orchestrate resume` continues it).
import type { CliCommand } from '../command.js';
import { givenOnce } from '../flag-values.js';
import { sendRunControl } from '../run-control-command.js';
import { RUN_ARG, RUN_DIR_OPTION } from '../locate-run.js';

export const cancelCommand: CliCommand = {
  command: 'cancel <run>',
  describe: 'Cancel an instance of a live run (--instance KEY), or the whole run (resumable, like Ctrl-C)',
  builder: (y) =>
    y
      .positional('run', RUN_ARG)
      .option('instance', {
        type: 'string',
        describe: 'Instance key (as in run.jsonl `key`, e.g. fix.alpha); without it the whole run is cancelled',
      })
      .option('run-dir', RUN_DIR_OPTION)
      .check(givenOnce('instance', 'run-dir'))
      .example('orchestrate cancel 20260101-1200-ab12 --instance fix.alpha', 'end one instance; the run goes on')
      .example('orchestrate cancel 20260101-1200-ab12', 'interrupt the run; `orchestrate resume` continues it'),
  run: (args, ctx) =>
    sendRunControl(args, ctx, 'cancel', (by) =>
      typeof args.instance === 'string'
        ? { action: 'cancel', instance: args.instance, by }
        : { action: 'cancel_run', by },
    ),
};
