// Recipe problems on the terminal (file:line:col: message + hint); as JSON: service/recipe-check.ts.
import { readdirSync } from 'node:fs';
import { basename, dirname, join, resolve } from 'node:path';
import { type RecipeProblem, formatProblem } from '../recipe/index.js';
import { didYouMean } from '../recipe/suggest.js';
import type { CliContext } from './cli-io.js';

export function printProblems(problems: readonly RecipeProblem[], ctx: CliContext): void {
  const text = problems.map((p) => formatProblem(withRecipeGuess(p, ctx.cwd))).join('\n');
  const errors = problems.filter((p) => p.severity !== 'warning').length;
  const warnings = problems.length - errors;
  const count = errors === 1 ? '1 problem' : `${errors} problems`;
  ctx.stderr(
    `${text}\n${count}${warnings ? ` and ${warnings === 1 ? '1 warning' : `${warnings} warnings`}` : ''} found.\n`,
  );
}

/** Warnings of a valid recipe, one per line, on stderr. */
export function printWarnings(warnings: readonly RecipeProblem[], ctx: CliContext): void {
  if (warnings.length) ctx.stderr(`${warnings.map((p) => formatProblem(p)).join('\n')}\n`);
}

/**
 * A recipe path with nothing there (`orchestrate recipe.yml` for recipe.yaml) got "check the
 * path" only: name the YAML file beside it that was probably meant, or the ones there are.
 */
function withRecipeGuess(p: RecipeProblem, cwd: string): RecipeProblem {
  if (p.message !== 'recipe file not found') return p;
  const folder = dirname(resolve(cwd, p.file));
  let yaml: string[];
  try {
    yaml = readdirSync(folder)
      .filter((name) => /\.ya?ml$/.test(name))
      .sort();
  } catch {
    return p; // the folder is not there either: "check the path" says it
  }
  if (yaml.length === 0) return p;
  const guess = didYouMean(basename(p.file), yaml);
  const typed = (name: string): string => (dirname(p.file) === '.' ? name : join(dirname(p.file), name));
  return {
    ...p,
    hint: guess
      ? `did you mean ${typed(guess)}?`
      : `YAML files there: ${yaml.slice(0, 5).map(typed).join(', ')}${yaml.length > 5 ? ', ...' : ''}`,
  };
}
