// `orchestrate publish <run>`: the preview of a campaign's changesets (what would be pushed and
// opened, rendered with the recipe as it is now); `--apply` pushes the branches and opens or
// updates the pull/merge requests (`--only KEY` for some of them, `--close-empty` closes those
// whose change is now empty); `--rebase KEY` runs a published changeset's instance again on its
// base branch as it is now (rebase-run.ts), then previews it, or with --apply pushes it over
// orchestrate's previous commit and updates the pull request; `--follow-up` sends what each pull
// request needs (failing CI, review comments, a conflict) back to its agent (follow-up.ts), with
// --apply for real; `--rebase [KEY] --dry-run` names, without running or fetching anything, the
// changesets whose patches overlap and what moved on their base branch (rebase-preview.ts). Exit 1 when a changeset could not
// be published or rebased (a refused push names the reason), 2 for a usage mistake.
import { formatChangesetPreview } from '../../display/changesets-text.js';
import { diffstatText } from '../../publish/changeset-plan.js';
import { type PublishResult, publishRun } from '../../publish/publish-run.js';
import { followUpRun } from '../../publish/follow-up.js';
import { rebaseChangeset } from '../../publish/rebase-run.js';
import { loadRunRecipe } from '../../publish/run-recipe-of.js';
import type { LoadedRecipe } from '../../recipe/index.js';
import { type CliContext, EXIT } from '../cli-io.js';
import type { CliCommand } from '../command.js';
import { givenOnce } from '../flag-values.js';
import { locateRunArg } from '../locate-run.js';
import { printProblems } from '../print-problems.js';
import { controlBy } from '../../service/run-control.js';
import { previewRebase, rebasePreviewText } from '../../service/rebase-preview.js';

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
      .option('rebase', {
        type: 'string',
        describe:
          "Run this published changeset's instance again on its base branch as it is now (its pull request no longer merges); with --apply, replace its branch's commit and update the pull request",
      })
      .option('dry-run', {
        type: 'boolean',
        default: false,
        describe:
          'With --rebase (KEY optional): run no agent and fetch nothing; name the changesets whose patches overlap (they conflict in the order they land) and those whose patch touches files that moved on their base branch, as far as this machine knows',
      })
      .option('follow-up', {
        type: 'boolean',
        default: false,
        describe:
          "Look at each published pull request (publish: follow_up:) and send what it needs back to its agent: failing CI's log, review comments, a conflict; with --apply run the rounds, push their commits, answer the comments and turn on auto-merge (merge_when:)",
      })
      .option('reload-recipe', {
        type: 'boolean',
        describe:
          'Use the recipe and its files as they are now (an edited title or body template), validated and captured again; without it the copies captured when the run started are used',
      })
      .option('json', { type: 'boolean', default: false, describe: 'Print the changesets and what was done as JSON' })
      .option('run-dir', { type: 'string', describe: 'Folder holding run records (default .orchestrate/runs)' })
      .check(givenOnce('run-dir', 'rebase')),
  run: async (args, ctx) => {
    const runDir = locateRunArg(args, ctx);
    if (runDir === undefined) return EXIT.usage;
    const loaded = loadRunRecipe(
      runDir,
      ctx.cwd,
      ctx.env,
      args['reload-recipe'] === true ? { reloadBy: controlBy('publish --reload-recipe', ctx.env) } : {},
    );
    if (!loaded.ok) {
      if (loaded.problems) printProblems(loaded.problems, ctx);
      else ctx.stderr(`orchestrate: ${loaded.message}\n`);
      return EXIT.usage;
    }
    if (loaded.notice) ctx.stderr(`orchestrate: ${loaded.notice}\n`);
    if (!loaded.recipe.tasks.some((t) => t.publish)) {
      ctx.stderr(
        `orchestrate: the recipe of run ${loaded.runId} has no publish: block\n  hint: add publish: {forge, remote, ...} to ${loaded.recipe.file} (see README, Campaigns)\n`,
      );
      return EXIT.usage;
    }
    const only = Array.isArray(args.only) ? args.only.map(String) : undefined;
    const apply = args.apply === true;
    if (args['follow-up'] === true) {
      if (args.rebase !== undefined) {
        ctx.stderr('orchestrate: --follow-up and --rebase do different things; give one of them\n');
        return EXIT.usage;
      }
      // --dry-run --apply ran the rounds and pushed: --dry-run is the rebase preview's, not a follow-up's.
      if (args['dry-run'] === true) {
        ctx.stderr(
          `orchestrate: --dry-run previews a rebase (--rebase); a follow-up's preview is --follow-up without --apply\n  hint: orchestrate publish ${loaded.runId} --follow-up runs and pushes nothing\n`,
        );
        return EXIT.usage;
      }
      return followUp(runDir, loaded.runId, loaded.recipe, apply, only, args.json === true, ctx);
    }
    if (args['dry-run'] === true) {
      if (args.rebase === undefined || apply) {
        ctx.stderr(
          `orchestrate: --dry-run previews a rebase${apply ? ' and pushes nothing: leave out --apply' : ': add --rebase (with a changeset key, or none for all)'}\n  hint: orchestrate publish ${loaded.runId} without --apply is the preview of what would be published\n`,
        );
        return EXIT.usage;
      }
      return rebaseDryRun(String(args.rebase), runDir, loaded.recipe, args.json === true, ctx);
    }
    if (args.rebase !== undefined) {
      if (only) {
        ctx.stderr('orchestrate: --rebase names its one changeset; leave out --only\n');
        return EXIT.usage;
      }
      return rebase(String(args.rebase), runDir, loaded.runId, loaded.recipe, apply, args.json === true, ctx);
    }
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
    if (only && result.unmatched.length) {
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
    } else if (result.results.length === 0 && result.file.changesets.length === 0) {
      // An apply with nothing to publish printed nothing at all, as if it had hung or crashed.
      ctx.stdout(formatChangesetPreview([]).replace('\n', ' Nothing was pushed.\n'));
    } else {
      resultLines(result, ctx);
      // What a user looks at next (Campaigns: preview, apply, track); the apply used to end here.
      if (result.results.some((x) => x.outcome === 'pushed' || x.outcome === 'opened' || x.outcome === 'updated'))
        ctx.stdout(`track them: orchestrate status ${loaded.runId} (--watch to follow until they are merged)\n`);
    }
    return publishExit(result);
  },
};

