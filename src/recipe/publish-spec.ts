// The `publish:` block: how a run's per-repository changes become branches and pull/merge
// requests (a campaign). Set at the recipe level (every task whose instances changed a git
// repository) and overridable per task (`publish: false` turns it off for that task). This file
// owns its shape, the merged spec a task publishes with, the names its templates may use, and
// the load-time check of those templates (an unknown name or field is a validate error at
// file:line:col). Rendering happens later, from the run record (publish/).
import { z } from 'zod';
import { parseDuration } from './duration.js';
import { type Expr, parseTemplate } from './expression-parser.js';
import { EXPRESSION_FUNCTIONS } from './expressions.js';
import type { ApproveGate } from './loaded-recipe.js';
import type { PendingProblem } from './problems.js';
import { approveGate } from './schema-parts.js';
import { suggestionHint } from './suggest.js';
import { isRecord } from '../util/unknown-value.js';

export const FORGES = ['github', 'gitlab', 'git'] as const;
export type ForgeKind = (typeof FORGES)[number];

const template = (what: string) => z.string().min(1).describe(`${what}; may use \${{ }} (see publish templates)`);

/** What sends a published change back to its agent (`follow_up.on`). */
export const FOLLOW_UP_TRIGGERS = ['ci_failed', 'changes_requested', 'conflict'] as const;
export type FollowUpTrigger = (typeof FOLLOW_UP_TRIGGERS)[number];

/** What must hold before orchestrate turns on the forge's auto-merge (`merge_when`). */
export const MERGE_CONDITIONS = ['ci_passed', 'approved'] as const;
export type MergeCondition = (typeof MERGE_CONDITIONS)[number];

const followUpSchema = z
  .strictObject({
    on: z
      .array(z.enum(FOLLOW_UP_TRIGGERS))
      .min(1)
      .optional()
      .describe('What sends the change back to its agent (default all three): ci_failed, changes_requested, conflict'),
    max_rounds: z
      .number()
      .int()
      .min(1)
      .max(20)
      .optional()
      .describe('Follow-up rounds per changeset at most (default 2); a rebase for a conflict counts as one'),
    approve: approveGate
      .optional()
      .describe(
        'A gate before each round pushes: its commit is made but not pushed (and no comment answered) until `orchestrate approve|reject <run> --follow-up`, or the MCP server, answers; then publish --follow-up --apply pushes it. A rejected round is dropped and counts against max_rounds',
      ),
  })
  .describe(
    'orchestrate publish <run> --follow-up [--apply] (or status --watch --follow-up): a pull request whose CI fails, that gets review comments or no longer merges goes back to its agent, on its branch, with the failing log, the comments or the conflict; a new commit is pushed and each comment answered',
  );

const publishFields = {
  forge: z
    .enum(FORGES)
    .optional()
    .describe('github or gitlab: push the branch and open a pull/merge request; git: push the branch only'),
  remote: template(
    'Where branches are pushed: a URL (https://..., file://...), a path to a bare repository, or a remote name of the repository',
  ).optional(),
  repository: template(
    'The repository on the forge, owner/name (GitLab: the project path); default: taken from the remote URL',
  ).optional(),
  base_url: z
    .string()
    .url()
    .optional()
    .describe('API base URL for GitHub Enterprise (https://host/api/v3) or self-hosted GitLab (https://host/api/v4)'),
  branch: template('Branch name (default orchestrate/${{ task }}/${{ key }})').optional(),
  base: template('The branch the pull request targets (default main)').optional(),
  commit_message: template('Commit message (default: the title)').optional(),
  title: template('Pull request title (default "${{ task }}: ${{ key }}")').optional(),
  body: template('Pull request body (default: the summary and the diffstat)').optional(),
  draft: z.boolean().optional().describe('Open pull requests as drafts (default true)'),
  labels: z.array(z.string().min(1)).optional().describe('Labels added to each pull request'),
  reviewers: z.array(z.string().min(1)).optional().describe('Reviewers requested on each pull request (user names)'),
  approve: approveGate
    .optional()
    .describe(
      'Publish gate: once the changesets are computed the run waits (spending nothing) until `orchestrate approve|reject <run> --publish`, the run view or the MCP server answers; approved, the run publishes them (as publish --apply) and ends. Its prompt may use ${{ changesets.count }}, ${{ changesets.repos }}, ${{ changesets.text }}, ${{ task }}, ${{ run.id }}, ${{ inputs.X }}',
    ),
  follow_up: followUpSchema.optional(),
  merge_when: z
    .array(z.enum(MERGE_CONDITIONS))
    .min(1)
    .optional()
    .describe(
      "Turn on the forge's own auto-merge (GitHub auto-merge, GitLab merge when the pipeline succeeds) once these hold: ci_passed (CI is not failing; the forge waits for it to pass), approved (a reviewer approved); done by publish --follow-up --apply and status --watch --follow-up",
    ),
};

