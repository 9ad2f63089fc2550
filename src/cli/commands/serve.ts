// `orchestrate serve [runs-dir]`: the web view of a runs folder (issue 42) on 127.0.0.1, with a
// token printed once inside the page's URL. The flags are the CLI's contract and stay here; the
// server is src/web/, an entry point beside cli/ (both rank 9, neither importing the other), so
// this command hands the process over to it by the path in WEB_ENTRY, loaded only when it runs.
// test/web/entry-handover.test.ts holds that hand-over to the real module and signature.
import { existsSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { defaultRunsDir } from '../../display/find-run.js';
import { runsDirReadProblem } from '../../run/run-dir-access.js';
import { RUN_LOG } from '../../run/run-store.js';
import { EXIT } from '../cli-io.js';
import type { CliCommand } from '../command.js';

/** The web entry point's module, relative to this file (a hand-over between entries, see the header). */
export const WEB_ENTRY = '../../web/serve.js';

/** What this command needs of src/web/serve (its real signature is checked by the hand-over test). */
export interface WebEntry {
  serveWeb(
    opts: { runsDir: string; host: string; port: number },
    io: {
      stdout: (text: string) => void;
      stderr: (text: string) => void;
      cwd: string;
      env: Record<string, string | undefined>;
    },
  ): Promise<{ ok: boolean }>;
}

export const serveCommand: CliCommand = {
  command: 'serve [runs-dir]',
  describe:
    'Serve a live web view of the runs in a folder (default .orchestrate/runs) on http://127.0.0.1: the task DAG, conversations, cost, gates, board and changesets; approve, steer and cancel from the page',
  builder: (y) =>
    y
      .positional('runs-dir', {
        type: 'string',
        describe: 'Folder holding run records (default .orchestrate/runs in the current folder)',
      })
      .option('port', {
        type: 'number',
        default: 0,
        describe: 'Port to listen on (0: a free one; the URL printed names it)',
      })
      .option('host', {
        type: 'string',
        default: '127.0.0.1',
        describe:
          'Address to listen on; anything but 127.0.0.1 / localhost lets other machines reach the page over plain HTTP (the token is still required)',
      })
      .check((a) => {
        const port = a.port;
        if (!(typeof port === 'number' && Number.isInteger(port) && port >= 0 && port <= 65535))
          throw new Error(`--port must be a port number from 0 to 65535 (got ${String(port)})`);
        if (Array.isArray(a.host)) throw new Error('--host was given more than once');
        if (typeof a.host !== 'string' || a.host.trim() === '')
          throw new Error('--host needs an address, e.g. --host 127.0.0.1');
        return true;
      })
      .example([
        ['orchestrate serve', 'the runs of .orchestrate/runs; prints http://127.0.0.1:PORT/?token=…'],
        ['orchestrate serve ../campaign/.orchestrate/runs --port 8080', 'another folder, on a fixed port'],
      ]),
  run: async (args, ctx) => {
    const given = args['runs-dir'];
    const runsDir = typeof given === 'string' ? resolve(ctx.cwd, given) : defaultRunsDir(ctx.cwd);
    // A folder named by hand that is not there is a typo far more often than a runs folder to come.
    if (typeof given === 'string' && !existsSync(runsDir)) {
      ctx.stderr(
        `orchestrate serve: no folder ${runsDir}\n  hint: give the folder holding run records (\`.orchestrate/runs\` where a recipe ran), or nothing for the current folder's\n`,
      );
      return EXIT.usage;
    }
    // One run's own folder holds no runs: the page would list nothing.
    if (existsSync(join(runsDir, RUN_LOG))) {
      ctx.stderr(
        `orchestrate serve: ${runsDir} is the folder of one run, not a folder of runs\n  hint: orchestrate serve ${dirname(runsDir)}\n`,
      );
      return EXIT.usage;
    }
    const unreadable = runsDirReadProblem(runsDir);
    if (unreadable) {
      ctx.stderr(`orchestrate serve: ${unreadable}\n`);
      return EXIT.usage;
    }
    const { serveWeb } = (await import(WEB_ENTRY)) as WebEntry;
    const served = await serveWeb(
      { runsDir, host: String(args.host), port: typeof args.port === 'number' ? args.port : 0 },
      ctx,
    );
    // Could not start (no usable token, the port taken): the reason is already on stderr.
    return served.ok ? EXIT.ok : EXIT.usage;
  },
};
