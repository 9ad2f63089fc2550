// `orchestrate validate <recipe>`: every problem at once as file:line:col, exit 0 or 2.
import { displayPath, loadRecipe } from '../../recipe/index.js';
import { EXIT } from '../cli-io.js';
import { type CliCommand } from '../command.js';
import { printProblems, printWarnings, problemsJson } from '../print-problems.js';

export const validateCommand: CliCommand = {
  command: 'validate <recipe>',
  describe: 'Check a recipe; report every problem as file:line:col',
  builder: (y) =>
    y
      .positional('recipe', { type: 'string', describe: 'Recipe YAML file', demandOption: true })
      .option('json', { type: 'boolean', default: false, describe: 'Print the result as JSON on stdout' }),
  run: async (args, ctx) => {
    const path = String(args.recipe);
    // Required inputs are a run-time matter: validate checks the file itself.
    const result = loadRecipe(path, { cwd: ctx.cwd, env: ctx.env, allowMissingInputs: true });
    const file = result.ok ? displayPath(result.recipe.file, ctx.cwd) : (result.problems[0]?.file ?? path);
    if (!result.ok) {
      if (args.json)
        ctx.stdout(`${JSON.stringify({ file, ok: false, problems: problemsJson(result.problems) }, null, 2)}\n`);
      else printProblems(result.problems, ctx);
      return EXIT.usage;
    }
    const tasks = result.recipe.tasks.length;
    const agents = Object.values(result.recipe.agents).filter((a) => !a.implicit).length;
    if (args.json)
      ctx.stdout(
        `${JSON.stringify({ file, ok: true, tasks, agents, ...(result.warnings.length ? { warnings: problemsJson(result.warnings) } : {}) }, null, 2)}\n`,
      );
    else printWarnings(result.warnings, ctx);
    if (!args.json)
      ctx.stdout(`${file}: ok (${tasks} task${tasks === 1 ? '' : 's'}, ${agents} agent${agents === 1 ? '' : 's'})\n`);
    return EXIT.ok;
  },
};
