// The recipe format: one zod schema, the single source of truth for parsing, for the JSON Schema
// that `orchestrate schema` prints (editor completion via yaml-language-server) and for the
// "did you mean" hints. Its building blocks are in schema-parts.ts. It only checks shapes;
// cross-references (needs, agents, expressions, files) are checked in semantic-checks.ts, and
// normalize.ts turns the parsed document into the clean LoadedRecipe the coordinator runs.
// Keys are a contract (design section 4): extend, never rename.
import { z } from 'zod';
import { DEFAULT_RUN_LIMITS } from '../runtime/run-limits.js';
import { McpServerEntrySchema } from '../tools/mcp/config.js';
import { attemptKeys } from './attempts-spec.js';
import { PublishBlockSchema, TaskPublishSchema } from './publish-spec.js';
import {
  BUILTIN_TOOLS,
  THINKING_LEVELS,
  ENV_NAME_PATTERN,
  approveGate,
  boardSeed,
  budget,
  coded,
  commandHooks,
  duration,
  envMap,
  forEach,
  loop,
  maxTurns,
  modelDeclaration,
  name,
  network,
  pacing,
  provider,
  providerDeclaration,
  fallbackList,
  retries,
  sandbox,
  verify,
} from './schema-parts.js';
export {
  BUILTIN_TOOLS,
  PROVIDERS,
  THINKING_LEVELS,
  type BuiltinTool,
  type ProviderName,
  NAME_PATTERN,
  DURATION_PATTERN,
  TOKEN_COUNT_PATTERN,
} from './schema-parts.js';

/** Task settings that `defaults` may also give; a task's own value wins. */
const taskSettings = {
  agent: name('agent').optional().describe('Name of the agent (from agents) that runs this task'),
  cwd: z.string().optional().describe('Working directory, relative to the recipe folder; may use ${{ item }}'),
  isolation: z
    .enum(['none', 'worktree'])
    .optional()
    .describe('none: work in cwd; worktree: a git worktree per instance'),
  merge: z
    .enum(['patch', 'branch', 'apply'])
    .optional()
    .describe(
      'Where the work of an isolation: worktree instance lands: patch (patches/<key>.diff only, the default), branch (a commit on branch orchestrate/<run-id>/<key>) or apply (applied to the checkout; a conflict fails the instance patch_conflict)',
    ),
  land: z
    .enum(['train', 'direct'])
    .optional()
    .describe(
      'How merge: apply lands in the checkout: train (the default: one at a time onto the current tip with a three-way merge, verify on the merged tree, repair on a conflict or a broken verify) or direct (the patch applied as it is; a conflict fails the instance)',
    ),
  land_order: z
    .enum(['completion', 'task'])
    .optional()
    .describe(
      'land: train: the order work lands in: completion (the default: as instances finish) or task (an instance lands only after every instance of the train tasks listed before it in the recipe (its needs counted before it), in the same repository, started or not, has landed, failed, been cancelled or skipped; a finished instance gives its concurrency slot back while it waits)',
    ),
  max_repairs: z
    .number()
    .int()
    .nonnegative()
    .optional()
    .describe(
      'land: train: times an instance whose work conflicts or breaks verify on the tip is re-run there (default 2)',
    ),
  serialize: z
    .enum(['overlapping'])
    .optional()
    .describe('overlapping: instances whose writes: globs overlap run one after another instead of in parallel'),
  context: z
    .enum(['fresh', 'summaries'])
    .optional()
    .describe('fresh: only the prompt; summaries: also the merged summaries of needed tasks'),
  retries: retries.optional(),
  timeout: duration.optional().describe('Wall-clock limit per instance'),
  idle_timeout: duration.optional().describe('Limit on time without model or tool progress (a stall)'),
  budget: budget.optional(),
  verify: verify.optional(),
  verify_retries: z
    .number()
    .int()
    .nonnegative()
    .optional()
    .describe('Times a failed verify is sent back to the same agent to fix'),
  on_failure: z
    .enum(['fail', 'continue'])
    .optional()
    .describe('fail: stop dependants and fail the run; continue: dependants still run'),
  max_parallel: z.number().int().positive().optional().describe('Instances of this fan-out running at once'),
  max_failed: z
    .number()
    .int()
    .nonnegative()
    .optional()
    .describe('Failed instances tolerated before the rest of the fan-out is cancelled'),
  env: envMap.optional(),
  trust_repo_config: z
    .boolean()
    .optional()
    .describe(
      "Read the configuration of the repository each instance works in (its cwd's .mcp.json, and .claude/settings.json hooks): its MCP servers start like the recipe folder's. Default false: a batch over foreign repositories starts none of their servers and runs none of their hooks",
    ),
};

