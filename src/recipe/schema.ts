// The recipe format: one zod schema, the single source of truth for parsing, for the JSON Schema
// that `orchestrate schema` prints (editor completion via yaml-language-server) and for the
// "did you mean" hints. It only checks shapes; cross-references (needs, agents, expressions,
// files) are checked in semantic-checks.ts, and normalize.ts turns the parsed document into the
// clean LoadedRecipe the coordinator runs. Keys are a contract (design section 4): extend, never rename.
import { z } from 'zod';
import { DEFAULT_LOOP_DETECTION, DEFAULT_RUN_LIMITS } from '../runtime/run-limits.js';
import { McpServerEntrySchema } from '../tools/mcp/config.js';
import { BOARD_TOOL_NAMES } from './board-tool-names.js';
import { PublishBlockSchema, TaskPublishSchema } from './publish-spec.js';

/** Tools every agent may name without an extension providing them (the board's: task_create, task_list, ...). */
export const BUILTIN_TOOLS = [
  'read',
  'bash',
  'edit',
  'write',
  'ls',
  'grep',
  'find',
  'send_message',
  ...BOARD_TOOL_NAMES,
] as const;
export type BuiltinTool = (typeof BUILTIN_TOOLS)[number];

/**
 * Why a task instance failed; `retries.on` selects which of these are retried. budget and aborted
 * are never retried; loop, max_turns, compaction, not_approved and write_scope only when listed
 * here (a retry of a deterministic loop pays for it again).
 */
export const FAILURE_CLASSES = [
  'rate_limit',
  'overloaded',
  'timeout',
  'stalled',
  'crashed',
  'verify_failed',
  'error',
  'loop',
  'max_turns',
  'compaction',
  'not_approved',
  'write_scope',
] as const;

export const PROVIDERS = ['anthropic', 'scripted'] as const;
/** A built-in provider, or any name the recipe declares under providers: (or a preset). */
export type ProviderName = (typeof PROVIDERS)[number] | (string & {});

export const THINKING_LEVELS = ['off', 'minimal', 'low', 'medium', 'high', 'xhigh'] as const;

const sandbox = z
  .enum(['workspace', 'none'])
  .describe(
    'workspace (default): bash, verify and run: commands see the workspace read-write, the rest read-only, secrets hidden, no network; none: unconfined',
  );
const network = z.boolean().describe('Let sandboxed commands reach the network (default false)');

/**
 * Custom messages carry a problem code as a `[code] ` prefix so the issue mapper can classify
 * them without a second lookup table; the prefix never reaches the user.
 */
const coded = (code: string, message: string): string => `[${code}] ${message}`;

export const NAME_PATTERN = /^[A-Za-z_][A-Za-z0-9_-]*$/;
const ENV_NAME_PATTERN = /^[A-Za-z_][A-Za-z0-9_]*$/;
/** 90, "90", 30s, 10m, 1h, 1h30m, 500ms (a bare number means seconds). */
export const DURATION_PATTERN = /^(?:(?:\d+(?:\.\d+)?(?:ms|s|m|h))+|\d+(?:\.\d+)?)$/;
/** 400000, "400k", "3M", "1.5M". */
export const TOKEN_COUNT_PATTERN = /^\d+(?:\.\d+)?[kKmM]?$/;
/** A whole-string `${{ ... }}` expression. */
const WHOLE_EXPRESSION_PATTERN = /^\s*\$\{\{[\s\S]*\}\}\s*$/;

const name = (what: string) =>
  z
    .string()
    .regex(
      NAME_PATTERN,
      coded('bad_name', `${what} must start with a letter or _ and contain only letters, digits, _ and -`),
    );

const duration = z
  .union([
    z.number().positive(coded('bad_duration', 'a duration must be more than 0 seconds')),
    z.string().regex(DURATION_PATTERN, coded('bad_duration', 'bad duration')),
  ])
  .describe('A number of seconds, or a duration such as 30s, 10m, 1h, 1h30m, 500ms');

