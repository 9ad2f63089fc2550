// `orchestrate status <run>`: each changeset of a campaign with its pull request's state
// (open/draft/merged/closed), checks, review and whether it merges or needs a rebase, asked of
// the forge now; the burndown (merged so far) below. `--json` for scripts, `--watch` refreshes.
import { formatChangesetStatus, mergedCount } from '../../display/changesets-text.js';
import { trackRun } from '../../orchestrator/publish/track.js';
import { burndown, readObservations } from '../../run/changesets.js';
import { EXIT } from '../cli-io.js';
import { type CliCommand } from '../command.js';
import { locateRunArg } from '../locate-run.js';

export const statusCommand: CliCommand = {
  command: 'status <run>',
  describe: "Show each changeset's pull request of a run: state, checks, review, mergeable; and the burndown",
  builder: (y) =>
    y
      .positional('run', {
        type: 'string',
        describe: 'Run id, unique prefix of one, or run folder path',
        demandOption: true,
      })
      .option('json', { type: 'boolean', default: false, describe: 'Print the changesets and the burndown as JSON' })
      .option('watch', { type: 'boolean', default: false, describe: 'Refresh until interrupted (Ctrl-C)' })
      .option('interval', { type: 'number', default: 60, describe: 'Seconds between refreshes with --watch' })
      .option('run-dir', { type: 'string', describe: 'Folder holding run records (default .orchestrate/runs)' }),
  run: async (args, ctx) => {
    const runDir = locateRunArg(args, ctx);
    if (runDir === undefined) return EXIT.usage;
    const intervalMs = Math.max(5, typeof args.interval === 'number' ? args.interval : 60) * 1000;
    for (;;) {
      let tracked: Awaited<ReturnType<typeof trackRun>>;
      try {
        tracked = await trackRun(runDir, ctx.env);
      } catch (err) {
        ctx.stderr(`orchestrate: ${err instanceof Error ? err.message : String(err)}\n`);
        return EXIT.taskFailed;
      }
      if (!tracked.file) {
        ctx.stderr(
          `orchestrate: ${runDir} has no changesets.json\n  hint: a run writes it when its recipe has a publish: block\n`,
        );
        return EXIT.usage;
      }
      const obs = readObservations(runDir);
      const merged = mergedCount(obs);
      if (args.json === true) {
        ctx.stdout(
          `${JSON.stringify({ changesets: tracked.rows, merged, total: tracked.rows.length, burndown: burndown(obs, tracked.rows.length) }, null, 2)}\n`,
        );
      } else {
        if (args.watch === true && ctx.isTTY) ctx.stdout('\x1b[2J\x1b[H');
        ctx.stdout(formatChangesetStatus(tracked.rows, merged));
      }
      if (args.watch !== true) return tracked.rows.some((r) => r.error) ? EXIT.taskFailed : EXIT.ok;
      await new Promise((r) => setTimeout(r, intervalMs));
    }
  },
};
