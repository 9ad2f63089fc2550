// createAgentSession: the one factory behind every delivery form (the CLI's print/json/rpc modes,
// the SDK, the orchestrator's workers). It resolves the model and provider, opens or creates the
// session, builds the tools and the system prompt, loads extensions, and returns an AgentSession.
// Every mistake a caller can make (unknown tool, unknown model, no API key, missing session to
// continue, bad script, broken extension) is an AgentSessionConfigError with a message that says
// what to do instead; the CLI turns it into exit code 2.
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { homedir } from 'node:os';
import { join, resolve } from 'node:path';
import type { AgentThinkingLevel, AnyAgentTool } from '../agent/types.js';
import { MISSING_API_KEY_MESSAGE } from '../ai/anthropic.js';
import { ANTHROPIC_API, DEFAULT_MODEL_ID, resolveModel, SCRIPTED_API, type ModelSpec } from '../ai/models.js';
import { withLearnedWindow } from '../ai/learned-windows.js';
import { OPENAI_CHAT_API, OPENAI_RESPONSES_API, openAIKeyFor } from '../ai/openai-compatible.js';
import { BUILTIN_PROVIDERS, findProvider, modelForProvider, type ProviderConfig } from '../ai/provider-config.js';
import { registerBuiltInProviders } from '../ai/providers.js';
import {
  createScriptedProvider,
  type ScriptedProviderOptions,
  type ScriptedScript,
  type ScriptedTurn,
} from '../ai/scripted.js';
import type { Model, StreamFunction } from '../ai/types.js';
import { createRedactor, type SecretValue } from '../session/redact.js';
import { SessionStore } from '../session/session-store.js';
import type { BashPolicy } from '../tools/bash-policy.js';
import { BUILTIN_TOOL_NAMES, createTool, DEFAULT_TOOL_NAMES, type CodingToolsOptions } from '../tools/coding-tools.js';
import type { McpServerConfig } from '../tools/mcp/config.js';
import { MCP_TOOL_PREFIX, serverOfToolName } from '../tools/mcp/names.js';
import type { McpToolSource, McpToolSourceOptions } from '../tools/mcp/tool-source.js';
import { AgentSession } from './agent-session.js';
import type { AgentSessionHooks } from './session-hooks.js';
import type { SessionBehaviour } from './agent-session-types.js';
import { RUNTIME_DEFAULTS } from './defaults.js';
import { ExtensionLoadError, loadExtensions, type ExtensionSpec } from './extensions.js';
import { assembleSystemPrompt } from './system-prompt.js';
import { hasHooks, type HooksConfig } from './command-hooks.js';
import { hookSandbox } from './hook-sandbox.js';

/** A configuration the session cannot start with; `message` says how to fix it. */
export class AgentSessionConfigError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'AgentSessionConfigError';
  }
}

/** What createAgentSession takes; the session's behaviour settings (SessionBehaviour) are passed on as given. */
export interface CreateAgentSessionOptions extends SessionBehaviour {
  // ---- where the agent works
  /** Working directory of the tools (default: process.cwd()). */
  cwd?: string;
  /** Tools may only touch files under this folder (default: cwd). */
  workspaceRoot?: string;
  /** Lift the confinement to the workspace root. */
  allowOutside?: boolean;
  /** Globs (relative to the root) that edit/write may touch; others are refused. */
  writeScope?: string[];

  // ---- tools
  /** Built-in tools by name (default: read, bash, edit, write); [] for none (plain chat). */
  tools?: readonly string[];
  /** Your own tools (zod parameters); a custom tool replaces a built-in of the same name. */
  customTools?: AnyAgentTool[];
  bashPolicy?: BashPolicy;
  /** Further built-in tool settings (output limits, shell, env). */
  toolOptions?: Pick<CodingToolsOptions, 'maxLines' | 'maxBytes' | 'bash'>;
  /**
   * MCP servers whose tools the agent gets as `mcp__<server>__<tool>` (tools/mcp). Entries of
   * `tools` that start with mcp__ (`mcp__github__create_issue`, `mcp__github__*`) allow only
   * those; without any, every tool of these servers. Servers end when the session is disposed.
   */
  mcp?: Pick<
    McpToolSourceOptions,
    | 'runId'
    | 'runHostPort'
    | 'hide'
    | 'readOnly'
    | 'writable'
    | 'authProviders'
    | 'bwrapPath'
    | 'baseEnv'
    | 'onUnavailable'
  > & {
    servers: McpServerConfig[];
    /** Tool patterns the agent may not use (win over the allowed ones). */
    deny?: string[];
    /**
     * Start every server (lazy ones too) before the session is returned, so one that cannot start
     * is known (onUnavailable) before the first model call.
     */
    startAll?: boolean;
  };

