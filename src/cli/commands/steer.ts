// `orchestrate steer <run> --instance KEY "message"`: deliver a steering message into a running
// agent of a live run; the agent reads it after its current step (a pair: its worker, unless
// the key names a member, e.g. build@planner).
import type { CliCommand } from '../command.js';
import { givenOnce } from '../flag-values.js';
import { sendRunControl } from '../run-control-command.js';
import { RUN_ARG, RUN_DIR_OPTION } from '../locate-run.js';

export const steerCommand: CliCommand = {
  command: 'steer <run> <message..>',
  describe: 'Send a steering message to a running instance of a live run',
  builder: (y) =>
    y
      .positional('run', RUN_ARG)
      .positional('message', {
        type: 'string',
        array: true,
        describe: 'The message (quote it, or its words are joined with spaces)',
        demandOption: true,
      })
      .option('instance', {
        type: 'string',
        demandOption: true,
        describe: 'Instance key (as in run.jsonl `key`, e.g. fix.alpha, or build@planner for a pair member)',
      })
      .option('run-dir', RUN_DIR_OPTION)
      .check(givenOnce('instance', 'run-dir'))
      .check((a) => {
        const words = Array.isArray(a.message) ? a.message.map(String) : [String(a.message ?? '')];
        if (words.join(' ').trim() === '')
          throw new Error(
            'the steering message is empty: give its text, e.g. orchestrate steer <run> --instance fix.alpha "stop and summarise"',
          );
        return true;
      })
      .example(
        'orchestrate steer 20260101-1200-ab12 --instance fix.alpha "only touch src/"',
        'the agent reads it after its current step',
      ),
  run: (args, ctx) => {
    const text = (Array.isArray(args.message) ? args.message.map(String) : [String(args.message)]).join(' ');
    return sendRunControl(args, ctx, 'steer', (by) => ({ action: 'steer', instance: String(args.instance), text, by }));
  },
};
