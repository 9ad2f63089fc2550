// `orchestrate agent [prompt]`: one agent, delivered as a final answer (--mode text), a JSON
// event stream (--mode json), the RPC protocol on stdin/stdout (--mode rpc), or the interactive
// terminal UI (--mode interactive; the default on a terminal without a prompt). The logic lives
// in src/runtime/modes and src/display/interactive; this file maps flags to createAgentSession
// options and exit codes.
import type { Argv } from 'yargs';
import { existsSync } from 'node:fs';
import { homedir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import type { AgentThinkingLevel } from '../../agent/types.js';
import { DECLARED_MODEL_DEFAULTS, modelFromSpec, priceOf } from '../../ai/models.js';
import { findProvider } from '../../ai/provider-config.js';
import { parseTokenCount } from '../../recipe/duration.js';
import {
  AgentSessionConfigError,
  DEFAULT_LOOP_DETECTION,
  HooksConfigError,
  hasHooks,
  loadHookSources,
  orchestrateHome,
  DEFAULT_RUN_LIMITS,
  createAgentSession,
  cutOffTurn,
  resumeCutOffTurn,
  runJsonMode,
  runPrintMode,
  runRpcMode,
  textOrFile,
  type AgentSession,
  type CreateAgentSessionOptions,
  type ModeOutput,
} from '../../runtime/index.js';
import { BUILTIN_TOOL_NAMES } from '../../tools/coding-tools.js';
import { checkAgentPathFlags } from '../agent-path-flags.js';
import { addMcpServers, RequiredMcpServers } from '../agent-mcp-required.js';
import { finishAgentTracing, startAgentTracing, withOtelOption } from '../agent-otel.js';
import { type CliContext, EXIT } from '../cli-io.js';
import type { CliCommand, CommandArgs } from '../command.js';

const MODES = ['text', 'json', 'rpc', 'interactive'] as const;
const THINKING = ['off', 'minimal', 'low', 'medium', 'high', 'xhigh'] as const;

/**
 * Caps of `orchestrate agent` when no flag changes them. Turns and loop thresholds are the
 * runtime's (DEFAULT_RUN_LIMITS, DEFAULT_LOOP_DETECTION); the spend cap is this command's own:
 * one agent left alone on a hard task can otherwise run for hours. $5 covers a long session on
 * a large model (a 100-turn refactor is $1-3 on Sonnet) and stops a runaway long before it costs
 * real money. `--budget-usd none` removes it.
 */
export const AGENT_CLI_DEFAULTS = {
  budgetUsd: 5,
} as const;

function agentOptions(y: Argv): Argv<object> {
  return (
    withOtelOption(y)
      .positional('prompt', {
        type: 'string',
        array: true,
        describe:
          'The prompt (words are joined); read from piped stdin when omitted. With --continue / --session FILE it may be left out to only finish a turn a kill cut off',
      })
      .option('mode', {
        type: 'string',
        choices: MODES,
        describe:
          'text: print the final answer; json: every event as a JSON line; rpc: JSON commands on stdin; interactive: the terminal UI (default on a terminal when no prompt is given, else text)',
      })
      .option('session', {
        type: 'string',
        describe: 'Session file to open, or create when missing (--no-session: keep it in memory)',
      })
      .option('continue', {
        alias: 'c',
        type: 'boolean',
        default: false,
        describe: 'Reopen the --session file, or the most recent session of this folder',
      })
      .option('session-dir', {
        type: 'string',
        describe: 'Folder for new sessions (default ~/.orchestrate/sessions/--<cwd>--)',
      })
      .option('cwd', { type: 'string', describe: 'Working directory of the agent and its tools' })
      .option('tools', {
        type: 'string',
        describe: `Comma-separated tools (default read,bash,edit,write; "none" for none). Built-in: ${BUILTIN_TOOL_NAMES.join(', ')}`,
      })
      .option('model', {
        type: 'string',
        describe:
          "Model id or alias (default: the continued session's, else ORCHESTRATE_MODEL, else claude-sonnet-4-5)",
      })
      .option('model-price', {
        type: 'string',
        describe:
          'IN/OUT: $ per million input/output tokens. Declares --model when it is not in the built-in list (a newer model), e.g. --model claude-opus-5-5 --model-price 4/20',
      })
      .option('context-window', {
        type: 'string',
        describe: `With --model-price: input tokens the model accepts (default ${DECLARED_MODEL_DEFAULTS.contextWindow / 1000}k; 1M, 400k ...)`,
      })
      .option('max-output', {
        type: 'string',
        describe: `With --model-price: output tokens per reply (default ${DECLARED_MODEL_DEFAULTS.maxTokens / 1000}k)`,
      })
      .option('provider', {
        type: 'string',
        describe:
          'anthropic (needs ANTHROPIC_API_KEY), scripted (offline, with --script), or an OpenAI-compatible one: openai, openrouter, ollama, lmstudio, vllm, llamacpp (README "Providers")',
      })
      .option('base-url', {
        type: 'string',
        describe:
          'Endpoint of an OpenAI-compatible --provider (e.g. http://gpu-box:8000/v1); with another name it declares that provider',
      })
      .option('script', {
        type: 'string',
        describe: 'Script file (YAML/JSON turns) for the scripted provider; implies --provider scripted',
      })
      .option('system', {
        type: 'string',
        describe: 'System prompt (text, or a file to read) replacing the default body',
      })
      .option('append-system', { type: 'string', describe: 'Text (or a file) appended to the system prompt' })
      // nargs 1: a repeatable flag takes exactly one value, so the prompt after it stays the prompt.
      .option('skills', {
        type: 'string',
        array: true,
        nargs: 1,
        describe: 'Skill folder (repeatable: --skills a --skills b)',
      })
      .option('context-files', {
        type: 'boolean',
        default: true,
        describe: 'Include AGENTS.md / CLAUDE.md files (--no-context-files to skip)',
      })
      .option('thinking', {
        type: 'string',
        choices: THINKING,
        describe: 'Reasoning effort (default medium; off for models without reasoning)',
      })
      .option('extension', {
        type: 'string',
        array: true,
        nargs: 1,
        describe: 'Extension module (.js, or .ts under tsx), repeatable: --extension a.ts --extension b.ts',
      })
      .option('sandbox', {
        type: 'string',
        choices: ['workspace', 'none'],
        describe:
          'bash commands: workspace (default where bubblewrap works: only --cwd writable, secrets hidden, no network) or none (unconfined)',
      })
      .option('hooks', {
        type: 'string',
        array: true,
        nargs: 1,
        describe:
          'Command hooks file in Claude Code\'s settings.json shape ({"hooks": {"PreToolUse": [...]}}), repeatable; added to the hooks of ~/.orchestrate/settings.json, ~/.claude/settings.json and the project\'s .orchestrate/settings.json, .claude/settings.json, .claude/settings.local.json (README "Hooks")',
      })
      .option('mcp-config', {
        type: 'string',
        array: true,
        nargs: 1,
        describe:
          'MCP servers from a file in the .mcp.json shape ({"mcpServers": {...}}), repeatable; their tools appear as mcp__<server>__<tool> (--tools mcp__<server>__* picks; README "MCP")',
      })
      .option('network', { type: 'boolean', describe: 'Let sandboxed bash commands reach the network (default off)' })
      .option('max-turns', {
        type: 'string',
        describe: `Model calls one prompt may make before the agent is stopped (default ${DEFAULT_RUN_LIMITS.maxTurns}; 0 = no cap)`,
      })
      .option('budget-usd', {
        type: 'string',
        describe: `Stop the agent once this session has spent this many US dollars (default ${AGENT_CLI_DEFAULTS.budgetUsd}; "none" = no cap)`,
      })
      .option('budget-tokens', {
        type: 'string',
        describe:
          'Stop the agent once this session has used this many tokens, input + output + cache (500000, 400k, 3M; default: no cap)',
      })
      .option('loop-detection', {
        type: 'string',
        choices: ['on', 'off'],
        default: 'on',
        describe: 'Warn, then stop an agent that repeats the same tool call, cycle of calls or answer (off: never)',
      })
      .option('max-identical-calls', {
        type: 'string',
        describe: `The same tool call this many times in a row counts as a loop (default ${DEFAULT_LOOP_DETECTION.identicalCalls}; at least 2)`,
      })
      .example([
        ['orchestrate agent "Summarize README.md"', 'the final answer on stdout (needs ANTHROPIC_API_KEY)'],
        [
          'orchestrate agent --script hello.yaml "Say hello"',
          'offline, the scripted model (orchestrate init agent copies hello.yaml here)',
        ],
        ['orchestrate agent --session work.jsonl --continue "Now add a test"', 'continue a saved session'],
        ['orchestrate agent --continue', 'on a terminal: reopen the last session of this folder in the interactive UI'],
        [
          'orchestrate agent --session work.jsonl --continue --mode json',
          'finish the turn a kill cut off (streamed as JSON events), no new prompt',
        ],
        [
          'orchestrate agent --extension guard.ts --skills ./skills "Fix the bug"',
          'repeatable flags take one value each; the prompt stays the prompt',
        ],
      ])
      .check((a) => {
        for (const key of [
          'mode',
          'session',
          'session-dir',
          'cwd',
          'tools',
          'model',
          'model-price',
          'context-window',
          'max-output',
          'provider',
          'script',
          'system',
          'append-system',
          'thinking',
          'max-turns',
          'budget-usd',
          'budget-tokens',
          'loop-detection',
          'max-identical-calls',
          'sandbox',
        ]) {
          if (Array.isArray(a[key])) throw new Error(`--${key} was given more than once`);
        }
        if (a.mode === 'rpc' && Array.isArray(a.prompt) && a.prompt.length > 0)
          throw new Error('--mode rpc takes its prompts as commands on stdin, not as arguments');
        return true;
      })
  );
}

function list(v: unknown): string[] {
  if (v === undefined) return [];
  return (Array.isArray(v) ? v : [v]).map(String);
}

async function readStdin(): Promise<string> {
  const parts: Buffer[] = [];
  for await (const chunk of process.stdin)
    parts.push(typeof chunk === 'string' ? Buffer.from(chunk) : (chunk as Buffer));
  return Buffer.concat(parts).toString('utf8');
}

/** Flags -> factory options. Throws AgentSessionConfigError for flag values that cannot work. */
export function sessionOptionsFromArgs(args: CommandArgs, ctx: CliContext): CreateAgentSessionOptions {
  checkAgentPathFlags(args, ctx.cwd);
  const cwd = typeof args.cwd === 'string' ? resolve(ctx.cwd, args.cwd) : ctx.cwd;
  const o: CreateAgentSessionOptions = { cwd, notify: (m) => ctx.stderr(`${m}\n`) };
  if (args.session === false) o.inMemory = true;
  else if (typeof args.session === 'string') o.sessionFile = resolve(ctx.cwd, args.session);
  if (args.continue === true) {
    if (o.inMemory)
      throw new AgentSessionConfigError('--continue needs a session file; it cannot be used with --no-session.');
    o.continue = true;
  }
  if (typeof args['session-dir'] === 'string') o.sessionDir = resolve(ctx.cwd, args['session-dir']);
  if (ctx.env.ORCHESTRATE_HOME) o.home = ctx.env.ORCHESTRATE_HOME;
  if (typeof args.tools === 'string') {
    const names = args.tools
      .split(',')
      .map((s) => s.trim())
      .filter(Boolean);
    o.tools = names.length === 1 && names[0] === 'none' ? [] : names;
  }
  if (typeof args.model === 'string') o.model = args.model;
  if (ctx.env.ORCHESTRATE_MODEL) o.defaultModel = ctx.env.ORCHESTRATE_MODEL;
  if (typeof args.script === 'string') o.script = resolve(ctx.cwd, args.script);
  const provider = typeof args.provider === 'string' ? args.provider : o.script !== undefined ? 'scripted' : undefined;
  if (provider) o.provider = provider;
  if (typeof args['base-url'] === 'string') {
    if (!provider || provider === 'anthropic' || provider === 'scripted')
      throw new AgentSessionConfigError(
        '--base-url needs --provider NAME of an OpenAI-compatible server (e.g. --provider vllm --base-url http://gpu-box:8000/v1).',
      );
    const preset = findProvider(provider);
    o.providers = [
      { ...(preset ?? { type: 'openai-compatible' as const }), name: provider, baseUrl: args['base-url'] },
    ];
  }
  if (provider === 'scripted' && o.script === undefined) {
    throw new AgentSessionConfigError('--provider scripted needs --script FILE (a YAML or JSON list of turns).');
  }
  const declared = declaredModel(args);
  if (declared && provider === 'scripted')
    throw new AgentSessionConfigError(
      '--model-price declares a model of the anthropic provider; the scripted provider has no price.',
    );
  if (declared && typeof declared === 'object' && provider && provider !== 'anthropic') {
    // A model of an OpenAI-compatible server: its limits and price, under its id on that provider.
    o.models = {
      [declared.id]: { contextWindow: declared.contextWindow, maxTokens: declared.maxTokens, cost: declared.cost },
    };
    o.model = declared.id;
  } else if (declared) o.model = declared;
  if (typeof args.system === 'string') o.systemPrompt = textOrFile(args.system, ctx.cwd);
  if (typeof args['append-system'] === 'string') o.appendSystemPrompt = textOrFile(args['append-system'], ctx.cwd);
  const skills = list(args.skills);
  if (skills.length > 0) o.skillsDirs = skills.map((d) => resolve(ctx.cwd, d));
  if (args['context-files'] === false) o.contextFiles = false;
  if (typeof args.thinking === 'string') o.thinkingLevel = args.thinking as AgentThinkingLevel;
  const extensions = list(args.extension);
  if (extensions.length > 0) o.extensions = extensions.map((p) => resolve(ctx.cwd, p));
  // bash runs in the sandbox by default; its one warning (no bwrap here) goes where notices go.
  const sandbox = {
    mode: args.sandbox === 'none' ? ('none' as const) : ('workspace' as const),
    network: args.network === true,
    warn: o.notify!,
  };
  o.toolOptions = { ...o.toolOptions, bash: { ...o.toolOptions?.bash, sandbox } };
  // Command hooks: the user's settings, the project's (the single agent works in the user's own
  // project), then --hooks files. They run in the same sandbox as bash.
  try {
    const hooks = loadHookSources({
      cwd,
      home: orchestrateHome(ctx.env),
      claudeHome: join(ctx.env.HOME || homedir(), '.claude'),
      files: list(args.hooks).map((f) => resolve(ctx.cwd, f)),
      warn: o.notify!,
    });
    if (hasHooks(hooks)) o.commandHooks = hooks;
  } catch (err) {
    if (err instanceof HooksConfigError) throw new AgentSessionConfigError(err.message);
    throw err;
  }
  // MCP servers only from the files named (--mcp-config), like Claude Code's flag.
  addMcpServers(o, list(args['mcp-config']), ctx.cwd, ctx.env);
  const bounds = runBoundsFromArgs(args);
  o.limits = bounds.limits;
  o.loopDetection = bounds.loopDetection;
  return o;
}

/** A whole number of at least `least` from a flag value; throws a usage error naming the flag. */
function wholeFlag(args: CommandArgs, flag: string, least: number, example: string): number | undefined {
  const raw = args[flag];
  if (raw === undefined) return undefined;
  const text = String(raw).trim();
  if (!/^\d+$/.test(text) || Number(text) < least)
    throw new AgentSessionConfigError(
      `--${flag} "${String(raw)}" is not a whole number of at least ${least}: give e.g. --${flag} ${example}.`,
    );
  return Number(text);
}

/** --max-turns, --budget-usd, --budget-tokens, --loop-detection, --max-identical-calls -> the session's caps and loop detector. */
export function runBoundsFromArgs(
  args: CommandArgs,
): Required<Pick<CreateAgentSessionOptions, 'limits' | 'loopDetection'>> {
  const limits: NonNullable<CreateAgentSessionOptions['limits']> = {
    maxTurns: wholeFlag(args, 'max-turns', 0, '50') ?? DEFAULT_RUN_LIMITS.maxTurns,
  };
  const usd = args['budget-usd'];
  if (usd === undefined) limits.budgetUsd = AGENT_CLI_DEFAULTS.budgetUsd;
  else if (String(usd).trim() !== 'none') {
    const n = Number(String(usd).trim());
    if (String(usd).trim() === '' || !Number.isFinite(n) || n <= 0)
      throw new AgentSessionConfigError(
        `--budget-usd "${String(usd)}" is not an amount of US dollars above 0: give e.g. --budget-usd 20, or --budget-usd none for no cap.`,
      );
    limits.budgetUsd = n;
  }
  if (args['budget-tokens'] !== undefined) {
    const n = parseTokenCount(String(args['budget-tokens']));
    if (n === undefined || n < 1)
      throw new AgentSessionConfigError(
        `--budget-tokens "${String(args['budget-tokens'])}" is not a token count of at least 1: give e.g. 500000, 400k or 3M.`,
      );
    limits.budgetTokens = n;
  }
  const identical = wholeFlag(args, 'max-identical-calls', 2, '8');
  const loopDetection: NonNullable<CreateAgentSessionOptions['loopDetection']> = {
    enabled: args['loop-detection'] !== 'off',
  };
  if (identical !== undefined) loopDetection.identicalCalls = identical;
  return { limits, loopDetection };
}

/** --model with --model-price (and its limits): a model the built-in list does not have. */
function declaredModel(args: CommandArgs): CreateAgentSessionOptions['model'] {
  const price = args['model-price'];
  if (typeof price !== 'string') {
    for (const flag of ['context-window', 'max-output']) {
      if (args[flag] !== undefined)
        throw new AgentSessionConfigError(
          `--${flag} only goes with --model-price (a model the built-in list does not have).`,
        );
    }
    return undefined;
  }
  if (typeof args.model !== 'string')
    throw new AgentSessionConfigError('--model-price needs --model ID: the id the API serves the model under.');
  const m = /^\s*(\d+(?:\.\d+)?)\s*\/\s*(\d+(?:\.\d+)?)\s*$/.exec(price);
  if (!m)
    throw new AgentSessionConfigError(
      `--model-price "${price}" is not IN/OUT: give $ per million input and output tokens, e.g. --model-price 3/15.`,
    );
  const limit = (flag: string, least: number, fallback: number): number => {
    const raw = args[flag];
    if (raw === undefined) return fallback;
    const n = parseTokenCount(String(raw));
    if (n === undefined || n < least)
      throw new AgentSessionConfigError(
        `--${flag} "${String(raw)}" is not a token count of at least ${least}: give e.g. 200000, 400k or 1M.`,
      );
    return n;
  };
  const contextWindow = limit('context-window', 1_000, DECLARED_MODEL_DEFAULTS.contextWindow);
  const maxTokens = limit('max-output', 1, DECLARED_MODEL_DEFAULTS.maxTokens);
  return modelFromSpec(args.model.replace(/^anthropic\//, ''), {
    cost: priceOf(Number(m[1]), Number(m[2])),
    contextWindow,
    maxTokens,
  });
}

/** Interactive when asked, or by default on a terminal (stdin and stdout) without a prompt. */
function chooseMode(args: CommandArgs, prompt: string, ctx: CliContext): (typeof MODES)[number] {
  if (typeof args.mode === 'string') return args.mode as (typeof MODES)[number];
  return prompt === '' && ctx.isTTY && process.stdin.isTTY === true ? 'interactive' : 'text';
}

export async function runAgent(args: CommandArgs, ctx: CliContext): Promise<number> {
  let prompt = list(args.prompt).join(' ').trim();
  const mode = chooseMode(args, prompt, ctx);
  if (mode === 'interactive') return runInteractive(args, prompt, ctx);
  if (mode !== 'rpc' && prompt === '' && !process.stdin.isTTY) prompt = (await readStdin()).trim();
  // Without a prompt, only a reopened session can give the command something to do: finishing a
  // turn a kill cut off. A --session file that does not exist yet is not opened (nor created).
  const reopens =
    args.continue === true || (typeof args.session === 'string' && existsSync(resolve(ctx.cwd, args.session)));
  if (mode !== 'rpc' && prompt === '' && !reopens) {
    ctx.stderr(
      'orchestrate agent: give a prompt, e.g. orchestrate agent "Summarize README.md", or pipe it on stdin\nRun "orchestrate agent --help" for usage.\n',
    );
    return EXIT.usage;
  }

  let session: AgentSession;
  const mcpRequired = new RequiredMcpServers();
  try {
    session = await createAgentSession(mcpRequired.wire(sessionOptionsFromArgs(args, ctx)));
  } catch (err) {
    if (err instanceof AgentSessionConfigError) {
      ctx.stderr(`orchestrate agent: ${err.message}\nRun "orchestrate agent --help" for usage.\n`);
      return EXIT.usage;
    }
    throw err;
  }
  // A server the agent needs (not optional) could not start: stop before any model call.
  if (!mcpRequired.watch(session)) return mcpRequired.stop(session, ctx.stderr);

  if (mode !== 'rpc' && prompt === '' && !cutOffTurn(session.messages)) {
    const file = session.sessionFile ?? 'this session';
    ctx.stderr(
      `orchestrate agent: the session ${file} has nothing to finish (${session.messages.length === 0 ? 'it is empty' : 'its last turn was not cut off'}), so a prompt is needed: give one, e.g. orchestrate agent --continue "Now add a test", or pipe it on stdin\nRun "orchestrate agent --help" for usage.\n`,
    );
    await session.dispose();
    return EXIT.usage;
  }
  // No prompt: the command only finishes the cut-off turn (print mode prints its final answer).
  const prompts = prompt === '' ? [] : [prompt];
  const traced = startAgentTracing(args, ctx, session, prompt);
  if (!traced.ok) {
    await session.dispose();
    return traced.code;
  }
  let exit: number = EXIT.taskFailed;

  const out: ModeOutput = { stdout: ctx.stdout, stderr: ctx.stderr };
  // A guard or cap that ends a prompt (RunStoppedError) is reported by the modes: print and json
  // write its message (which names the flag that raises it) on stderr and exit 1, json also emits
  // the run_stopped event line, rpc answers the prompt command with the error.
  let interrupted = false;
  const onSigint = (): void => {
    interrupted = true;
    void session.abort();
  };
  if (mode !== 'rpc') process.once('SIGINT', onSigint);
  try {
    // json mode finishes a cut-off turn itself, inside its event stream (runJsonMode).
    if (mode === 'text') {
      const finished = await finishCutOffTurn(session, ctx, prompts.length > 0);
      if (interrupted) return EXIT.interrupted;
      if (!finished) return 1;
    }
    const code =
      mode === 'rpc'
        ? await runRpcMode(session, process.stdin, out)
        : mode === 'json'
          ? await runJsonMode(session, prompts, out)
          : await runPrintMode(session, prompts, out);
    // A required server stopped for good during the prompt: the agent was stopped there (exit 1).
    exit = interrupted ? EXIT.interrupted : mcpRequired.exitCode(code, ctx.stderr);
    return exit;
  } finally {
    process.removeListener('SIGINT', onSigint);
    await finishAgentTracing(traced.tracing, interrupted ? EXIT.interrupted : exit);
    await session.dispose();
  }
}

/**
 * Print mode on a reopened session whose last turn a kill cut off (tool calls without results,
 * a prompt without a reply): that turn is finished first through the kernel's resume path
 * (AgentSession.resume: read-only calls run again, the others are answered as interrupted, then
 * the loop goes on until the model stops), and only then is the new prompt sent, as its own turn.
 * Not resume(prompt), which would fold the prompt into the cut-off turn: the user asked for
 * that turn's work first. Without a prompt, finishing the turn is the whole command. False when
 * the turn could not be finished (the reason is on stderr).
 */
async function finishCutOffTurn(session: AgentSession, ctx: CliContext, hasPrompt: boolean): Promise<boolean> {
  const cut = cutOffTurn(session.messages);
  if (!cut) return true;
  const what =
    cut.kind === 'dangling'
      ? `its ${cut.calls.map((c) => c.name).join(', ')} call${cut.calls.length === 1 ? ' has' : 's have'} no result`
      : 'its last prompt has no reply';
  ctx.stderr(
    `orchestrate agent: the last turn of this session was interrupted (${what}); finishing it${hasPrompt ? ' before this prompt' : ''}.\n`,
  );
  const reason = await resumeCutOffTurn(session);
  if (reason === undefined) return true;
  ctx.stderr(
    `orchestrate agent: the interrupted turn could not be finished${hasPrompt ? ', so the prompt was not sent' : ''}: ${reason}\n`,
  );
  return false;
}

/**
 * The terminal UI. Notices (warnings of the session and its tools) are shown inside the UI
 * instead of being written across its screen; before it is up and after it ends they go to stderr.
 */
async function runInteractive(args: CommandArgs, prompt: string, ctx: CliContext): Promise<number> {
  if (!ctx.isTTY || process.stdin.isTTY !== true) {
    ctx.stderr(
      'orchestrate agent: --mode interactive needs a terminal on stdin and stdout; give a prompt (or pipe it) for --mode text.\nRun "orchestrate agent --help" for usage.\n',
    );
    return EXIT.usage;
  }
  let toUi: ((text: string) => void) | undefined;
  const uiCtx: CliContext = { ...ctx, stderr: (text) => (toUi ? toUi(text.replace(/\n$/, '')) : ctx.stderr(text)) };
  let session: AgentSession;
  const options = (): CreateAgentSessionOptions => sessionOptionsFromArgs(args, uiCtx);
  try {
    session = await createAgentSession(options());
  } catch (err) {
    if (err instanceof AgentSessionConfigError) {
      ctx.stderr(`orchestrate agent: ${err.message}\nRun "orchestrate agent --help" for usage.\n`);
      return EXIT.usage;
    }
    throw err;
  }
  // /new: the same flags, a fresh session (beside --session's file when one was named).
  const newSession = (): Promise<AgentSession> => {
    const o = options();
    delete o.continue;
    if (o.sessionFile !== undefined) {
      o.sessionDir ??= dirname(o.sessionFile);
      delete o.sessionFile;
    }
    return createAgentSession(o);
  };
  const { runInteractiveMode } = await import('../../display/interactive/run-interactive.js');
  let current = session;
  try {
    return await runInteractiveMode(session, {
      initialPrompt: prompt === '' ? undefined : prompt,
      newSession,
      env: ctx.env,
      onController: (c) => {
        toUi = (text) => c.notify(text, 'warn');
        c.onSessionChange = (s) => (current = s);
      },
    });
  } finally {
    toUi = undefined;
    await current.dispose();
  }
}

export const agentCommand: CliCommand = {
  command: 'agent [prompt..]',
  describe: 'Run one agent: print its answer, stream its events as JSON, or serve the RPC protocol',
  builder: agentOptions,
  run: runAgent,
};
