// Recipe problems on the terminal (file:line:col: message + hint); as JSON: service/recipe-check.ts.
import { type RecipeProblem, formatProblem } from '../recipe/index.js';
import type { CliContext } from './cli-io.js';

export function printProblems(problems: readonly RecipeProblem[], ctx: CliContext): void {
  const text = problems.map((p) => formatProblem(p)).join('\n');
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