export const PublishBlockSchema = z
  .strictObject(publishFields)
  .describe(
    'Publish each changed repository as a branch and a pull/merge request: orchestrate publish <run> previews, --apply pushes',
  );

/** Per task: a block whose keys replace the recipe's, or false for no publishing. */
export const TaskPublishSchema = z
  .union([z.literal(false), PublishBlockSchema])
  .describe("This task's publish settings over the recipe's publish: block; false: its changes are not published");

export type PublishBlock = z.output<typeof PublishBlockSchema>;

/** What one task publishes with: the recipe's block with the task's keys over it, defaults filled in. */
export interface PublishSpec {
  forge: ForgeKind;
  remote: string;
  repository?: string;
  baseUrl?: string;
  branch: string;
  base: string;
  commitMessage: string;
  title: string;
  body: string;
  draft: boolean;
  labels: string[];
  reviewers: string[];
  /** `approve:`: the run waits at a publish gate before it publishes this task's changesets (a template prompt). */
  approve?: ApproveGate;
  /** `follow_up:`: what sends a published change back to its agent, and how many rounds at most. */
  followUp?: { on: FollowUpTrigger[]; maxRounds: number; approve?: ApproveGate };
  /** `merge_when:`: the conditions under which the forge's auto-merge is turned on. */
  mergeWhen?: MergeCondition[];
}

export const PUBLISH_DEFAULTS = {
  forge: 'git' as ForgeKind,
  remote: 'origin',
  branch: 'orchestrate/${{ task }}/${{ key }}',
  base: 'main',
  title: '${{ task }}: ${{ key }}',
  body: '${{ summary }}\n\n```\n${{ diffstat.text }}\n```\n',
  draft: true,
};

/** The spec of a task, or undefined when it does not publish (no block anywhere, or `publish: false`). */
export function publishSpecOf(
  recipe: PublishBlock | undefined,
  task: PublishBlock | false | undefined,
): PublishSpec | undefined {
  if (task === false || (!recipe && !task)) return undefined;
  const b: PublishBlock = { ...recipe, ...task };
  const title = b.title ?? PUBLISH_DEFAULTS.title;
  return {
    forge: b.forge ?? PUBLISH_DEFAULTS.forge,
    remote: b.remote ?? PUBLISH_DEFAULTS.remote,
    ...(b.repository !== undefined ? { repository: b.repository } : {}),
    ...(b.base_url !== undefined ? { baseUrl: b.base_url } : {}),
    branch: b.branch ?? PUBLISH_DEFAULTS.branch,
    base: b.base ?? PUBLISH_DEFAULTS.base,
    commitMessage: b.commit_message ?? title,
    title,
    body: b.body ?? PUBLISH_DEFAULTS.body,
    draft: b.draft ?? PUBLISH_DEFAULTS.draft,
    labels: b.labels ?? [],
    reviewers: b.reviewers ?? [],
    ...(b.approve ? { approve: publishGateOf(b.approve) } : {}),
    ...(b.follow_up
      ? {
          followUp: {
            on: b.follow_up.on ?? [...FOLLOW_UP_TRIGGERS],
            maxRounds: b.follow_up.max_rounds ?? 2,
            ...(b.follow_up.approve ? { approve: publishGateOf(b.follow_up.approve, FOLLOW_UP_GATE_PROMPT) } : {}),
          },
        }
      : {}),
    ...(b.merge_when ? { mergeWhen: b.merge_when } : {}),
  };
}

