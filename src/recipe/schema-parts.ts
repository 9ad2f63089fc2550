// The recipe schema's building blocks: names, durations, token counts, budgets, prices, loop and
// retry settings, providers, verify steps, fan-outs, board seeds, approval gates and command hooks.
// schema.ts puts them together into the task, agent and recipe schemas.
import { z } from 'zod';
import { DEFAULT_LOOP_DETECTION } from '../runtime/run-limits.js';
import { BOARD_TOOL_NAMES } from './board-tool-names.js';
import { RETRY_FAILURE_CLASSES } from './failure-classes.js';

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

export const PROVIDERS = ['anthropic', 'scripted'] as const;
/** A built-in provider, or any name the recipe declares under providers: (or a preset). */
export type ProviderName = (typeof PROVIDERS)[number] | (string & {});

export const THINKING_LEVELS = ['off', 'minimal', 'low', 'medium', 'high', 'xhigh'] as const;

export const sandbox = z
  .enum(['workspace', 'none'])
  .describe(
    'workspace (default): bash, verify and run: commands see the workspace read-write, the rest read-only, secrets hidden, no network; none: unconfined',
  );
export const network = z.boolean().describe('Let sandboxed commands reach the network (default false)');

/**
 * Custom messages carry a problem code as a `[code] ` prefix so the issue mapper can classify
 * them without a second lookup table; the prefix never reaches the user.
 */
export const coded = (code: string, message: string): string => `[${code}] ${message}`;

export const NAME_PATTERN = /^[A-Za-z_][A-Za-z0-9_-]*$/;
export const ENV_NAME_PATTERN = /^[A-Za-z_][A-Za-z0-9_]*$/;
/** 90, "90", 30s, 10m, 1h, 1h30m, 500ms (a bare number means seconds). */
export const DURATION_PATTERN = /^(?:(?:\d+(?:\.\d+)?(?:ms|s|m|h))+|\d+(?:\.\d+)?)$/;
/** 400000, "400k", "3M", "1.5M". */
export const TOKEN_COUNT_PATTERN = /^\d+(?:\.\d+)?[kKmM]?$/;
/** A whole-string `${{ ... }}` expression. */
export const WHOLE_EXPRESSION_PATTERN = /^\s*\$\{\{[\s\S]*\}\}\s*$/;

export const name = (what: string) =>
  z
    .string()
    .regex(
      NAME_PATTERN,
      coded('bad_name', `${what} must start with a letter or _ and contain only letters, digits, _ and -`),
    );

export const duration = z
  .union([
    z.number().positive(coded('bad_duration', 'a duration must be more than 0 seconds')),
    z.string().regex(DURATION_PATTERN, coded('bad_duration', 'bad duration')),
  ])
  .describe('A number of seconds, or a duration such as 30s, 10m, 1h, 1h30m, 500ms');

export const tokenCount = z
  .union([
    z.number().int().nonnegative(),
    z.string().regex(TOKEN_COUNT_PATTERN, coded('bad_token_count', 'bad token count')),
  ])
  .describe('A number of tokens, or a short form such as 400k or 3M');

export const budget = z
  .strictObject({
    usd: z.number().nonnegative().optional().describe('Stop admitting model calls once this many US dollars are spent'),
    tokens: tokenCount
      .optional()
      .describe('Stop admitting model calls once this many tokens (input + output) are used'),
  })
  .describe('Spending limit enforced by the coordinator before each model call');

export const modelPrice = z.strictObject({
  input: z.number().nonnegative().describe('US dollars per million input tokens'),
  output: z.number().nonnegative().describe('US dollars per million output tokens'),
  cache_read: z.number().nonnegative().optional().describe('Per million cache-read tokens (default 0.1 x input)'),
  cache_write: z.number().nonnegative().optional().describe('Per million cache-write tokens (default 1.25 x input)'),
});