const tokenCount = z
  .union([
    z.number().int().nonnegative(),
    z.string().regex(TOKEN_COUNT_PATTERN, coded('bad_token_count', 'bad token count')),
  ])
  .describe('A number of tokens, or a short form such as 400k or 3M');

const budget = z
  .strictObject({
    usd: z.number().nonnegative().optional().describe('Stop admitting model calls once this many US dollars are spent'),
    tokens: tokenCount
      .optional()
      .describe('Stop admitting model calls once this many tokens (input + output) are used'),
  })
  .describe('Spending limit enforced by the coordinator before each model call');

const modelPrice = z.strictObject({
  input: z.number().nonnegative().describe('US dollars per million input tokens'),
  output: z.number().nonnegative().describe('US dollars per million output tokens'),
  cache_read: z.number().nonnegative().optional().describe('Per million cache-read tokens (default 0.1 x input)'),
  cache_write: z.number().nonnegative().optional().describe('Per million cache-write tokens (default 1.25 x input)'),
});

const modelDeclaration = z
  .strictObject({
    price: modelPrice.describe('What it costs, for budgets, usage and dry-run estimates'),
    context_window: tokenCount
      .optional()
      .describe('Input tokens it accepts (default 200k; compaction starts below it)'),
    max_tokens: tokenCount.optional().describe('Output tokens it can write in one reply (default 32k)'),
  })
  .describe('A model this version of orchestrate does not list (or new limits and prices for one it does)');

/** Model calls of one attempt of an instance, across its prompts (task, verify and output fix-ups). */
const maxTurns = z
  .number()
  .int(coded('bad_max_turns', 'max_turns must be a whole number of model calls'))
  .nonnegative(coded('bad_max_turns', 'max_turns must be 0 (no cap) or more'));

const loopThreshold = (least: number, what: string) =>
  z
    .number()
    .int(coded('bad_loop', `${what} must be a whole number`))
    .min(least, coded('bad_loop', `${what} must be at least ${least}`));

const loop = z
  .union(
    [
      z.boolean(),
      z.strictObject({
        identical_calls: loopThreshold(2, 'identical_calls')
          .optional()
          .describe(
            `The same tool call (name and arguments) this many times in a row is a loop (default ${DEFAULT_LOOP_DETECTION.identicalCalls})`,
          ),
        cycle_repeats: loopThreshold(2, 'cycle_repeats')
          .optional()
          .describe(
            `A cycle of 2 or 3 calls repeated this many times in a row is a loop (default ${DEFAULT_LOOP_DETECTION.cycleRepeats})`,
          ),
        repeated_text: loopThreshold(2, 'repeated_text')
          .optional()
          .describe(
            `The same answer text this many replies in a row is a loop (default ${DEFAULT_LOOP_DETECTION.repeatedText})`,
          ),
        grace_turns: loopThreshold(0, 'grace_turns')
          .optional()
          .describe(
            `Turns the model gets after the warning to break the pattern (default ${DEFAULT_LOOP_DETECTION.graceTurns})`,
          ),
      }),
    ],
    {
      error: coded(
        'bad_loop',
        'loop must be false (no loop detection), true, or {identical_calls, cycle_repeats, repeated_text, grace_turns}',
      ),
    },
  )
  .describe(
    'Loop detection: the agent is warned once, then stopped (failure class loop). false turns it off; a map changes the thresholds',
  );

const provider = z
  .string()
  .min(1)
  .describe(
    'anthropic, scripted (offline), an OpenAI-compatible preset (openai, openrouter, ollama, lmstudio, vllm, llamacpp), or a name declared under providers:',
  );