/** The default prompt of a publish gate (the changeset preview is added to every prompt). */
export const PUBLISH_GATE_PROMPT = 'Publish the changesets of ${{ task }}?';

/** The default prompt of a follow-up round's gate (the round's changeset and evidence are added to it). */
export const FOLLOW_UP_GATE_PROMPT = 'Push this follow-up round?';

function publishGateOf(g: NonNullable<PublishBlock['approve']>, prompt = PUBLISH_GATE_PROMPT): ApproveGate {
  const timeoutMs = g.timeout !== undefined ? parseDuration(g.timeout) : undefined;
  return {
    prompt: g.prompt ?? prompt,
    ...(timeoutMs !== undefined ? { timeoutMs } : {}),
    onTimeout: g.on_timeout ?? 'reject',
  };
}

/** The keys of a publish block whose strings are templates. */
export const PUBLISH_TEMPLATE_KEYS = [
  'remote',
  'repository',
  'branch',
  'base',
  'commit_message',
  'title',
  'body',
] as const;

/**
 * Names a publish template may use, and their fields (null: any field, [] : none). env and tasks
 * are left out on purpose (what a template renders leaves the machine, and secrets live in env),
 * and so is the for_each item: the run record keeps each instance's key, not its item.
 */
export const PUBLISH_NAMES: Readonly<Record<string, readonly string[] | null>> = {
  inputs: null,
  key: [],
  task: [],
  summary: [],
  diffstat: ['files', 'insertions', 'deletions', 'text'],
  repo: ['name', 'path'],
  run: ['id'],
};

/** Names a publish gate's prompt may use: the changesets it publishes (counted, their repositories, their diffstat). */
export const PUBLISH_GATE_NAMES: Readonly<Record<string, readonly string[] | null>> = {
  inputs: null,
  task: [],
  run: ['id'],
  changesets: ['count', 'repos', 'files', 'insertions', 'deletions', 'text'],
};

type Path = (string | number)[];

interface CheckContext {
  inputs: readonly string[];
  /** The item's names in the task (item and its `as` name): named in the message when used. */
  itemNames: readonly string[];
  /** The names known (default PUBLISH_NAMES; a publish gate's prompt: PUBLISH_GATE_NAMES). */
  names?: Readonly<Record<string, readonly string[] | null>>;
}

function chainOf(e: Expr): { root: string; rootPos: number; first?: { key: unknown; pos: number } } | undefined {
  let cur: Expr = e;
  let first: { key: unknown; pos: number } | undefined;
  for (;;) {
    if (cur.kind === 'member') {
      first = { key: cur.property, pos: cur.pos };
      cur = cur.object;
    } else if (cur.kind === 'index') {
      first = { key: cur.index.kind === 'literal' ? cur.index.value : undefined, pos: cur.index.pos };
      cur = cur.object;
    } else if (cur.kind === 'name') return { root: cur.name, rootPos: cur.pos, ...(first ? { first } : {}) };
    else return undefined;
  }
}

