// `orchestrate publish <run>`: the preview of a campaign's changesets (what would be pushed and
// opened, rendered with the recipe as it is now); `--apply` pushes the branches and opens or
// updates the pull/merge requests (`--only KEY` for some of them, `--close-empty` closes those
// whose change is now empty). Exit 1 when a changeset could not be published (a refused push
// names the reason), 2 for a usage mistake.
import { formatChangesetPreview } from '../../display/changesets-text.js';
import { publishRun } from '../../orchestrator/publish/publish-run.js';
import { loadRunRecipe } from '../../orchestrator/publish/run-recipe-of.js';
import { EXIT } from '../cli-io.js';
import { type CliCommand } from '../command.js';
import { locateRunArg } from '../locate-run.js';
import { printProblems } from '../print-problems.js';

export const publishCommand: CliCommand = {
  command: 'publish <run>',
  describe:
    "Preview a run's changesets (publish: block); --apply pushes the branches and opens or updates the pull requests",
  builder: (y) =>
    y
      .positional('run', {
        type: 'string',
        describe: 'Run id, unique prefix of one, or run folder path',
        demandOption: true,
      })
      .option('apply', {
        type: 'boolean',
        default: false,
        describe: 'Push the branches and open or update the pull/merge requests (default: preview only)',
      })
      .option('only', {
        type: 'string',
        array: true,
        describe: 'Publish only these changesets (task/key, the instance key, or a unique prefix); repeatable',
      })
      .option('close-empty', {
        type: 'boolean',
        default: false,
        describe: 'Close the pull request of a changeset whose change is now empty',
      })
      .option('json', { type: 'boolean', default: false, describe: 'Print the changesets and what was done as JSON' })
      .option('run-dir', { type: 'string', describe: 'Folder holding run records (default .orchestrate/runs)' }),
  run: async (args, ctx) => {
    const runDir = locateRunArg(args, ctx);
    if (runDir === undefined) return EXIT.usage;
    const loaded = loadRunRecipe(runDir, ctx.cwd, ctx.env);
    if (!loaded.ok) {
      if (loaded.problems) printProblems(loaded.problems, ctx);
      else ctx.stderr(`orchestrate: ${loaded.message}\n`);
      return EXIT.usage;
    }
    if (!loaded.recipe.tasks.some((t) => t.publish)) {
      ctx.stderr(
        `orchestrate: the recipe of run ${loaded.runId} has no publish: block\n  hint: add publish: {forge, remote, ...} to ${loaded.recipe.file} (see README, Campaigns)\n`,
      );
      return EXIT.usage;
    }
    const only = Array.isArray(args.only) ? args.only.map(String) : undefined;
    const apply = args.apply === true;
    const result = await publishRun({
      runDir,
      recipe: loaded.recipe,
      apply,
      ...(only ? { only } : {}),
      closeEmpty: args['close-empty'] === true,
      env: ctx.env,
      say: (line) => ctx.stderr(`${line}\n`),
    });
    for (const p of result.problems) ctx.stderr(`orchestrate: ${p}\n`);
    if (only && result.problems.some((p) => p.startsWith('no changeset') || p.includes(' matches '))) {
      ctx.stderr(`  changesets: ${result.file.changesets.map((c) => c.key).join(', ') || '(none)'}\n`);
      return EXIT.usage;
    }
    if (args.json === true) {
      ctx.stdout(`${JSON.stringify({ changesets: result.file.changesets, results: result.results }, null, 2)}\n`);
    } else if (!apply) {
      ctx.stdout(formatChangesetPreview(result.file.changesets));
      ctx.stdout(
        result.file.changesets.length
          ? `Nothing was pushed. orchestrate publish ${loaded.runId} --apply publishes them.\n`
          : '',
      );
    } else {
      for (const r of result.results) ctx.stdout(`${r.key}: ${r.outcome}${r.detail ? `  ${r.detail}` : ''}\n`);
    }
    const failed = result.results.some((r) => r.outcome === 'failed' || r.outcome === 'refused');
    return failed || result.problems.length ? EXIT.taskFailed : EXIT.ok;
  },
};
