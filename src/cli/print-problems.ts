// Recipe problems on the terminal (file:line:col: message + hint) or as JSON.
import { type RecipeProblem, formatProblem } from '../orchestrator/recipe/index.js';
import { type CliContext } from './cli-io.js';

export function printProblems(problems: readonly RecipeProblem[], ctx: CliContext): void {
  const text = problems.map((p) => formatProblem(p)).join('\n');
  const count = problems.length === 1 ? '1 problem' : `${problems.length} problems`;
  ctx.stderr(`${text}\n${count} found.\n`);
}

export function problemsJson(problems: readonly RecipeProblem[]): object[] {
  return problems.map((p) => ({ file: p.file, line: p.line, col: p.col, code: p.code, message: p.message, ...(p.hint ? { hint: p.hint } : {}), ...(p.path ? { path: p.path } : {}) }));
}
