// `orchestrate validate <recipe>`: every problem at once as file:line:col, exit 0 or 2. A valid
// recipe that publishes also says, per publish target, how its branches will travel (https with
// the forge's token, ssh with the user's ssh, a local repository) before anything runs.
import { displayPath, loadRecipe } from '../../recipe/index.js';
import type { LoadedRecipe } from '../../recipe/loaded-recipe.js';
import { transportStatement } from '../../recipe/publish-transport.js';
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
    const transports = publishTransports(result.recipe);
    const tasks = result.recipe.tasks.length;
    const agents = Object.values(result.recipe.agents).filter((a) => !a.implicit).length;
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

/** One line per distinct publish target (forge, remote, base URL): the tasks using it and its transport. */
function publishTransports(recipe: LoadedRecipe) {
  const out: { tasks: string[]; forge: string; remote: string; transport: string }[] = [];
  const byTarget = new Map<string, (typeof out)[number]>();
  for (const t of recipe.tasks) {
    const p = t.publish;
    if (!p) continue;
    const id = `${p.forge}\0${p.remote}\0${p.baseUrl ?? ''}`;
    const had = byTarget.get(id);
    if (had) had.tasks.push(t.id);
    else {
      const row = {
        tasks: [t.id],
        forge: p.forge,
        remote: p.remote,
        transport: transportStatement(p.forge, p.baseUrl, p.remote),
      };
      byTarget.set(id, row);
      out.push(row);
    }
  }
  return out;
}