export const TaskSchema = z
  .strictObject({
    id: name('task id').describe('Unique task id, referenced by needs and ${{ tasks.<id> }}'),
    description: z.string().optional(),
    prompt: z.string().optional().describe('What the agent is asked to do; may use ${{ }} expressions'),
    run: z.string().optional().describe('A plain shell step instead of an agent'),
    needs: z
      .union([name('task id'), z.array(name('task id'))])
      .optional()
      .describe('Tasks that must finish first'),
    for_each: forEach.optional(),
    as: name('the item variable').optional().describe('Name of the item variable in expressions (default: item)'),
    key: z
      .string()
      .optional()
      .describe('Expression giving each instance a stable key (default: derived from the item)'),
    writes: z
      .array(z.string())
      .optional()
      .describe('Globs of files this task may modify, relative to its cwd; overlapping writers never run together'),
    output: z.enum(['text', 'json']).optional().describe('text (default) or json: the final answer is parsed as JSON'),
    output_schema: z.record(z.string(), z.unknown()).optional().describe('JSON Schema the JSON output must match'),
    max_turns: maxTurns
      .optional()
      .describe(
        `Model calls one attempt of an instance may make across its prompts (task, verify and output fix-ups); over the agent's max_turns; 0 = no cap (default ${DEFAULT_RUN_LIMITS.maxTurns})`,
      ),
    model: z
      .string()
      .optional()
      .describe("This task's model instead of its agent's (--model still wins); agent tasks only"),
    provider: provider
      .optional()
      .describe("This task's provider instead of its agent's (--provider still wins); agent tasks only"),
    thinking: z
      .enum(THINKING_LEVELS)
      .optional()
      .describe("This task's reasoning effort instead of its agent's; agent tasks only"),
    pair: z
      .strictObject({
        planner: name('agent').describe('Agent that reviews and corrects'),
        worker: name('agent').describe('Agent that executes'),
        max_rounds: z.number().int().positive().optional().describe('Review rounds before the pair stops (default 3)'),
        on_max_rounds: z
          .enum(['fail', 'accept'])
          .optional()
          .describe(
            'When max_rounds pass without approval: fail (the default: the instance fails with class not_approved) or accept (the last work counts as done)',
          ),
      })
      .optional()
      .describe('Run a planner and a worker connected by a direct channel'),
    approve: approveGate.optional(),
    publish: TaskPublishSchema.optional(),
    ...attemptKeys,
    ...taskSettings,
  })
  .describe('One step of the recipe: an agent prompt, a planner/worker pair, or a shell step');

const inputDef = z.strictObject({
  type: z
    .enum(['string', 'number', 'boolean', 'list'])
    .optional()
    .describe('Value type (default: from the default value, else string)'),
  default: z.union([z.string(), z.number(), z.boolean(), z.array(z.unknown())]).optional(),
  required: z.boolean().optional().describe('The run refuses to start unless the value is given with --set'),
  description: z.string().optional(),
});

export const AgentSchema = z
  .strictObject({
    description: z.string().optional(),
    system: z.string().optional().describe('System prompt text'),
    system_file: z
      .string()
      .optional()
      .describe('Markdown agent file (frontmatter name/description/tools/model; the body is the system prompt)'),
    tools: z
      .array(z.string())
      .optional()
      .describe(`Tools the agent may use (built-in: ${BUILTIN_TOOLS.join(', ')})`),
    strict_tools: z
      .boolean()
      .optional()
      .describe(
        'Tools its system_file names that are not available here (WebFetch, Task, mcp__...) are errors instead of being ignored with a warning',
      ),
    model: z.string().optional(),
    provider: provider.optional(),
    fallback: fallbackList.optional(),
    script: z.string().optional().describe('Script file for the scripted provider'),
    thinking: z.enum(THINKING_LEVELS).optional(),
    max_turns: maxTurns
      .optional()
      .describe(
        `Model calls one attempt of an instance may make across its prompts (task, verify and output fix-ups); a task's max_turns wins; 0 = no cap (default ${DEFAULT_RUN_LIMITS.maxTurns})`,
      ),
    loop: loop.optional(),
    summaries: z
      .enum(['model', 'extractive'])
      .optional()
      .describe(
        'How its handoff and compaction summaries are written: model (the default with a real model; one more call when an instance ends) or extractive (built from the conversation, no call)',
      ),
    compaction: z
      .union([
        z.boolean(),
        z.strictObject({
          enabled: z.boolean().optional(),
          reserve_tokens: z.number().int().nonnegative().optional(),
          keep_recent_tokens: z.number().int().nonnegative().optional(),
        }),
      ])
      .optional()
      .describe('Context compaction: false to disable, or {enabled, reserve_tokens, keep_recent_tokens}'),
    bash: z
      .strictObject({
        allow: z.array(z.string()).optional().describe('Command patterns allowed (others are refused)'),
        deny: z.array(z.string()).optional().describe('Command patterns refused'),
      })
      .optional(),
    sandbox: sandbox
      .optional()
      .describe("Confinement of this agent's bash and its tasks' verify commands (default: the recipe's)"),
    network: network.optional(),
    skills: z.array(z.string()).optional().describe('Skill folders or files, relative to the recipe folder'),
    extensions: z.array(z.string()).optional().describe('Extension modules, relative to the recipe folder'),
    mcp_servers: z
      .array(name('MCP server name'))
      .optional()
      .describe(
        "MCP servers (from mcp_servers: or a .mcp.json) whose tools this agent gets as mcp__<server>__<tool>; default: those its mcp__ tools name, else all of the recipe's when tools: is not given",
      ),
    disallowed_tools: z
      .array(z.string())
      .optional()
      .describe('Tools this agent may not use, e.g. mcp__github__delete_* (patterns with *)'),
    board: z
      .boolean()
      .optional()
      .describe(
        "Give this agent the task board's tools (task_create, task_list, task_get, task_update); default: the recipe's board setting",
      ),
    hooks: commandHooks
      .optional()
      .describe(
        "This agent's own command hooks (Claude Code's format), run after the recipe's and the settings files'",
      ),
  })
  .describe('A reusable agent definition');