const providerDeclaration = z
  .strictObject({
    type: z.enum(['anthropic', 'openai-compatible']).describe('The protocol the endpoint speaks'),
    base_url: z
      .string()
      .url(coded('bad_url', 'base_url must be a URL, e.g. http://127.0.0.1:11434/v1'))
      .optional()
      .describe('Endpoint (OpenAI-compatible: up to /v1)'),
    api_key_env: z
      .string()
      .regex(ENV_NAME_PATTERN, coded('bad_env_name', 'api_key_env is the NAME of an environment variable, not the key'))
      .optional()
      .describe('Environment variable holding the key, read where the agent runs (a local server needs none)'),
    api: z
      .enum(['chat', 'responses'])
      .optional()
      .describe('OpenAI-compatible: Chat Completions (default) or the Responses API'),
    compat: z
      .strictObject({
        text_tool_calls: z
          .boolean()
          .optional()
          .describe('Take tool calls the model writes as JSON text (servers without a tool-call parser)'),
        tool_choice: z
          .enum(['object', 'string'])
          .optional()
          .describe('The tool_choice form the server accepts (default: learned from a 400)'),
        stream_usage: z.boolean().optional().describe('Send stream_options.include_usage (default true)'),
        max_tokens_field: z.enum(['max_tokens', 'max_completion_tokens']).optional(),
      })
      .optional()
      .describe('What this server does differently from api.openai.com'),
    headers: z
      .record(z.string(), z.string())
      .optional()
      .describe('Extra HTTP headers on every request (no secrets: use api_key_env)'),
    local: z
      .boolean()
      .optional()
      .describe(
        'Free per token (a server of your own): models not priced under models: cost 0 (default: true for the ollama, lmstudio, vllm and llamacpp presets and a loopback base_url)',
      ),
    rate_limit: z
      .union([z.number().positive(), z.record(z.string(), z.number().positive())], {
        error: coded(
          'bad_rate_limit',
          'a provider rate_limit must be requests per minute to the provider, or a map of model name to requests per minute',
        ),
      })
      .optional()
      .describe('Requests per minute to this provider: one number for all its models together, or {model: rpm}'),
    budget: budget
      .optional()
      .describe(
        "Spending limit of this provider's calls: once spent, its agents stop (failure budget, scope provider); the others go on",
      ),
  })
  .describe('A model endpoint');

const backoff = z
  .strictObject({
    initial: duration.optional().describe('Delay before the first retry (default 2s)'),
    max: duration.optional().describe('Longest delay between retries (default 60s)'),
    factor: z.number().min(1).optional().describe('Multiplier applied to the delay after each retry (default 2)'),
  })
  .describe('Exponential backoff between retries');

const retries = z
  .union(
    [
      z.number().int().nonnegative(),
      z.strictObject({
        count: z.number().int().nonnegative().optional().describe('How many times a failed instance is tried again'),
        backoff: backoff.optional(),
        on: z
          .array(z.enum(FAILURE_CLASSES))
          .optional()
          .describe('Failure classes that are retried (default: rate_limit, overloaded, timeout, stalled, crashed)'),
      }),
    ],
    { error: coded('bad_retries', 'retries must be a number or {count, backoff, on}') },
  )
  .describe(
    'Retries of a failed task instance: a count, or {count, backoff: {initial, max, factor}, on: [failure classes]}',
  );

const verifyStep = z.union([
  z.string(),
  z.strictObject({ run: z.string().describe('Shell command; exit code 0 passes'), name: z.string().optional() }),
]);
const verify = z
  .union([z.string(), z.array(verifyStep)], {
    error: coded('bad_verify', 'verify must be a shell command or a list of commands'),
  })
  .describe('Shell commands that must all exit 0 for the task to succeed (run in the task cwd)');

const envMap = z
  .record(
    z.string().regex(ENV_NAME_PATTERN, coded('bad_env_name', 'environment variable names use letters, digits and _')),
    z.union([z.string(), z.number(), z.boolean()]),
  )
  .describe('Environment variables; values may use ${{ inputs.x }}');