/** `--follow-up`: what each changeset's pull request needs, sent back to its agent with --apply. */
async function followUp(
  runDir: string,
  runId: string,
  recipe: LoadedRecipe,
  apply: boolean,
  only: string[] | undefined,
  json: boolean,
  ctx: CliContext,
): Promise<number> {
  if (!recipe.tasks.some((t) => t.publish?.followUp || t.publish?.mergeWhen)) {
    ctx.stderr(
      `orchestrate: the publish: block of run ${runId} has neither follow_up: nor merge_when:\n  hint: add follow_up: { on: [ci_failed, changes_requested, conflict] } to publish: in ${recipe.file}, then use --reload-recipe\n`,
    );
    return EXIT.usage;
  }
  const r = await followUpRun({
    runDir,
    recipe,
    apply,
    ...(only ? { only } : {}),
    env: ctx.env,
    say: (line) => ctx.stderr(`${line}\n`),
  });
  for (const p of r.problems) ctx.stderr(`orchestrate: ${p}\n`);
  if (r.problems.length) return EXIT.usage;
  if (json) ctx.stdout(`${JSON.stringify({ followUps: r.results }, null, 2)}\n`);
  else if (r.results.length === 0) ctx.stdout(formatChangesetPreview([]).replace('\n', ' Nothing to follow up.\n'));
  else {
    for (const x of r.results)
      ctx.stdout(`${x.key}: ${x.outcome.replace('_', ' ')}${x.detail ? `  ${x.detail}` : ''}\n`);
    if (!apply && r.results.some((x) => x.outcome === 'preview'))
      ctx.stdout(`Nothing was run or pushed. orchestrate publish ${runId} --follow-up --apply does it.\n`);
  }
  return r.results.some((x) => x.outcome === 'failed') ? EXIT.taskFailed : EXIT.ok;
}

