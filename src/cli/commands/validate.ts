// `orchestrate validate <recipe>`: every problem at once as file:line:col, exit 0 or 2. A valid
// recipe that publishes also says, per publish target, how its branches will travel (https with
// the forge's token, ssh with the user's ssh, a local repository) before anything runs.
import { checkRecipe, problemsJson } from '../../service/recipe-check.js';
import { EXIT } from '../cli-io.js';
import type { CliCommand } from '../command.js';
import { noStdinRecipe } from '../flag-values.js';
import { printProblems, printWarnings } from '../print-problems.js';

export const validateCommand: CliCommand = {
  command: 'validate <recipe>',
  describe: 'Check a recipe; report every problem as file:line:col',
  builder: (y) =>
    y
      .positional('recipe', { type: 'string', describe: 'Recipe YAML file', demandOption: true })
      .option('json', { type: 'boolean', default: false, describe: 'Print the result as JSON on stdout' })
      .check((a) => {
        noStdinRecipe(a.recipe);
        return true;
      }),
  run: async (args, ctx) => {
    const result = checkRecipe(String(args.recipe), ctx);
    if (!result.ok) {
      if (args.json)
        ctx.stdout(
          `${JSON.stringify({ file: result.file, ok: false, problems: problemsJson(result.problems) }, null, 2)}\n`,
        );
      else printProblems(result.problems, ctx);
      return EXIT.usage;
    }
    const { file, tasks, agents, publish: transports } = result;
    if (args.json)
      ctx.stdout(
        `${JSON.stringify({ file, ok: true, tasks, agents, ...(transports.length ? { publish: transports } : {}), ...(result.warnings.length ? { warnings: problemsJson(result.warnings) } : {}) }, null, 2)}\n`,
      );
    else printWarnings(result.warnings, ctx);
    if (!args.json) {
      ctx.stdout(`${file}: ok (${tasks} task${tasks === 1 ? '' : 's'}, ${agents} agent${agents === 1 ? '' : 's'})\n`);
      for (const t of transports)
        ctx.stdout(`  publish ${t.tasks.join(', ')}: forge ${t.forge}, remote ${t.remote} → ${t.transport}\n`);
    }
    return EXIT.ok;
  },
};