  // ---- system prompt
  /** Replaces the default prompt body (tool list and guidelines). Used as written. */
  systemPrompt?: string;
  /** Appended after the body. */
  appendSystemPrompt?: string;
  /** Extra skill folders (or skill files), after the default ones. */
  skillsDirs?: string[];
  /** Discover skills in ~/.orchestrate/skills and <cwd>/.orchestrate/skills (default true). */
  defaultSkills?: boolean;
  /** Put AGENTS.md / CLAUDE.md files from cwd upward into the prompt (default true). */
  contextFiles?: boolean;

  // ---- model
  /** A Model, or an id/alias resolved for `provider` (default: the continued session's, else defaultModel). */
  model?: Model | string;
  /** Used when neither `model` nor the session names one (default claude-sonnet-4-5; the CLI passes ORCHESTRATE_MODEL). */
  defaultModel?: string;
  /** "anthropic" (default), "scripted", or the name of one of `providers`. */
  provider?: string;
  /** Named providers (a recipe's `providers:`, e.g. a local OpenAI-compatible server): `provider` may name one. */
  providers?: ProviderConfig[];
  /** Limits and prices of models the table does not know (a recipe's `models:`), by model id. */
  models?: Record<string, ModelSpec>;
  /** For provider "scripted": a script file path (YAML/JSON), or turns in process. */
  script?: string | ScriptedTurn[] | ScriptedScript;
  scriptOptions?: ScriptedProviderOptions;
  /** Your own stream function (proxy, permits); used for turns and summaries alike. */
  streamFn?: StreamFunction;
  /** Anthropic key (default: ANTHROPIC_API_KEY). Never written to the session file. */
  apiKey?: string;
  /**
   * Values that must never reach the session file (each replaced by `[REDACTED:<name>]` when an
   * entry is written; the agent's context keeps them). The API key in use is always added.
   */
  secrets?: SecretValue[];
  /** Reasoning effort (default: the continued session's, else "medium"; "off" for non-reasoning models). */
  thinkingLevel?: AgentThinkingLevel;

  // ---- behaviour (the rest is SessionBehaviour)
  /** How summaries are written (default: "extractive" for the scripted provider, else "model"). */
  summaries?: 'model' | 'extractive';

  // ---- storage (first match wins: store, inMemory, continue, sessionFile, new file in sessionDir)
  store?: SessionStore;
  inMemory?: boolean;
  /** Open this file, or create it when missing. With `continue`, it must exist. */
  sessionFile?: string;
  /** Reopen `sessionFile`, or the most recent session in `sessionDir`. */
  continue?: boolean;
  /** Folder of new sessions (default: <home>/sessions/--<cwd>--). */
  sessionDir?: string;
  /** Settings home (default: ORCHESTRATE_HOME or ~/.orchestrate). */
  home?: string;

  // ---- hooks and extensions
  hooks?: AgentSessionHooks;
  /**
   * Command hooks in Claude Code's format (parseHooksConfig / loadHookSources in
   * command-hooks.ts). They run in the bash tool's sandbox (toolOptions.bash.sandbox) with the
   * workspace root writable and CLAUDE_PROJECT_DIR set to it.
   */
  commandHooks?: HooksConfig;
  /** Module paths (relative to cwd), paths with options, or in-process factories. */
  extensions?: ExtensionSpec[];
  /** Where warnings and extension errors are reported (default: stderr). */
  notify?: (message: string) => void;
}

/** Where orchestrate keeps user-level files. */
export function orchestrateHome(env: Record<string, string | undefined> = process.env): string {
  return env.ORCHESTRATE_HOME || join(homedir(), RUNTIME_DEFAULTS.homeDirName);
}

/** Default folder of the sessions started in `cwd`. */
export function defaultSessionDir(cwd: string, home: string = orchestrateHome()): string {
  const encoded = `--${resolve(cwd)
    .replace(/^[/\\]+/, '')
    .replace(/[/\\:]/g, '-')}--`;
  return join(home, RUNTIME_DEFAULTS.sessionsDirName, encoded);
}

