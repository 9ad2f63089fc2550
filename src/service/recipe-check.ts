// Checking a recipe file as data, shared by `orchestrate validate` and the MCP server's
// validate_recipe tool: its problems (each at file:line:col, with a hint), or what the valid recipe
// holds (tasks, agents, warnings, and per publish target how its branches will travel).
import { displayPath, loadRecipe, type RecipeProblem } from '../recipe/index.js';
import type { LoadedRecipe } from '../recipe/loaded-recipe.js';
import { transportStatement } from '../recipe/publish-transport.js';

/** One problem as JSON (`--json`, the MCP tools' structured content). */
export interface ProblemJson {
  file: string;
  line: number;
  col: number;
  code: string;
  message: string;
  hint?: string;
  path?: string;
  severity?: string;
}

export function problemsJson(problems: readonly RecipeProblem[]): ProblemJson[] {
  return problems.map((p) => ({
    file: p.file,
    line: p.line,
    col: p.col,
    code: p.code,
    message: p.message,
    ...(p.hint ? { hint: p.hint } : {}),
    ...(p.path ? { path: p.path } : {}),
    ...(p.severity ? { severity: p.severity } : {}),
  }));
}

/** A distinct publish target (forge, remote, base URL): the tasks using it and how branches travel. */
export interface PublishTransport {
  tasks: string[];
  forge: string;
  remote: string;
  transport: string;
}

export type RecipeCheck =
  | { ok: false; code: 'problems'; file: string; problems: readonly RecipeProblem[] }
  | {
      ok: true;
      file: string;
      recipe: LoadedRecipe;
      tasks: number;
      agents: number;
      warnings: readonly RecipeProblem[];
      publish: PublishTransport[];
    };

/** Loads and checks `path`; required inputs are a run-time matter, so missing ones are not problems here. */
export function checkRecipe(
  path: string,
  where: { cwd: string; env: Record<string, string | undefined> },
): RecipeCheck {
  const result = loadRecipe(path, { cwd: where.cwd, env: where.env, allowMissingInputs: true });
  if (!result.ok)
    return { ok: false, code: 'problems', file: result.problems[0]?.file ?? path, problems: result.problems };
  return {
    ok: true,
    file: displayPath(result.recipe.file, where.cwd),
    recipe: result.recipe,
    tasks: result.recipe.tasks.length,
    agents: Object.values(result.recipe.agents).filter((a) => !a.implicit).length,
    warnings: result.warnings,
    publish: publishTransports(result.recipe),
  };
}

/** One entry per distinct publish target (forge, remote, base URL). */
function publishTransports(recipe: LoadedRecipe): PublishTransport[] {
  const out: PublishTransport[] = [];
  const byTarget = new Map<string, PublishTransport>();
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
