// validate_recipe and dry_run: what `orchestrate validate` and `orchestrate <recipe> --dry-run`
// do, as tools. Neither calls a model nor writes anything.
import { z } from 'zod';
import { renderDryRun, renderDryRunMcp } from '../display/render-dry-run.js';
import { formatProblem, loadRecipe } from '../recipe/index.js';
import { dryRunRecipe } from '../service/dry-run.js';
import { checkRecipe, problemsJson } from '../service/recipe-check.js';
import { loadOptionsOf, overrideArgs, problemsText, recipeArgs } from './tool-args.js';
import { defineTool, inToolTerms, ToolError } from './tool-table.js';

export const validateRecipeTool = defineTool({
  name: 'validate_recipe',
  title: 'Validate a recipe',
  description:
    'Check an orchestrate recipe file and report every problem as file:line:col with a hint (no model calls, nothing written). ' +
    'Required inputs are not checked here (run_recipe and dry_run check them with the inputs you give).',
  input: { recipe: recipeArgs.recipe },
  annotations: { readOnlyHint: true, openWorldHint: false },
  handler: async (args, _call, ctx) => {
    const result = checkRecipe(args.recipe, ctx);
    if (!result.ok) {
      // The answer to "is it valid?" is no: a result, not a failure of the tool.
      return {
        text: inToolTerms(`${problemsText(result.problems)}\nFix them and validate again.`, ctx.cwd),
        data: { file: result.file, ok: false, problems: problemsJson(result.problems) },
      };
    }
    const { file, tasks, agents } = result;
    const warnings = result.warnings.map((p) => `\n${formatProblem(p)}`).join('');
    return {
      text: `${file}: ok (${tasks} task${tasks === 1 ? '' : 's'}, ${agents} agent${agents === 1 ? '' : 's'})${warnings}`,
      data: {
        file,
        ok: true,
        tasks,
        agents,
        ...(result.warnings.length ? { warnings: problemsJson(result.warnings) } : {}),
      },
    };
  },
});

export const dryRunTool = defineTool({
  name: 'dry_run',
  title: 'Dry-run a recipe',
  description:
    'Validate a recipe with its inputs and overrides, expand its task DAG (fan-outs included) and estimate its cost; no model calls, nothing written. The text is the plan as a tree; the structured content has every field.',
  input: {
    ...recipeArgs,
    ...overrideArgs,
    list_mcp: z
      .boolean()
      .optional()
      .describe("Start each agent's MCP servers to list the tools it would get, then stop them (as --list-mcp)"),
  },
  annotations: { readOnlyHint: true, openWorldHint: false },
  handler: async (args, _call, ctx) => {
    const loaded = loadRecipe(args.recipe, loadOptionsOf(args, ctx));
    if (!loaded.ok) throw new ToolError(problemsText(loaded.problems));
    const result = await dryRunRecipe(loaded.recipe, ctx, { listMcp: args.list_mcp === true });
    if (!result.ok) throw new ToolError(problemsText(result.problems));
    const mcp = result.mcp;
    return {
      text: renderDryRun(result.report, renderDryRunMcp(mcp, result.report)),
      data: { ok: true, dryRun: true, ...result.report, ...(mcp.agents.length ? { mcp } : {}) },
    };
  },
});