export const RecipeSchema = z
  .strictObject({
    name: z.string().min(1, coded('bad_name', 'name must not be empty')).describe('Recipe name, used in run ids'),
    description: z.string().optional(),
    version: z.union([z.string(), z.number()]).optional().describe('Version of this recipe'),
    model: z.string().optional().describe('Default model for every agent'),
    provider: provider.optional(),
    providers: z
      .record(z.string().min(1), providerDeclaration)
      .optional()
      .describe(
        'Model endpoints by name: {name: {type, base_url, api_key_env, api, compat, headers, local, rate_limit, pacing, fallback, budget}}',
      ),
    models: z
      .record(z.string().min(1), modelDeclaration)
      .optional()
      .describe(
        'Models to use beyond the built-in list, by the id Anthropic serves them under: {id: {price, context_window, max_tokens}}',
      ),
    script: z.string().optional().describe('Script file for the scripted provider (offline runs)'),
    concurrency: z.number().int().positive().optional().describe('Task instances running at once (default 4)'),
    rate_limit: z
      .union([z.number().positive(), z.record(z.string(), z.number().positive())], {
        error: coded(
          'bad_rate_limit',
          'rate_limit must be requests per minute, or a map of model name to requests per minute',
        ),
      })
      .optional()
      .describe('Model requests per minute, per model: one number for all, or {model: rpm}'),
    pacing: pacing.optional(),
    budget: budget.optional(),
    inputs: z.record(name('input name'), inputDef).optional().describe('Typed parameters, set with --set key=value'),
    defaults: z.strictObject(taskSettings).optional().describe('Settings applied to every task that does not set them'),
    secrets: z
      .array(z.string().regex(ENV_NAME_PATTERN, coded('bad_env_name', 'secret names are environment variable names')))
      .optional()
      .describe('Environment variables whose values are never logged'),
    env: envMap.optional(),
    sandbox: sandbox.optional(),
    network: network.optional(),
    cache_warmup: z
      .union([z.boolean(), z.number().int().min(2)])
      .optional()
      .describe(
        'Before a fan-out of at least this many instances calls the model, its first call goes out alone, so the others read the shared prompt prefix from the cache instead of all writing it (default 4; true: the default, false: never; anthropic provider only)',
      ),
    mcp_servers: z
      .record(name('MCP server name'), McpServerEntrySchema)
      .optional()
      .describe(
        'MCP servers agents may use, as in a .mcp.json: {command, args, env, cwd} or {type: http | sse, url, headers}; ${VAR} and ${VAR:-default} expand from the environment',
      ),
    board: z
      .union([z.boolean(), z.array(boardSeed)], {
        error: coded(
          'bad_board',
          'board must be true, false or a list of items ({subject, description, owner, blocked_by})',
        ),
      })
      .optional()
      .describe(
        'The run-wide task board agents share (task_create, task_list, task_get, task_update): on by default when the recipe runs more than one agent; false turns it off, a list of items seeds it',
      ),
    hooks: commandHooks
      .optional()
      .describe(
        "Command hooks of every agent (Claude Code's format), after those of ~/.orchestrate/settings.json, ~/.claude/settings.json and the recipe folder's .orchestrate/ and .claude/ settings; exit 0 passes, exit 2 blocks with stderr shown to the model",
      ),
    publish: PublishBlockSchema.optional(),
    agents: z.record(name('agent name'), AgentSchema).optional().describe('Named agent definitions'),
    tasks: z
      .array(TaskSchema)
      .min(1, coded('no_tasks', 'a recipe needs at least one task'))
      .describe('The steps, connected by needs'),
  })
  .describe('An orchestrate recipe: agents and a DAG of tasks');

export type RecipeDocument = z.output<typeof RecipeSchema>;
export type TaskDocument = z.output<typeof TaskSchema>;
export type AgentDocument = z.output<typeof AgentSchema>;

/** The recipe format as JSON Schema (draft 2020-12), as printed by `orchestrate schema`. */
export function recipeJsonSchema(): Record<string, unknown> {
  const generated = z.toJSONSchema(RecipeSchema, { target: 'draft-2020-12', io: 'input' }) as Record<string, unknown>;
  const { $schema, ...rest } = generated;
  return { $schema, title: 'orchestrate recipe', ...rest };
}

/** Splits a `[code] message` produced by `coded` into its parts. */
export function splitCodedMessage(message: string): { code?: string; message: string } {
  const m = /^\[([a-z_]+)\] ([\s\S]*)$/.exec(message);
  return m ? { code: m[1], message: m[2] ?? '' } : { message };
}
