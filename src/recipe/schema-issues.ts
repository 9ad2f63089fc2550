// Turns zod issues into recipe problems a person can act on: the key that is wrong, what was
// expected in plain words, and a hint ("did you mean ..."). Union issues are unwrapped to the
// branch that matches the value's shape so nested mistakes are not hidden behind "Invalid input".
import type { z } from 'zod';
import { type PendingProblem, type RecipeProblemCode, pathToString } from './problems.js';
import { recipeJsonSchema, splitCodedMessage } from './schema.js';
import { didYouMean } from './suggest.js';

type Path = (string | number)[];
type JsonSchemaNode = {
  properties?: Record<string, JsonSchemaNode>;
  items?: JsonSchemaNode;
  additionalProperties?: JsonSchemaNode | boolean;
  anyOf?: JsonSchemaNode[];
};

const CODE_HINTS: Partial<Record<RecipeProblemCode, string>> = {
  bad_duration: 'use a number of seconds or a duration such as 30s, 10m, 1h30m, 500ms',
  bad_token_count: 'use a whole number or a short form such as 400k or 3M',
  bad_name: 'names start with a letter or _ and use only letters, digits, _ and -',
  bad_max_turns: 'e.g. max_turns: 50 (0 = no cap)',
  bad_loop: 'e.g. loop: false, or loop: {identical_calls: 6, grace_turns: 3}',
  bad_retries: 'e.g. retries: 2, or retries: {count: 2, backoff: {initial: 5s}, on: [rate_limit, timeout]}',
  bad_for_each:
    'e.g. for_each: [a, b], for_each: {glob: "repos/*"}, for_each: board, or for_each: ${{ tasks.plan.output.items }}',
  bad_board: 'e.g. board: false, or board: [Write the docs, {subject: Build it, blocked_by: [1]}]',
  bad_verify: 'e.g. verify: ["npm test", "npx tsc --noEmit"]',
  bad_rate_limit: 'e.g. rate_limit: 50, or rate_limit: {claude-sonnet-4-5: 50}',
  bad_env_name: 'use letters, digits and _, not starting with a digit',
  no_tasks: 'add one: tasks: [{id: hello, prompt: "Say hello"}]',
};

/** Shows `value` in a message: strings quoted, structures by kind. */
function showValue(v: unknown): string {
  if (typeof v === 'string') return JSON.stringify(v.length > 40 ? `${v.slice(0, 37)}...` : v);
  return kindOf(v);
}

function kindOf(v: unknown): string {
  if (v === undefined) return 'nothing';
  if (v === null) return 'empty (null)';
  if (Array.isArray(v)) return 'a list';
  if (typeof v === 'object') return 'a map';
  if (typeof v === 'string') return 'text';
  return `${typeof v} ${String(v)}`;
}

const EXPECTED: Record<string, string> = {
  string: 'text',
  number: 'a number',
  int: 'a whole number',
  boolean: 'true or false',
  array: 'a list',
  object: 'a map of keys',
  record: 'a map of keys',
};

export function valueAt(root: unknown, path: readonly (string | number)[]): unknown {
  let cur = root;
  for (const seg of path) {
    if (cur === null || typeof cur !== 'object') return undefined;
    cur = (cur as Record<string | number, unknown>)[seg];
  }
  return cur;
}

/** "task \"apply\" retries.backoff", "agent \"worker\"", "budget.usd": the owner of a path, in words. */
export function describePath(path: readonly (string | number)[], raw: unknown): string {
  if (path.length === 0) return 'the recipe';
  const [head, second, ...rest] = path;
  const tail = rest.length ? ` ${pathToString(rest)}` : '';
  if (head === 'tasks' && typeof second === 'number') {
    const id = valueAt(raw, ['tasks', second, 'id']);
    return `${typeof id === 'string' ? `task "${id}"` : `tasks[${second}]`}${tail}`;
  }
  if (head === 'agents' && second !== undefined) return `agent "${second}"${tail}`;
  if (head === 'inputs' && second !== undefined) return `input "${second}"${tail}`;
  return pathToString(path);
}

let cachedJsonSchema: JsonSchemaNode | undefined;

/** The keys allowed at `path`, read from the JSON Schema the zod schema generates. */
export function knownKeysAt(path: readonly (string | number)[]): string[] {
  cachedJsonSchema ??= recipeJsonSchema() as JsonSchemaNode;
  const step = (node: JsonSchemaNode, seg: string | number): JsonSchemaNode | undefined => {
    if (node.properties && typeof seg === 'string' && node.properties[seg]) return node.properties[seg];
    if (node.items && typeof seg === 'number') return node.items;
    if (node.additionalProperties && typeof node.additionalProperties === 'object') return node.additionalProperties;
    for (const option of node.anyOf ?? []) {
      const found = step(option, seg);
      if (found) return found;
    }
    return undefined;
  };
  let node: JsonSchemaNode | undefined = cachedJsonSchema;
  for (const seg of path) {
    node = node && step(node, seg);
    if (!node) return [];
  }
  const withProps = node.properties ? node : node.anyOf?.find((o) => o.properties);
  return Object.keys(withProps?.properties ?? {});
}

type Issue = z.core.$ZodIssue;