/** The most recently modified .jsonl file in `dir`, if any. */
export function mostRecentSession(dir: string): string | undefined {
  let best: { path: string; mtime: number } | undefined;
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch {
    return undefined;
  }
  for (const name of names) {
    if (!name.endsWith('.jsonl')) continue;
    const path = join(dir, name);
    try {
      const mtime = statSync(path).mtimeMs;
      if (!best || mtime > best.mtime) best = { path, mtime };
    } catch {
      // vanished meanwhile
    }
  }
  return best?.path;
}

/** A flag value that names an existing file is read from it; anything else is used literally. */
export function textOrFile(value: string, cwd: string): string {
  const path = resolve(cwd, value);
  try {
    if (value.length < 4096 && statSync(path).isFile()) return readFileSync(path, 'utf8');
  } catch {
    // not a file: literal text
  }
  return value;
}

/** The secrets of a session: the caller's, plus the API key in use. */
function sessionSecrets(o: CreateAgentSessionOptions): SecretValue[] {
  const key = o.apiKey || process.env.ANTHROPIC_API_KEY;
  const providerKeys: SecretValue[] = [];
  for (const name of providerKeyVariables(o)) {
    const value = process.env[name];
    if (value && name !== 'ANTHROPIC_API_KEY') providerKeys.push({ name, value });
  }
  return [...(o.secrets ?? []), ...(key ? [{ name: 'ANTHROPIC_API_KEY', value: key }] : []), ...providerKeys];
}

/** Environment variables holding provider keys: never in a session file, never in the model's shell. */
function providerKeyVariables(o: Pick<CreateAgentSessionOptions, 'providers' | 'model'>): string[] {
  const names = new Set(['ANTHROPIC_API_KEY', 'OPENAI_API_KEY']);
  for (const p of o.providers ?? []) if (p.apiKeyEnv) names.add(p.apiKeyEnv);
  if (typeof o.model === 'object' && o.model.apiKeyEnv) names.add(o.model.apiKeyEnv);
  return [...names];
}

function openStore(o: CreateAgentSessionOptions, cwd: string): SessionStore {
  if (o.store) return o.store;
  const redactor = createRedactor(sessionSecrets(o));
  const opts = { cwd, ...(redactor ? { redact: redactor } : {}) };
  if (o.inMemory) return SessionStore.inMemory(opts);
  const dir = o.sessionDir ? resolve(cwd, o.sessionDir) : defaultSessionDir(cwd, o.home ?? orchestrateHome());
  if (o.continue) {
    if (o.sessionFile) {
      const file = resolve(cwd, o.sessionFile);
      if (!existsSync(file)) {
        throw new AgentSessionConfigError(
          `Cannot continue: the session file ${file} does not exist. Check the path, or drop --continue to start a new session there.`,
        );
      }
      return SessionStore.open(file, opts);
    }
    const recent = mostRecentSession(dir);
    if (!recent)
      throw new AgentSessionConfigError(
        `Cannot continue: there is no session in ${dir}. Start one first, or pass --session FILE.`,
      );
    return SessionStore.open(recent, opts);
  }
  if (o.sessionFile) return SessionStore.open(resolve(cwd, o.sessionFile), opts);
  return SessionStore.create(dir, opts);
}

function toModel(id: string, provider: string, o?: Pick<CreateAgentSessionOptions, 'providers' | 'models'>): Model {
  try {
    const config =
      provider === 'anthropic' && !o?.providers?.some((p) => p.name === 'anthropic')
        ? undefined
        : findProvider(provider, o?.providers);
    if (config) return withLearnedWindow(modelForProvider(config, id, o?.models?.[id]));
    return withLearnedWindow(resolveModel(id, provider));
  } catch (err) {
    throw new AgentSessionConfigError(err instanceof Error ? err.message : String(err));
  }
}

interface ResolvedModel {
  model: Model;
  streamFn?: StreamFunction;
}

