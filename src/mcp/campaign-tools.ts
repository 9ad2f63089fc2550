// changeset_status and follow_up: a campaign driven by another agent. changeset_status asks each
// changeset's forge how its pull request stands now (the ChangesetStatus objects `orchestrate
// status --json` prints, with the burndown's counts); follow_up is `orchestrate publish <run>
// --follow-up`: without apply it says what each pull request needs, with apply it sends failing CI
// and review comments back to the agents, pushes their commits, answers the comments and turns on
// auto-merge. Forge tokens come from the server's environment and never reach a reply.
import { z } from 'zod';
import { followUpRun } from '../publish/follow-up.js';
import { loadRunRecipe } from '../publish/run-recipe-of.js';
import { trackRun } from '../publish/track.js';
import { progressCounts } from '../run/changesets.js';
import { locateRun, runArg, runDirArg } from './tool-args.js';
import { dataReply, defineTool, ToolError } from './tool-table.js';

export const changesetStatusTool = defineTool({
  name: 'changeset_status',
  title: "Status of a campaign's pull requests",
  description:
    'Each changeset of a run that publishes (publish: block) as its forge sees it now: state (open, draft, merged, closed), checks and which fail, review and how many comments are not answered, mergeable or needing a rebase, auto-merge, follow-up rounds, and where it stands (progress: merged, ready, ci_failing, changes_requested, pending); plus the counts per progress. Each look is recorded for the burndown.',
  input: { run: runArg, run_dir: runDirArg },
  annotations: { readOnlyHint: false, destructiveHint: false, openWorldHint: true },
  handler: async (args, _call, ctx) => {
    const runDir = locateRun(ctx, args.run, args.run_dir);
    const tracked = await trackRun(runDir, ctx.env);
    if (!tracked.file)
      throw new ToolError(
        `run ${args.run} has no changesets.json: its recipe has no publish: block, or it has not ended`,
      );
    return dataReply({
      changesets: tracked.rows,
      progress: progressCounts(tracked.rows),
      ...(tracked.warnings ? { warnings: tracked.warnings } : {}),
    });
  },
});

export const followUpTool = defineTool({
  name: 'follow_up',
  title: "Follow up a campaign's pull requests",
  description:
    "orchestrate publish <run> --follow-up: for each published pull request of a run whose publish: block has follow_up: (or merge_when:), what it needs: failing CI (the failing job's log), review comments not answered yet, a conflict (a rebase), or auto-merge. apply: false (default) only says so; apply: true runs the instance's agent again on its branch with that evidence, pushes its fix as a new commit, answers each comment and turns on the forge's auto-merge. Rounds are in the run log, counted in its budget, and never pushed twice.",
  input: {
    run: runArg,
    run_dir: runDirArg,
    apply: z.boolean().optional().describe('Run the rounds and push (default false: a preview)'),
    only: z
      .array(z.string().min(1))
      .optional()
      .describe('Only these changesets (task/key, the instance key, or a unique prefix)'),
  },
  annotations: { readOnlyHint: false, destructiveHint: false, openWorldHint: true },
  handler: async (args, _call, ctx) => {
    const runDir = locateRun(ctx, args.run, args.run_dir);
    const loaded = loadRunRecipe(runDir, ctx.cwd, ctx.env);
    if (!loaded.ok) throw new ToolError(loaded.message ?? (loaded.problems ?? []).map((p) => p.message).join('; '));
    if (!loaded.recipe.tasks.some((t) => t.publish?.followUp || t.publish?.mergeWhen))
      throw new ToolError(
        `the publish: block of run ${loaded.runId} has neither follow_up: nor merge_when: (add follow_up: { on: [ci_failed, changes_requested, conflict] } to it)`,
      );
    const lines: string[] = [];
    const r = await followUpRun({
      runDir,
      recipe: loaded.recipe,
      apply: args.apply === true,
      ...(args.only ? { only: args.only } : {}),
      env: ctx.env,
      say: (l) => lines.push(l),
    });
    if (r.problems.length) throw new ToolError(r.problems.join('; '));
    return dataReply({ apply: args.apply === true, results: r.results, ...(lines.length ? { progress: lines } : {}) });
  },
});
