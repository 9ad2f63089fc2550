// Recipe mistakes are data: each is a RecipeProblem pointing at file:line:col with a hint on how
// to fix it. All problems of a recipe are collected and reported at once, sorted by position.

export type RecipeProblemCode =
  | 'file_not_found'
  | 'yaml_syntax'
  | 'duplicate_key'
  | 'schema'
  | 'unknown_key'
  | 'missing_key'
  | 'bad_name'
  | 'bad_duration'
  | 'bad_token_count'
  | 'bad_retries'
  | 'bad_max_turns'
  | 'bad_loop'
  | 'bad_verify'
  | 'bad_for_each'
  | 'bad_board'
  | 'bad_approve'
  | 'bad_glob'
  | 'bad_path'
  | 'bad_rate_limit'
  | 'bad_env_name'
  | 'no_tasks'
  | 'duplicate_task'
  | 'unknown_task'
  | 'cycle'
  | 'unknown_agent'
  | 'task_kind'
  | 'unknown_tool'
  | 'unknown_mcp_server'
  | 'bad_mcp_server'
  | 'bad_hooks'
  | 'missing_file'
  | 'agent_file'
  | 'bad_script'
  | 'unknown_model'
  | 'unknown_provider'
  | 'expression_syntax'
  | 'expression_reference'
  | 'expression_here'
  | 'input'
  | 'conflict';

/** One mistake in a recipe, at a 1-based line and column. */
export interface RecipeProblem {
  code: RecipeProblemCode;
  file: string;
  line: number;
  col: number;
  message: string;
  /** What to do about it, one line. */
  hint?: string;
  /** Dotted location in the document, e.g. tasks[1].retries, when the problem has one. */
  path?: string;
  /** A warning does not make the recipe invalid (an agent file's tool that is ignored, ...). */
  severity?: 'warning';
}

/**
 * A problem found while checking the parsed document: it names a document path, and the
 * validator turns that into file:line:col. Problems in other files (agent markdown) carry
 * their own position instead.
 */
export interface PendingProblem {
  code: RecipeProblemCode;
  message: string;
  hint?: string;
  path: readonly (string | number)[];
  /** Point at the key of the last path segment rather than its value. */
  key?: boolean;
  /** Offset into the string value at `path` (expression problems). */
  offset?: number;
  /** Set when the problem is in another file, with its own position. */
  at?: { file: string; line: number; col: number };
  severity?: 'warning';
}

/** Thrown (or returned) when a recipe cannot be loaded; carries every problem found. */
export class RecipeError extends Error {
  readonly code = 'recipe_invalid' as const;
  constructor(readonly problems: RecipeProblem[]) {
    super(problems.length === 1 ? formatProblem(problems[0]!) : `${problems.length} problems in recipe`);
    this.name = 'RecipeError';
  }
}

export function sortProblems(problems: RecipeProblem[]): RecipeProblem[] {
  return [...problems].sort(
    (a, b) => a.file.localeCompare(b.file) || a.line - b.line || a.col - b.col || a.message.localeCompare(b.message),
  );
}

/** `file:line:col: message` and, when there is one, an indented hint line. */
export function formatProblem(p: RecipeProblem, displayFile: string = p.file): string {
  const head = `${displayFile}:${p.line}:${p.col}: ${p.severity === 'warning' ? 'warning: ' : ''}${p.message}`;
  return p.hint ? `${head}\n  hint: ${p.hint}` : head;
}

/** Renders a path such as ['tasks', 1, 'retries'] as tasks[1].retries. */
export function pathToString(path: readonly (string | number)[]): string {
  let out = '';
  for (const seg of path) {
    if (typeof seg === 'number') out += `[${seg}]`;
    else out += out === '' ? seg : `.${seg}`;
  }
  return out;
}