async function resolveModelAndStream(
  o: CreateAgentSessionOptions,
  store: SessionStore,
  cwd: string,
): Promise<ResolvedModel> {
  const provider = o.provider ?? (typeof o.model === 'object' ? o.model.provider : 'anthropic');
  const restored = store.buildContext().model;
  const pick = (fallback: string): Model => {
    if (typeof o.model === 'object') return withLearnedWindow(o.model);
    if (o.model !== undefined) return toModel(o.model, provider, o);
    // A continued session keeps its model when it belongs to the same provider.
    if (restored && restored.provider === provider) {
      try {
        return toModel(restored.modelId, provider, o);
      } catch {
        // the model is no longer known: use the default
      }
    }
    return toModel(fallback, provider, o);
  };

  const fallback = o.defaultModel || DEFAULT_MODEL_ID;
  if (o.streamFn) return { model: pick(fallback), streamFn: o.streamFn };
  if (provider === 'scripted') {
    if (o.script === undefined) {
      throw new AgentSessionConfigError(
        'The scripted provider needs a script: pass --script FILE (YAML or JSON turns), or `script` in the SDK options.',
      );
    }
    let script: ScriptedTurn[] | ScriptedScript;
    if (typeof o.script === 'string') {
      // Loaded only here: the script reader brings the YAML parser, which sessions on a real model never need.
      const { loadScriptFile, ScriptFileError } = await import('../ai/scripted-script.js');
      try {
        script = loadScriptFile(resolve(cwd, o.script));
      } catch (err) {
        throw new AgentSessionConfigError(
          err instanceof ScriptFileError || err instanceof Error ? err.message : String(err),
        );
      }
    } else script = o.script;
    return { model: pick(o.defaultModel || 'scripted'), streamFn: createScriptedProvider(script, o.scriptOptions) };
  }
  const configured = findProvider(provider, o.providers) !== undefined;
  if (provider !== 'anthropic' && !configured && typeof o.model !== 'object') {
    const names = [
      ...new Set([
        'anthropic',
        'scripted',
        ...(o.providers ?? []).map((p) => p.name),
        ...BUILTIN_PROVIDERS.map((p) => p.name),
      ]),
    ];
    throw new AgentSessionConfigError(
      `Unknown provider "${provider}". Known providers: ${names.join(', ')}. Declare others under providers: in the recipe (or pass providers in the SDK options).`,
    );
  }
  registerBuiltInProviders();
  const model = pick(fallback);
  if (model.api === ANTHROPIC_API && !o.apiKey && !process.env[model.apiKeyEnv ?? 'ANTHROPIC_API_KEY']) {
    throw new AgentSessionConfigError(
      model.apiKeyEnv
        ? `No API key for provider "${model.provider}": set ${model.apiKeyEnv}.`
        : MISSING_API_KEY_MESSAGE,
    );
  }
  if (model.api === OPENAI_CHAT_API || model.api === OPENAI_RESPONSES_API) {
    const key = openAIKeyFor(model, o.apiKey ? { apiKey: o.apiKey } : {});
    if (key.missing) throw new AgentSessionConfigError(key.missing);
  }
  return { model };
}

function buildTools(o: CreateAgentSessionOptions, cwd: string, extensionTools: AnyAgentTool[]): AnyAgentTool[] {
  const custom = [...(o.customTools ?? []), ...extensionTools];
  const customNames = new Set(custom.map((t) => t.name));
  // mcp__ names pick MCP tools (createMcpSource); they are not built-in or custom tools.
  const names = (o.tools ?? DEFAULT_TOOL_NAMES).filter((n) => !n.startsWith(MCP_TOOL_PREFIX) || customNames.has(n));
  const unknown = names.filter((n) => !(BUILTIN_TOOL_NAMES as readonly string[]).includes(n) && !customNames.has(n));
  if (unknown.length > 0) {
    const valid = [...BUILTIN_TOOL_NAMES, ...customNames];
    throw new AgentSessionConfigError(
      `Unknown tool${unknown.length > 1 ? 's' : ''} ${unknown.map((n) => `"${n}"`).join(', ')}. Valid tools: ${valid.join(', ')}.`,
    );
  }
  const shared: CodingToolsOptions = { cwd, ...o.toolOptions };
  if (o.workspaceRoot !== undefined) shared.root = resolve(cwd, o.workspaceRoot);
  if (o.allowOutside !== undefined) shared.allowOutside = o.allowOutside;
  if (o.writeScope !== undefined) shared.writeScope = o.writeScope;
  if (o.bashPolicy) shared.bash = { ...shared.bash, policy: o.bashPolicy };
  // The full-output temp files of bash are written by the tool itself, outside the session.
  const secrets = sessionSecrets(o);
  if (secrets.length > 0) shared.bash = { ...shared.bash, secrets };
  // The model's shell commands do not get the provider key the session itself uses (a prompt-
  // injected `curl ... $ANTHROPIC_API_KEY` has nothing to send); set it in the bash env to pass it.
  const hidden: Record<string, undefined> = {};
  for (const name of providerKeyVariables(o)) hidden[name] = undefined;
  shared.bash = { ...shared.bash, env: { ...hidden, ...shared.bash?.env } };
  const builtins = names.filter((n) => !customNames.has(n)).map((n) => createTool(n, shared));
  return [...builtins, ...custom];
}