export const modelDeclaration = z
  .strictObject({
    price: modelPrice.describe('What it costs, for budgets, usage and dry-run estimates'),
    context_window: tokenCount
      .optional()
      .describe('Input tokens it accepts (default 200k; compaction starts below it)'),
    max_tokens: tokenCount.optional().describe('Output tokens it can write in one reply (default 32k)'),
  })
  .describe('A model this version of orchestrate does not list (or new limits and prices for one it does)');

/** Model calls of one attempt of an instance, across its prompts (task, verify and output fix-ups). */
export const maxTurns = z
  .number()
  .int(coded('bad_max_turns', 'max_turns must be a whole number of model calls'))
  .nonnegative(coded('bad_max_turns', 'max_turns must be 0 (no cap) or more'));

export const loopThreshold = (least: number, what: string) =>
  z
    .number()
    .int(coded('bad_loop', `${what} must be a whole number`))
    .min(least, coded('bad_loop', `${what} must be at least ${least}`));

export const loop = z
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

export const provider = z
  .string()
  .min(1)
  .describe(
    'anthropic, scripted (offline), an OpenAI-compatible preset (openai, openrouter, ollama, lmstudio, vllm, llamacpp), or a name declared under providers:',
  );

/** `fallback:` of an agent or a provider (checked in fallback.ts: known provider, known model). */
export const fallbackList = z
  .array(z.string().min(1))
  .min(1)
  .describe(
    'Models its calls move to, in order, when its own stays overloaded or down (529, 5xx, no connection, rate limit; retries spent): provider/model each, e.g. [anthropic/claude-haiku-4-5, openrouter/openai/gpt-5-mini]; the own model is tried again after a cool-down of 60 s',
  );

/** `pacing:` of the recipe or of a provider: how its model calls are paced (orchestrator/pacing/permit-broker.ts). */
export const pacing = z
  .enum(['adaptive', 'fixed'])
  .describe(
    'adaptive (default): calls are paced by the limits the provider states in its response headers, rate_limit: as an upper bound; fixed: by rate_limit: alone (the headers are ignored; no rate_limit: means no pacing)',
  );

export const providerDeclaration = z
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
    pacing: pacing.optional(),
    fallback: fallbackList.optional(),
    budget: budget
      .optional()
      .describe(
        "Spending limit of this provider's calls: once spent, its agents stop (failure budget, scope provider); the others go on",
      ),
  })
  .describe('A model endpoint');

export const backoff = z
  .strictObject({
    initial: duration.optional().describe('Delay before the first retry (default 2s)'),
    max: duration.optional().describe('Longest delay between retries (default 60s)'),
    factor: z.number().min(1).optional().describe('Multiplier applied to the delay after each retry (default 2)'),
  })
  .describe('Exponential backoff between retries');

export const retries = z
  .union(
    [
      z.number().int().nonnegative(),
      z.strictObject({
        count: z.number().int().nonnegative().optional().describe('How many times a failed instance is tried again'),
        backoff: backoff.optional(),
        on: z
          .array(z.enum(RETRY_FAILURE_CLASSES))
          .optional()
          .describe('Failure classes that are retried (default: rate_limit, overloaded, timeout, stalled, crashed)'),
      }),
    ],
    { error: coded('bad_retries', 'retries must be a number or {count, backoff, on}') },
  )
  .describe(
    'Retries of a failed task instance: a count, or {count, backoff: {initial, max, factor}, on: [failure classes]}',
  );

export const verifyStep = z.union([
  z.string(),
  z.strictObject({ run: z.string().describe('Shell command; exit code 0 passes'), name: z.string().optional() }),
]);
export const verify = z
  .union([z.string(), z.array(verifyStep)], {
    error: coded('bad_verify', 'verify must be a shell command or a list of commands'),
  })
  .describe('Shell commands that must all exit 0 for the task to succeed (run in the task cwd)');

export const envMap = z
  .record(
    z.string().regex(ENV_NAME_PATTERN, coded('bad_env_name', 'environment variable names use letters, digits and _')),
    z.union([z.string(), z.number(), z.boolean()]),
  )
  .describe('Environment variables; values may use ${{ inputs.x }}');

export const forEach = z
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

export const boardSeed = z
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
export const approveGate = z
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
export const commandHooks = z
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