function fromIssue(issue: Issue, prefix: Path, raw: unknown, out: PendingProblem[]): void {
  const path: Path = [...prefix, ...(issue.path as Path)];
  const where = describePath(path, raw);
  const value = valueAt(raw, path);
  const { code: coded, message: codedMessage } = splitCodedMessage(issue.message);
  const push = (p: Omit<PendingProblem, 'path'> & { path?: Path }) => out.push({ path, ...p });

  switch (issue.code) {
    case 'unrecognized_keys': {
      const known = knownKeysAt(path);
      for (const key of issue.keys) {
        const suggestion = didYouMean(key, known);
        out.push({
          code: 'unknown_key',
          path: [...path, key],
          key: true,
          message: `unknown key "${key}" in ${path.length ? where : 'the recipe'}`,
          hint: suggestion
            ? `did you mean "${suggestion}"?`
            : known.length
              ? `allowed here: ${known.join(', ')}`
              : undefined,
        });
      }
      return;
    }
    case 'invalid_union': {
      // Keep the branches whose top-level type matched; their issues say what is really wrong.
      const matching = issue.errors.filter(
        (branch) => !branch.some((i) => i.code === 'invalid_type' && i.path.length === 0),
      );
      if (matching.length > 0 && !coded) {
        const best = matching.reduce((a, b) => (b.length < a.length ? b : a));
        for (const i of best) fromIssue(i, path, raw, out);
        return;
      }
      if (matching.length === 1 && coded) {
        for (const i of matching[0]!) fromIssue(i, path, raw, out);
        return;
      }
      const code = (coded ?? 'schema') as RecipeProblemCode;
      push({
        code,
        message: `${where}: ${codedMessage === 'Invalid input' ? 'has the wrong form' : codedMessage} (got ${showValue(value)})`,
        hint: CODE_HINTS[code],
      });
      return;
    }
    case 'invalid_type': {
      if (value === undefined) {
        const parent = path.slice(0, -1);
        const key = path.at(-1);
        const owner = parent.length ? describePath(parent, raw) : 'the recipe';
        const p: PendingProblem = {
          code: 'missing_key',
          path: parent,
          message: `${owner} is missing the required key "${String(key)}"`,
        };
        if (key === 'id' && parent[0] === 'tasks') p.hint = 'every task needs an id, e.g. id: build';
        out.push(p);
        return;
      }
      const expected = EXPECTED[issue.expected] ?? issue.expected;
      push({ code: 'schema', message: `${where} must be ${expected}, not ${showValue(value)}` });
      return;
    }
    case 'invalid_value': {
      const allowed = issue.values.map((v) => String(v));
      const suggestion = typeof value === 'string' ? didYouMean(value, allowed) : undefined;
      push({
        code: 'schema',
        message: `${where} must be one of: ${allowed.join(', ')} (got ${showValue(value)})`,
        hint: suggestion ? `did you mean "${suggestion}"?` : undefined,
      });
      return;
    }
    case 'too_small':
    case 'too_big': {
      if (coded) {
        push({
          code: coded as RecipeProblemCode,
          message: `${where}: ${codedMessage}`,
          hint: CODE_HINTS[coded as RecipeProblemCode],
        });
        return;
      }
      const bound = issue.code === 'too_small' ? issue.minimum : issue.maximum;
      const inclusive = issue.inclusive !== false;
      const word =
        issue.code === 'too_small' ? (inclusive ? 'at least' : 'more than') : inclusive ? 'at most' : 'less than';
      const unit = issue.origin === 'array' ? ' items' : issue.origin === 'string' ? ' characters' : '';
      push({
        code: 'schema',
        message: `${where} must be ${word} ${String(bound)}${unit} (got ${issue.origin === 'array' ? `${Array.isArray(value) ? value.length : 0} items` : showValue(value)})`,
      });
      return;
    }
    case 'invalid_format': {
      const code = (coded ?? 'schema') as RecipeProblemCode;
      // Durations and token counts read best as `bad duration "10 minutes"`; others say what was given.
      const shown =
        code === 'bad_duration' || code === 'bad_token_count' ? showValue(value) : `(got ${showValue(value)})`;
      push({ code, message: `${where}: ${codedMessage} ${shown}`, hint: CODE_HINTS[code] });
      return;
    }
    case 'invalid_key': {
      for (const inner of issue.issues) {
        const split = splitCodedMessage(inner.message);
        const code = (split.code ?? 'schema') as RecipeProblemCode;
        out.push({
          code,
          path,
          key: true,
          message: `${describePath(path.slice(0, -1), raw)}: ${split.message} (got ${showValue(path.at(-1))})`,
          hint: CODE_HINTS[code],
        });
      }
      return;
    }
    default: {
      const code = (coded ?? 'schema') as RecipeProblemCode;
      push({ code, message: `${where}: ${codedMessage}`, hint: CODE_HINTS[code] });
    }
  }
}

/** Every zod issue of a failed parse, as problems at document paths. */
export function problemsFromZod(issues: readonly Issue[], raw: unknown): PendingProblem[] {
  const out: PendingProblem[] = [];
  for (const issue of issues) fromIssue(issue, [], raw, out);
  return out;
}