const forEach = z
  .union(
    [
      z.array(z.unknown()).describe('A literal list of items'),
      z.strictObject({
        glob: z.string().describe('Pattern relative to the recipe folder, e.g. repos/*; each item is a matched path'),
        type: z.enum(['dir', 'file', 'any']).optional().describe('What the glob matches (default: dir)'),
      }),
      z.literal('board').describe("The board's open items when the task starts (one instance per item)"),
      z
        .string()
        .regex(
          WHOLE_EXPRESSION_PATTERN,
          coded('bad_for_each', 'for_each must be a list, {glob: "..."} or a ${{ expression }}'),
        ),
    ],
    { error: coded('bad_for_each', 'for_each must be a list, {glob: "..."}, board or a ${{ expression }}') },
  )
  .describe(
    "Fan out: one task instance per item of a list, a {glob} of paths, ${{ tasks.<id>.output.<path> }}, or board (the task board's open items when the task starts)",
  );

const boardSeed = z
  .union([
    z.string().min(1).describe('The subject of a pending item'),
    z.strictObject({
      id: name('board item id').optional().describe('Its id (default: the next number)'),
      subject: z.string().min(1),
      description: z.string().optional(),
      owner: z.string().optional().describe('The agent (instance id) it is assigned to'),
      blocked_by: z
        .array(z.union([z.string(), z.number()]))
        .optional()
        .describe('Ids of items that must be completed first (seeds without an id are numbered 1, 2, ...)'),
    }),
  ])
  .describe('A task board item the run starts with');

/** An approval gate: the task's instances wait, spending nothing, until a user approves or rejects (or the timeout answers). */
const approveGate = z
  .strictObject({
    prompt: z
      .string()
      .optional()
      .describe('What the approver is asked (shown by watch, show, the run view and the MCP server)'),
    timeout: duration.optional().describe('How long to wait for an answer (default: until someone answers)'),
    on_timeout: z
      .enum(['reject', 'approve'])
      .optional()
      .describe('What the timeout answers: reject (the default: the task and its dependants are skipped) or approve'),
  })
  .refine((g) => g.on_timeout === undefined || g.timeout !== undefined, {
    message: coded(
      'bad_approve',
      'says what the timeout answers, but there is no timeout: add timeout: (e.g. 30m), or remove on_timeout',
    ),
    path: ['on_timeout'],
  })
  .describe(
    'Approval gate: the run pauses before this task (other branches go on) until `orchestrate approve|reject <run> --task <id>`, the run view or the MCP server answers',
  );

/**
 * Command hooks in Claude Code's settings format. Only the shape is checked here: the events,
 * keys and matchers are checked by the runtime's parseHooksConfig (hook-checks.ts), the same
 * check settings files get, so a hook block copied from a settings.json means the same here.
 */
const commandHooks = z
  .record(
    z.string().describe('A hook event: PreToolUse, PostToolUse, UserPromptSubmit, Stop, SubagentStop, SessionStart'),
    z.array(
      z
        .looseObject({
          matcher: z
            .string()
            .optional()
            .describe('Regex on tool names, matched whole (Bash|Edit, mcp__github__.*); absent or "*": every tool'),
          hooks: z.array(
            z
              .looseObject({
                type: z.string().describe('command (the only type run here)'),
                command: z.string().optional().describe("Shell command; the event's JSON arrives on stdin"),
                timeout: z.number().optional().describe('Seconds before it is killed (default 60)'),
              })
              .describe('One hook: {type: command, command, timeout}'),
          ),
        })
        .describe('{matcher, hooks: [...]}'),
    ),
  )
  .describe(
    "Command hooks in Claude Code's format ({PreToolUse: [{matcher: Bash, hooks: [{type: command, command: ./check.sh}]}]}): exit 0 passes, exit 2 blocks with stderr shown to the model",
  );

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
        'Model endpoints by name: {name: {type, base_url, api_key_env, api, compat, headers, local, rate_limit, budget}}',
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