/** The agent's MCP tool source, started as far as its eager servers go; undefined without servers. */
async function createMcpSource(
  o: CreateAgentSessionOptions,
  cwd: string,
  notify: (m: string) => void,
): Promise<McpToolSource | undefined> {
  const patterns = (o.tools ?? []).filter(
    (n) => n.startsWith(MCP_TOOL_PREFIX) && !(o.customTools ?? []).some((t) => t.name === n),
  );
  const servers = o.mcp?.servers ?? [];
  const known = new Set(servers.map((s) => s.name));
  const missing = [
    ...new Set(patterns.map(serverOfToolName).filter((s): s is string => s !== undefined && !known.has(s))),
  ];
  if (missing.length > 0) {
    throw new AgentSessionConfigError(
      `Tool${patterns.length > 1 ? 's' : ''} ${patterns.map((p) => `"${p}"`).join(', ')} name${patterns.length > 1 ? '' : 's'} the MCP server${missing.length > 1 ? 's' : ''} ${missing.map((m) => `"${m}"`).join(', ')}, which ${missing.length > 1 ? 'are' : 'is'} not configured. Configured: ${[...known].join(', ') || 'none'}.`,
    );
  }
  if (servers.length === 0) return undefined;
  const { servers: _servers, deny, startAll, ...rest } = o.mcp!;
  // Loaded only here: the MCP SDK takes a second or more to import, which sessions without MCP never pay.
  // Under tsx in a worker thread (tests, `npm run dev`) this module runs compiled to CommonJS, where a
  // native import() cannot resolve .ts files (see worker-entry.cts): there require() goes through tsx.
  // Everywhere else (built ES modules, vitest) import() finds it.
  let mcp: typeof import('../tools/mcp/tool-source.js');
  try {
    mcp = await import('../tools/mcp/tool-source.js');
  } catch (err) {
    if (typeof require !== 'function') throw err;
    mcp = require('../tools/mcp/tool-source.js') as typeof import('../tools/mcp/tool-source.js');
  }
  const { McpToolSource } = mcp;
  // The files bash may not change (the run's trusted inputs) are read-only to the servers too.
  const readOnly = rest.readOnly ?? o.toolOptions?.bash?.sandbox?.readOnly;
  const source = new McpToolSource({
    ...rest,
    ...(readOnly ? { readOnly } : {}),
    servers,
    allow: patterns,
    ...(deny ? { deny } : {}),
    cwd,
    ...(o.workspaceRoot !== undefined && rest.writable === undefined
      ? { writable: [resolve(cwd, o.workspaceRoot)] }
      : {}),
    notify,
    ...(o.toolOptions?.maxLines !== undefined ? { maxLines: o.toolOptions.maxLines } : {}),
    ...(o.toolOptions?.maxBytes !== undefined ? { maxBytes: o.toolOptions.maxBytes } : {}),
  });
  await source.start(startAll === true);
  return source;
}

/**
 * Before each model call: lazy servers start on the first, and a changed tool list (list_changed,
 * a restart) replaces the MCP tools in the loop's own tool array, so the next call offers them.
 * Optional servers the agent goes without are named at the end of the system prompt, with why.
 */
function withMcpTurns(
  hooks: AgentSessionHooks | undefined,
  source: McpToolSource,
  initial: AnyAgentTool[],
): AgentSessionHooks {
  let current = initial;
  let told: string | undefined;
  const user = hooks?.beforeTurn;
  return {
    ...hooks,
    beforeTurn: async (context, model, signal) => {
      const next = await source.prepareTurn();
      // Every prompt starts from the session's own system prompt: the note is added again, and an
      // older note (one server fewer) replaced.
      const note = source.unavailableNote();
      if (note !== undefined) {
        let base = context.systemPrompt ?? '';
        if (told !== undefined && base.endsWith(`\n\n${told}`)) base = base.slice(0, -(told.length + 2));
        if (!base.endsWith(`\n\n${note}`)) context.systemPrompt = `${base}\n\n${note}`;
        told = note;
      }
      if (next && next !== current) {
        const old = new Set(current);
        const kept = context.tools.filter((t) => !old.has(t));
        context.tools.splice(0, context.tools.length, ...kept, ...next);
        current = next;
      }
      return user?.(context, model, signal);
    },
  };
}

