// Validation of a recipe file: YAML syntax, schema, then the whole-recipe checks, all reported at
// once as file:line:col problems sorted by position. Nothing here throws for a user mistake.
import { dirname, resolve } from 'node:path';
import { LineCounter, parseDocument } from 'yaml';
import { type PendingProblem, type RecipeProblem, pathToString, sortProblems } from './problems.js';
import { type RecipeDocument, RecipeSchema } from './schema.js';
import { problemsFromZod } from './schema-issues.js';
import { checkSemantics } from './semantic-checks.js';
import { checkPublishBlocks, isPublishPath } from './publish-spec.js';
import { SourceMap } from './source-map.js';
import { displayPath } from '../util/display-path.js';
import { readInputText } from '../util/input-files.js';

export interface ValidateOptions {
  /** Problems show file paths relative to this folder (default: process.cwd()). */
  cwd?: string;
  /** The environment ${VAR}s of MCP server entries expand against (default: process.env). */
  env?: Readonly<Record<string, string | undefined>>;
}

/** A recipe that passed every check, with what later stages need to point back into it. */
export interface ValidatedRecipe {
  file: string;
  dir: string;
  /** The file as shown in messages. */
  displayFile: string;
  document: RecipeDocument;
  sourceMap: SourceMap;
  /** Things worth knowing that do not stop the recipe (an agent file's ignored tool, ...). */
  warnings: RecipeProblem[];
}

export type ValidateResult = { ok: true; recipe: ValidatedRecipe } | { ok: false; problems: RecipeProblem[] };

const YAML_HINTS: Partial<Record<string, string>> = {
  DUPLICATE_KEY: 'a key may appear once per map; merge the two entries',
  TAB_AS_INDENT: 'indent with spaces, not tabs',
  BAD_INDENT: 'check the indentation against the lines above, and that every [ and { is closed',
  MISSING_CHAR: 'a quote or bracket is not closed',
  MULTIPLE_DOCS: 'a recipe is one YAML document; remove the --- separator',
  BLOCK_AS_IMPLICIT_KEY: 'a key must fit on one line; check for a missing colon above',
  MULTILINE_IMPLICIT_KEY: 'check for a missing colon or an unclosed bracket above',
};

/** Validates recipe text; `file` is its absolute path (relative paths resolve against its folder). */
export function validateRecipeText(text: string, file: string, opts: ValidateOptions = {}): ValidateResult {
  const cwd = opts.cwd ?? process.cwd();
  const displayFile = displayPath(file, cwd);
  const dir = dirname(file);
  const problems: RecipeProblem[] = [];
  const lineCounter = new LineCounter();
  const doc = parseDocument(text, { lineCounter, prettyErrors: true, uniqueKeys: true });

  for (const err of doc.errors) {
    const pos = err.linePos?.[0] ?? lineCounter.linePos(err.pos[0]);
    const message = (err.message.split('\n')[0] ?? err.code).replace(/ at line \d+, column \d+:?$/, '');
    problems.push({
      code: err.code === 'DUPLICATE_KEY' ? 'duplicate_key' : 'yaml_syntax',
      file: displayFile,
      line: pos.line,
      col: pos.col,
      message: err.code === 'DUPLICATE_KEY' ? 'duplicate key: map keys must be unique' : `YAML syntax: ${message}`,
      hint: YAML_HINTS[err.code],
    });
  }
  // Duplicate keys leave a usable document, so keep checking; other syntax errors do not.
  if (problems.some((p) => p.code === 'yaml_syntax')) return { ok: false, problems: sortProblems(problems) };

  let raw: unknown;
  try {
    // A small alias budget: recipes have no reason for deep alias fan-out ("billion laughs").
    raw = doc.toJS({ maxAliasCount: 100 });
  } catch (e) {
    problems.push({
      code: 'yaml_syntax',
      file: displayFile,
      line: 1,
      col: 1,
      message: `YAML: ${(e as Error).message}`,
    });
    return { ok: false, problems: sortProblems(problems) };
  }
  if (raw === null || typeof raw !== 'object' || Array.isArray(raw)) {
    problems.push({
      code: 'schema',
      file: displayFile,
      line: 1,
      col: 1,
      message:
        raw === null || raw === undefined
          ? 'the recipe is empty'
          : 'the recipe must be a map of keys, not a list or a value',
      hint: 'start with: name: my-recipe, then tasks: [...]',
    });
    return { ok: false, problems: sortProblems(problems) };
  }

  const sourceMap = new SourceMap(doc, lineCounter, text);
  const pending: PendingProblem[] = [];
  const parsed = RecipeSchema.safeParse(raw);
  if (!parsed.success) pending.push(...problemsFromZod(parsed.error.issues, raw));
  pending.push(
    ...checkSemantics(raw, {
      dir,
      file,
      ...(opts.env ? { env: opts.env } : {}),
      locate: (path) => sourceMap.locate(path),
      displayPath: (abs) => displayPath(abs, cwd),
    }).filter((p) => !(p.code === 'expression_here' && isPublishPath(p.path))),
    // publish: templates see their own names (summary, diffstat, ...): checked in publish-spec.ts.
    ...checkPublishBlocks(raw),
  );
  const seen = new Set<string>();
  for (const p of pending) {
    const pos = p.at ?? { file: displayFile, ...sourceMap.locate(p.path, { key: p.key, offset: p.offset }) };
    const problem: RecipeProblem = { code: p.code, file: pos.file, line: pos.line, col: pos.col, message: p.message };
    if (p.hint) problem.hint = p.hint;
    if (p.path.length) problem.path = pathToString(p.path);
    if (p.severity) problem.severity = p.severity;
    const sig = `${problem.file}:${problem.line}:${problem.col}:${problem.message}`;
    if (seen.has(sig)) continue;
    seen.add(sig);
    problems.push(problem);
  }
  // Warnings are reported with the errors, so one pass shows everything about the recipe.
  const warnings = problems.filter((p) => p.severity === 'warning');
  if (problems.length > warnings.length || !parsed.success) return { ok: false, problems: sortProblems(problems) };
  return {
    ok: true,
    recipe: { file, dir, displayFile, document: parsed.data, sourceMap, warnings: sortProblems(warnings) },
  };
}

/** Reads and validates a recipe file. A missing or unreadable file is a problem, not a throw. */
export function validateRecipeFile(path: string, opts: ValidateOptions = {}): ValidateResult {
  const cwd = opts.cwd ?? process.cwd();
  const file = resolve(cwd, path);
  let text: string;
  try {
    text = readInputText(file);
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    const message =
      code === 'ENOENT'
        ? 'recipe file not found'
        : code === 'EISDIR'
          ? 'this is a folder, not a recipe file'
          : `cannot read the recipe: ${(e as Error).message}`;
    const hint =
      code === 'EISDIR'
        ? `pass the YAML file inside it, e.g. ${path.replace(/\/$/, '')}/recipe.yaml`
        : code === 'ENOENT'
          ? 'check the path; it is relative to the current folder'
          : undefined;
    return {
      ok: false,
      problems: [
        { code: 'file_not_found', file: displayPath(file, cwd), line: 1, col: 1, message, ...(hint ? { hint } : {}) },
      ],
    };
  }
  return validateRecipeText(text, file, opts);
}