/** Problems of one template: unknown names, fields, inputs and functions, with offsets into it. */
export function checkPublishTemplate(
  text: string,
  ctx: CheckContext,
): { message: string; hint?: string; offset: number }[] {
  const parsed = parseTemplate(text);
  if (!parsed.ok) return [{ message: parsed.error.message, hint: parsed.error.hint, offset: parsed.error.offset }];
  const out: { message: string; hint?: string; offset: number }[] = [];
  const known = ctx.names ?? PUBLISH_NAMES;
  const names = Object.keys(known);
  const visit = (e: Expr): void => {
    if (e.kind === 'literal') return;
    if (e.kind === 'call') {
      if (!EXPRESSION_FUNCTIONS[e.callee])
        out.push({
          message: `unknown function ${e.callee}()`,
          offset: e.pos,
          hint: suggestionHint(e.callee, Object.keys(EXPRESSION_FUNCTIONS), 'functions'),
        });
      e.args.forEach(visit);
      return;
    }
    if (e.kind === 'not') return void visit(e.operand);
    if (e.kind === 'binary') {
      visit(e.left);
      visit(e.right);
      return;
    }
    if (e.kind === 'index' && e.index.kind !== 'literal') visit(e.index);
    const chain = chainOf(e);
    if (!chain) {
      if (e.kind === 'member' || e.kind === 'index') visit(e.object);
      return;
    }
    const fields = Object.hasOwn(known, chain.root) ? known[chain.root] : undefined;
    if (fields === undefined) {
      const why =
        chain.root === 'env' || chain.root === 'tasks'
          ? `${chain.root} is not available in publish templates (what they render leaves this machine)`
          : chain.root === 'item' || ctx.itemNames.includes(chain.root)
            ? `"${chain.root}" (the for_each item) is not available in publish templates: use key or repo.name`
            : `unknown name "${chain.root}"`;
      const what = ctx.names ? 'a publish gate prompt knows' : 'publish templates know';
      out.push({ message: why, offset: chain.rootPos, hint: `${what} ${names.join(', ')}` });
      return;
    }
    const key = chain.first?.key;
    if (chain.root === 'inputs') {
      if (typeof key === 'string' && !ctx.inputs.includes(key))
        out.push({
          message: `unknown input "${key}"`,
          offset: chain.first!.pos,
          hint: ctx.inputs.length ? suggestionHint(key, ctx.inputs, 'inputs') : 'declare it under inputs:',
        });
      return;
    }
    if (fields === null || chain.first === undefined) return;
    if (typeof key !== 'string' || !fields.includes(key))
      out.push({
        message: fields.length
          ? `${chain.root} has no field ${JSON.stringify(key)}`
          : `${chain.root} is text and has no fields`,
        offset: chain.first.pos,
        ...(fields.length ? { hint: suggestionHint(String(key), fields, 'fields') } : {}),
      });
  };
  for (const part of parsed.value.parts) if (part.kind === 'expr') visit(part.expr);
  return out;
}

/** Every template problem of the recipe's and the tasks' publish blocks (the raw document, read defensively). */
export function checkPublishBlocks(raw: unknown): PendingProblem[] {
  if (!isRecord(raw)) return [];
  const inputs = isRecord(raw.inputs) ? Object.keys(raw.inputs) : [];
  const out: PendingProblem[] = [];
  const tasks = Array.isArray(raw.tasks) ? raw.tasks : [];
  const asNames = tasks.flatMap((t) => (isRecord(t) && typeof t.as === 'string' ? [t.as] : []));
  const checkBlock = (block: unknown, path: Path, itemNames: readonly string[]): void => {
    if (!isRecord(block)) return;
    for (const k of PUBLISH_TEMPLATE_KEYS) {
      const text = block[k];
      if (typeof text !== 'string') continue;
      for (const issue of checkPublishTemplate(text, { inputs, itemNames })) {
        out.push({
          code: 'expression_reference',
          path: [...path, k],
          offset: issue.offset,
          message: `publish.${k}: ${issue.message}`,
          ...(issue.hint ? { hint: issue.hint } : {}),
        });
      }
    }
    const gate = block.approve;
    if (isRecord(gate) && typeof gate.prompt === 'string')
      for (const issue of checkPublishTemplate(gate.prompt, { inputs, itemNames, names: PUBLISH_GATE_NAMES }))
        out.push({
          code: 'expression_reference',
          path: [...path, 'approve', 'prompt'],
          offset: issue.offset,
          message: `publish.approve.prompt: ${issue.message}`,
          ...(issue.hint ? { hint: issue.hint } : {}),
        });
  };
  checkBlock(raw.publish, ['publish'], asNames);
  tasks.forEach((t, i) => {
    if (!isRecord(t)) return;
    const items = t.for_each !== undefined ? ['item', ...(typeof t.as === 'string' ? [t.as] : [])] : [];
    checkBlock(t.publish, ['tasks', i, 'publish'], items);
  });
  return out;
}

/** True for a document path inside a publish block (its templates are checked here, not as misplaced). */
export function isPublishPath(path: readonly (string | number)[]): boolean {
  return path[0] === 'publish' || (path[0] === 'tasks' && path[2] === 'publish');
}
