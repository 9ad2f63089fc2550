// `orchestrate watch <run>`: the run view of a run from any terminal. While the run's coordinator
// is live (on this host) the keys act on it through the run's control socket; a finished run, or
// one nobody holds, opens read-only. Without a terminal: the plain log lines until the run ends.
import { shouldUseColor } from '../../display/terminal-text.js';
import { watchRun } from '../../display/watch-run.js';
import { connectRunControl } from '../../run/run-control-client.js';
import { EXIT } from '../cli-io.js';
import type { CliCommand } from '../command.js';
import { controlActor } from '../control-actor.js';
import { givenOnce } from '../flag-values.js';
import { locateRunArg, RUN_ARG, RUN_DIR_OPTION } from '../locate-run.js';

export const watchCommand: CliCommand = {
  command: 'watch <run>',
  describe: 'Watch a run from any terminal: its live view, and (while it runs) steer, cancel and retry its instances',
  builder: (y) =>
    y
      .positional('run', RUN_ARG)
      .option('run-dir', RUN_DIR_OPTION)
      .check(givenOnce('run-dir'))
      .option('color', {
        type: 'boolean',
        default: true,
        describe: 'Colour the view (--no-color, or NO_COLOR=1, turns it off)',
      })
      .example([
        [
          'orchestrate watch 20261203',
          'the run whose id starts with 20261203: ↑↓ select, Enter open, s steer, c cancel, r retry, q quit',
        ],
        ['orchestrate watch <run> | cat', 'no terminal: the log lines of the run as they come, until it ends'],
      ]),
  run: async (args, ctx) => {
    const runDir = locateRunArg(args, ctx);
    if (runDir === undefined) return EXIT.usage;
    // The view needs both ends of a terminal: keys from stdin, the frame on stderr.
    const interactive = process.stdin.isTTY === true && process.stderr.isTTY === true;
    return watchRun(runDir, {
      interactive,
      stream: interactive
        ? process.stderr
        : {
            write: (s: string) => {
              ctx.stdout(s);
              return true;
            },
          },
      input: interactive ? process.stdin : undefined,
      color: shouldUseColor({ isTTY: interactive, noColorFlag: args.color === false, env: ctx.env }),
      connect: connectRunControl,
      by: controlActor('watch', ctx.env),
    });
  },
};
