// `orchestrate status <run>`: each changeset of a campaign with its pull request's state
// (open/draft/merged/closed), checks, review and whether it merges or needs a rebase, asked of
// the forge now; the burndown (merged so far) below. `--json` for scripts, `--watch` refreshes
// (status-watch.ts); `--follow-up` runs publish --follow-up --apply after each look. A publish
// gate that waits is named, with the command that answers it.
import { basename, join } from 'node:path';
import { formatChangesetStatus, mergedCount } from '../../display/changesets-text.js';
import { burndown, progressCounts, readObservations } from '../../run/changesets.js';
import { RUN_LOG, readRunLog, waitingGates } from '../../run/run-store.js';
import { followUpRun } from '../../publish/follow-up.js';
import { loadRunRecipe } from '../../publish/run-recipe-of.js';
import { type CliContext, EXIT } from '../cli-io.js';
import type { CliCommand } from '../command.js';
import { givenOnce } from '../flag-values.js';
import { locateRunArg, RUN_ARG, RUN_DIR_OPTION } from '../locate-run.js';
import { printProblems } from '../print-problems.js';
import { lookAtChangesets, watchStatus } from './status-watch.js';

/**
 * `--follow-up`: a step after each look that runs `publish --follow-up --apply` with the run's
 * recipe and prints what it did (nothing for a changeset with nothing to do); false when a round
 * failed. A number is the exit code of a recipe that cannot be loaded (printed).
 */
function followUpAfterLook(runDir: string, ctx: CliContext): number | (() => Promise<boolean>) {
  const loaded = loadRunRecipe(runDir, ctx.cwd, ctx.env);
  if (!loaded.ok) {
    if (loaded.problems) printProblems(loaded.problems, ctx);
    else ctx.stderr(`orchestrate: ${loaded.message}\n`);
    return EXIT.usage;
  }
  const { recipe } = loaded;
  return async () => {
    const r = await followUpRun({ runDir, recipe, apply: true, env: ctx.env, say: (l) => ctx.stderr(`${l}\n`) });
    for (const p of r.problems) ctx.stderr(`orchestrate: ${p}\n`);
    for (const x of r.results)
      if (x.outcome !== 'none' && x.outcome !== 'settled')
        ctx.stdout(`${x.key}: ${x.outcome.replace('_', ' ')}${x.detail ? `  ${x.detail}` : ''}\n`);
    return !r.results.some((x) => x.outcome === 'failed');
  };
}

export const statusCommand: CliCommand = {
  command: 'status <run>',
  describe: "Show each changeset's pull request of a run: state, checks, review, mergeable; and the burndown",
  builder: (y) =>
    y
      .positional('run', RUN_ARG)
      .option('json', { type: 'boolean', default: false, describe: 'Print the changesets and the burndown as JSON' })
      .option('watch', {
        type: 'boolean',
        default: false,
        describe: 'Ask again every --interval until every pull request is merged or closed (Ctrl-C stops)',
      })
      .option('follow-up', {
        type: 'boolean',
        default: false,
        describe:
          'After each look, run publish --follow-up --apply: failing CI and review comments go back to the agents, auto-merge goes on (publish: follow_up:, merge_when:)',
      })
      .option('interval', {
        type: 'number',
        default: 60,
        describe: 'Seconds between looks with --watch (at least 0.2)',
      })
      .option('run-dir', RUN_DIR_OPTION)
      .check(givenOnce('run-dir', 'interval')),
  run: async (args, ctx) => {
    // Pull requests come from changesets.json; only a follow-up reads (and resumes) the run itself.
    const runDir = locateRunArg(args, ctx, { readsRunLog: args['follow-up'] === true });
    if (runDir === undefined) return EXIT.usage;
    const followUp = args['follow-up'] === true ? followUpAfterLook(runDir, ctx) : undefined;
    if (typeof followUp === 'number') return followUp;
    if (args.watch === true) {
      const seconds = typeof args.interval === 'number' && Number.isFinite(args.interval) ? args.interval : 60;
      if (seconds < 0.2) {
        ctx.stderr(`orchestrate: --interval ${seconds} is too short\n  hint: at least 0.2 seconds between looks\n`);
        return EXIT.usage;
      }
      // Ctrl-C and SIGTERM end the watch between looks, with exit 0 (nothing is left half done).
      const stop = new AbortController();
      const onSignal = () => stop.abort();
      process.on('SIGINT', onSignal);
      process.on('SIGTERM', onSignal);
      try {
        return await watchStatus(runDir, ctx, {
          intervalMs: seconds * 1000,
          json: args.json === true,
          signal: stop.signal,
          ...(followUp ? { afterLook: followUp } : {}),
        });
      } finally {
        process.off('SIGINT', onSignal);
        process.off('SIGTERM', onSignal);
      }
    }
    const tracked = await lookAtChangesets(runDir, ctx);
    if (typeof tracked === 'number') return tracked;
    const followed = followUp ? await followUp() : true;
    const obs = readObservations(runDir);
    const merged = mergedCount(obs);
    const waiting = waitingGates(readRunLog(join(runDir, RUN_LOG)).events).publish;
    if (args.json === true) {
      ctx.stdout(
        `${JSON.stringify({ changesets: tracked.rows, merged, total: tracked.rows.length, progress: progressCounts(tracked.rows), burndown: burndown(obs, tracked.rows.length), ...(waiting.length ? { waitingPublishGates: waiting } : {}) }, null, 2)}\n`,
      );
    } else {
      ctx.stdout(formatChangesetStatus(tracked.rows, merged));
      const id = basename(runDir);
      for (const g of waiting)
        ctx.stdout(
          `publish gate of ${g.task}: waiting for approval: ${g.prompt}\n  hint: orchestrate approve ${id} --publish --task ${g.task} (or reject)\n`,
        );
    }
    return tracked.rows.some((r) => r.error) || !followed ? EXIT.taskFailed : EXIT.ok;
  },
};