function restoredThinkingLevel(store: SessionStore): AgentThinkingLevel | undefined {
  const path = store.currentPath();
  for (let i = path.length - 1; i >= 0; i--) {
    const e = path[i]!;
    if (e.type === 'thinking_level_change') return e.thinkingLevel;
  }
  return undefined;
}

/**
 * Creates an AgentSession. Rejects with AgentSessionConfigError (or ExtensionLoadError, a
 * subclass-like error with the same intent) when the configuration cannot work.
 */
export async function createAgentSession(options: CreateAgentSessionOptions = {}): Promise<AgentSession> {
  const cwd = resolve(options.cwd ?? process.cwd());
  const notify = options.notify ?? ((m: string) => void process.stderr.write(`${m}\n`));
  const home = options.home ?? orchestrateHome();

  let extensions: Awaited<ReturnType<typeof loadExtensions>>;
  try {
    extensions = await loadExtensions(options.extensions ?? [], cwd);
  } catch (err) {
    if (err instanceof ExtensionLoadError) throw new AgentSessionConfigError(err.message);
    throw err;
  }
  const ownTools = buildTools(options, cwd, extensions.tools);
  const mcp = await createMcpSource(options, cwd, notify);
  const mcpTools = mcp ? mcp.listNow() : [];
  const tools = [...ownTools, ...mcpTools];

  let store: SessionStore;
  let resolved: ResolvedModel;
  try {
    store = openStore(options, cwd);
  } catch (err) {
    await mcp?.close();
    throw err;
  }
  try {
    resolved = await resolveModelAndStream(options, store, cwd);
  } catch (err) {
    // Nothing of a new session was written yet; release the file handle either way.
    if (!options.store) store.close();
    await mcp?.close();
    throw err;
  }
  for (const w of store.warnings) notify(`warning: ${w}`);

  const { prompt, skills, diagnostics } = assembleSystemPrompt({
    cwd,
    ...(options.workspaceRoot !== undefined ? { workspaceRoot: resolve(cwd, options.workspaceRoot) } : {}),
    home,
    // MCP tools come and go with their servers: the tool definitions name them, the prompt does not.
    tools: ownTools,
    systemPrompt: options.systemPrompt,
    appendSystemPrompt: options.appendSystemPrompt,
    skillsDirs: (options.skillsDirs ?? []).map((d) => resolve(cwd, d)),
    defaultSkills: options.defaultSkills ?? true,
    contextFiles: options.contextFiles ?? true,
  });
  for (const d of diagnostics) notify(`${d.level}: skill ${d.path}: ${d.message}`);

  const model = resolved.model;
  const requested = options.thinkingLevel ?? restoredThinkingLevel(store) ?? RUNTIME_DEFAULTS.thinkingLevel;
  const thinkingLevel: AgentThinkingLevel = model.reasoning ? requested : 'off';

  // Record model and level in a new session (written with the first reply), or on a change.
  const previous = store.buildContext();
  if (!previous.model || previous.model.provider !== model.provider || previous.model.modelId !== model.id) {
    store.appendModelChange(model.provider, model.id);
  }
  if (restoredThinkingLevel(store) !== thinkingLevel) store.appendThinkingLevelChange(thinkingLevel);

  const providerName = model.provider;
  return new AgentSession({
    store,
    model,
    thinkingLevel,
    tools,
    systemPrompt: prompt,
    skills,
    streamFn: resolved.streamFn,
    summaryStreamFn: options.summaryStreamFn,
    apiKey: options.apiKey,
    streamOptions: options.streamOptions,
    compaction: options.compaction,
    retry: options.retry,
    loopDetection: options.loopDetection,
    limits: options.limits,
    summaryRetry: options.summaryRetry,
    summaries: options.summaries ?? (model.api === SCRIPTED_API ? 'extractive' : 'model'),
    hooks: mcp ? withMcpTurns(options.hooks, mcp, mcpTools) : options.hooks,
    ...(hasHooks(options.commandHooks)
      ? {
          commandHooks: hookSandbox(
            options.commandHooks!,
            resolve(cwd, options.workspaceRoot ?? '.'),
            options.toolOptions?.bash?.sandbox,
            notify,
          ),
        }
      : {}),
    extensions,
    resolveModel: (id, provider) => toModel(id, provider ?? providerName, options),
    steeringMode: options.steeringMode,
    followUpMode: options.followUpMode,
    cwd,
    notify,
    ...(mcp ? { disposers: [() => mcp.close()] } : {}),
  });
}