/** What an apply did, one line per changeset. */
function resultLines(publish: PublishResult, ctx: CliContext): void {
  for (const x of publish.results) ctx.stdout(`${x.key}: ${x.outcome}${x.detail ? `  ${x.detail}` : ''}\n`);
}

/** The exit code of a publish: 1 when a changeset failed or was refused, or a problem was found. */
function publishExit(publish: PublishResult): number {
  const failed = publish.results.some((x) => x.outcome === 'failed' || x.outcome === 'refused');
  return failed || publish.problems.length ? EXIT.taskFailed : EXIT.ok;
}

/** What an apply did (its lines unless JSON was asked for) and its problems; the exit code. */
function applied(publish: PublishResult, ctx: CliContext, json: boolean): number {
  if (!json) resultLines(publish, ctx);
  for (const p of publish.problems) ctx.stderr(`orchestrate: ${p}\n`);
  return publishExit(publish);
}

/** `--rebase KEY`: the changeset's instance run again on the new base, then its preview or its apply. */
async function rebase(
  key: string,
  runDir: string,
  runId: string,
  recipe: LoadedRecipe,
  apply: boolean,
  json: boolean,
  ctx: CliContext,
): Promise<number> {
  if (!key.trim()) {
    ctx.stderr('orchestrate: --rebase needs a changeset key (task/key, as --only takes it)\n');
    return EXIT.usage;
  }
  const r = await rebaseChangeset({ runDir, recipe, key, apply, env: ctx.env, say: (l) => ctx.stderr(`${l}\n`) });
  if (r.kind === 'usage' || r.kind === 'failed') {
    ctx.stderr(`orchestrate: ${r.error}\n${r.kind === 'usage' && r.hint ? `  ${r.hint}\n` : ''}`);
    return r.kind === 'usage' ? EXIT.usage : EXIT.taskFailed;
  }
  if (r.kind === 'current') {
    if (json)
      ctx.stdout(`${JSON.stringify({ rebase: null, message: r.message, results: r.publish?.results ?? [] })}\n`);
    else ctx.stdout(`${r.message}\n`);
    return r.publish ? applied(r.publish, ctx, json) : EXIT.ok;
  }
  const c = r.changeset;
  if (json) {
    const { from, to, attempt } = r;
    const rebase = { key: c.key, from, to, attempt };
    ctx.stdout(`${JSON.stringify({ rebase, changeset: c, results: r.publish.results }, null, 2)}\n`);
  } else {
    ctx.stdout(
      `${c.key}: rebased onto ${c.base} ${r.to.slice(0, 12)} (was ${r.from.slice(0, 12)}): ${diffstatText(c.diffstat)}, ${c.patchFile}\n`,
    );
    if (!apply) {
      ctx.stdout(formatChangesetPreview([c]));
      ctx.stdout(
        `Nothing was pushed. orchestrate publish ${runId} --apply --only ${c.key} replaces ${c.branch} (${c.pushedCommit?.slice(0, 12) ?? ''}) with it and updates its pull request.\n`,
      );
    }
  }
  return applied(r.publish, ctx, json || !apply);
}

/** `--rebase [KEY] --dry-run`: the overlaps a rebase would meet; nothing runs, nothing is fetched or written. */
async function rebaseDryRun(
  key: string,
  runDir: string,
  recipe: LoadedRecipe,
  json: boolean,
  ctx: CliContext,
): Promise<number> {
  const r = await previewRebase({ runDir, recipe, ...(key.trim() ? { key } : {}) });
  if (!r.ok) {
    ctx.stderr(`orchestrate: ${r.message}\n${r.hint ? `  ${r.hint}\n` : ''}`);
    return EXIT.usage;
  }
  ctx.stdout(json ? `${JSON.stringify({ dryRun: true, ...r.preview }, null, 2)}\n` : rebasePreviewText(r.preview));
  return EXIT.ok;
}
