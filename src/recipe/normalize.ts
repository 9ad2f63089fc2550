// From the validated YAML document to the LoadedRecipe (loaded-recipe.ts) the coordinator runs:
// defaults merged, durations in ms, retries filled in, paths absolute, agent files read, models
// resolved. Everything here is plain data (structured-clone safe) so it can cross to worker threads.
import { attemptsSpecOf, type ModelOverride } from './attempts-spec.js';
import { publishSpecOf } from './publish-spec.js';
import { resolve } from 'node:path';
import { DECLARED_MODEL_DEFAULTS, priceOf, type ModelSpec } from '../ai/models.js';
import { findProvider, type ProviderConfig } from '../ai/provider-config.js';
import type { LoopDetectionSettings } from '../runtime/run-limits.js';
import { type AgentFile, readAgentFile } from './agent-file.js';
import { fileAgentTools, fileDisallowedTools, fileModelKnown } from './agent-tools.js';
import { agentHooks, loadUserHooks, recipeHooks } from './recipe-hooks.js';
import type { HooksConfig } from '../runtime/command-hooks.js';
import { BOARD_TOOL_NAMES, isBoardTool } from './board-tool-names.js';
import { matchesAny, serverOfToolName } from '../tools/mcp/names.js';
import { agentServerSpecs, recipeMcpServers, repoMcpPick, type RecipeMcpServers } from './mcp-servers.js';
import { RECIPE_DEFAULTS } from './defaults.js';
import { parseDuration, parseTokenCount } from './duration.js';
import { referencedTasks } from './expressions.js';
import type { InputSpec } from './inputs.js';
import { needsOf } from './task-checks.js';
import { fallbackTargets } from './fallback.js';
import type {
  Budget,
  TaskRetries,
  LoadedAgent,
  ForEachSpec,
  BoardSeed,
  VerifyStep,
  SourceLocation,
  LoadedTask,
  ProviderLimits,
  LoadedRecipe,
  RecipeOverrides,
} from './loaded-recipe.js';
import { type AgentDocument, BUILTIN_TOOLS, type RecipeDocument, type TaskDocument } from './schema.js';

export interface NormalizeContext {
  file: string;
  dir: string;
  /** ORCHESTRATE_MODEL and friends. */
  env: Readonly<Record<string, string | undefined>>;
  overrides: RecipeOverrides;
  inputs: Record<string, InputSpec>;
  inputValues: Record<string, unknown>;
  /** Recipe env already rendered. */
  renderedEnv: Record<string, string>;
  locate: (path: (string | number)[]) => SourceLocation;
}

/** The agent used by prompt tasks when a recipe defines no agents: the runtime's coding defaults. */
export const IMPLICIT_AGENT = 'default';
const IMPLICIT_TOOLS = ['read', 'bash', 'edit', 'write'];

/** How a model id is looked up: case-insensitive, without an "anthropic/" prefix. */
export function modelKey(id: string): string {
  return id
    .trim()
    .toLowerCase()
    .replace(/^anthropic\//, '');
}

function modelsOf(declared: RecipeDocument['models']): Record<string, ModelSpec> {
  const out: Record<string, ModelSpec> = {};
  for (const [id, m] of Object.entries(declared ?? {})) {
    const cost = priceOf(m.price.input, m.price.output);
    if (m.price.cache_read !== undefined) cost.cacheRead = m.price.cache_read;
    if (m.price.cache_write !== undefined) cost.cacheWrite = m.price.cache_write;
    out[modelKey(id)] = {
      cost,
      contextWindow:
        (m.context_window !== undefined ? parseTokenCount(m.context_window) : undefined) ??
        DECLARED_MODEL_DEFAULTS.contextWindow,
      maxTokens:
        (m.max_tokens !== undefined ? parseTokenCount(m.max_tokens) : undefined) ?? DECLARED_MODEL_DEFAULTS.maxTokens,
      // A written max_tokens is what every request asks for; without one, requests ask for a third.
      ...(m.max_tokens !== undefined ? { maxTokensDeclared: true } : {}),
    };
  }
  return out;
}

function budgetOf(b: RecipeDocument['budget']): Budget {
  if (!b) return {};
  const out: Budget = {};
  if (b.usd !== undefined) out.usd = b.usd;
  if (b.tokens !== undefined) out.tokens = parseTokenCount(b.tokens);
  return out;
}

function providerLimitsOf(declared: RecipeDocument['providers']): Record<string, ProviderLimits> {
  const out: Record<string, ProviderLimits> = {};
  for (const [name, p] of Object.entries(declared ?? {})) {
    if (p.rate_limit === undefined && p.budget === undefined && p.pacing === undefined) continue;
    const rl = p.rate_limit;
    out[name] = {
      rateLimit: typeof rl === 'number' ? { total: rl, perModel: {} } : { perModel: { ...(rl ?? {}) } },
      budget: budgetOf(p.budget),
      ...(p.pacing ? { pacing: p.pacing } : {}),
    };
  }
  return out;
}

function retriesOf(r: TaskDocument['retries']): TaskRetries {
  const d = RECIPE_DEFAULTS.retries;
  const base: TaskRetries = { count: d.count, backoff: { ...d.backoff }, on: [...d.on] };
  if (r === undefined) return base;
  if (typeof r === 'number') return { ...base, count: r };
  return {
    count: r.count ?? (r.on || r.backoff ? 1 : d.count),
    backoff: {
      initialMs:
        r.backoff?.initial !== undefined
          ? (parseDuration(r.backoff.initial) ?? d.backoff.initialMs)
          : d.backoff.initialMs,
      maxMs: r.backoff?.max !== undefined ? (parseDuration(r.backoff.max) ?? d.backoff.maxMs) : d.backoff.maxMs,
      factor: r.backoff?.factor ?? d.backoff.factor,
    },
    on: r.on ? [...r.on] : base.on,
  };
}

/** `loop:` as runtime settings: false turns detection off, a map changes thresholds. */
function loopOf(l: AgentDocument['loop']): Partial<LoopDetectionSettings> | undefined {
  if (l === undefined) return undefined;
  if (typeof l === 'boolean') return { enabled: l };
  const out: Partial<LoopDetectionSettings> = { enabled: true };
  if (l.identical_calls !== undefined) out.identicalCalls = l.identical_calls;
  if (l.cycle_repeats !== undefined) out.cycleRepeats = l.cycle_repeats;
  if (l.repeated_text !== undefined) out.repeatedText = l.repeated_text;
  if (l.grace_turns !== undefined) out.graceTurns = l.grace_turns;
  return out;
}

function verifyOf(v: TaskDocument['verify']): VerifyStep[] {
  if (v === undefined) return [];
  const list = typeof v === 'string' ? [v] : v;
  return list.map((s) =>
    typeof s === 'string' ? { run: s } : s.name !== undefined ? { name: s.name, run: s.run } : { run: s.run },
  );
}

const envOf = (e: Record<string, string | number | boolean> | undefined): Record<string, string> =>
  Object.fromEntries(Object.entries(e ?? {}).map(([k, v]) => [k, String(v)]));

/** An agent file's model; `inherit` (Claude Code) means the recipe's. */
/** The agent file's model, unless it is `inherit` or one that cannot run here (validation warned). */
function fileModel(file: AgentFile | undefined, provider: string, declared: string[]): string | undefined {
  const m = file?.model?.trim();
  if (m === undefined || m === '' || m.toLowerCase() === 'inherit') return undefined;
  return fileModelKnown(m, provider, declared) ? m : undefined;
}

const hooksOfContext = new WeakMap<NormalizeContext, { user: HooksConfig; recipe?: HooksConfig }>();
/** The user-side and recipe hooks every agent of the recipe runs (read once per load). */
function sharedHooksOf(doc: RecipeDocument, ctx: NormalizeContext): { user: HooksConfig; recipe?: HooksConfig } {
  let hooks = hooksOfContext.get(ctx);
  if (!hooks) {
    const recipe = recipeHooks(doc.hooks, ctx.file);
    hooks = { user: loadUserHooks(ctx.dir, ctx.env), ...(recipe ? { recipe } : {}) };
    hooksOfContext.set(ctx, hooks);
  }
  return hooks;
}

const mcpOfContext = new WeakMap<NormalizeContext, RecipeMcpServers>();
function mcpServersOf(doc: RecipeDocument, ctx: NormalizeContext): RecipeMcpServers {
  let servers = mcpOfContext.get(ctx);
  if (!servers) {
    servers = recipeMcpServers(doc, ctx.dir, ctx.file, ctx.env);
    mcpOfContext.set(ctx, servers);
  }
  return servers;
}

/** The recipe's `providers:` in the ai layer's shape (snake_case keys to camelCase). */
export function providerConfigs(doc: Pick<RecipeDocument, 'providers'>): ProviderConfig[] {
  return Object.entries(doc.providers ?? {}).map(([name, p]) => {
    const c: ProviderConfig = { name, type: p.type };
    if (p.base_url !== undefined) c.baseUrl = p.base_url;
    if (p.api_key_env !== undefined) c.apiKeyEnv = p.api_key_env;
    if (p.api !== undefined) c.api = p.api;
    if (p.headers !== undefined) c.headers = { ...p.headers };
    if (p.local !== undefined) c.local = p.local;
    if (p.compat) {
      c.compat = {};
      if (p.compat.text_tool_calls !== undefined) c.compat.textToolCalls = p.compat.text_tool_calls;
      if (p.compat.tool_choice !== undefined) c.compat.toolChoice = p.compat.tool_choice;
      if (p.compat.stream_usage !== undefined) c.compat.streamUsage = p.compat.stream_usage;
      if (p.compat.max_tokens_field !== undefined) c.compat.maxTokensField = p.compat.max_tokens_field;
    }
    return c;
  });
}

function normalizeAgent(
  name: string,
  a: AgentDocument,
  doc: RecipeDocument,
  models: LoadedRecipe['models'],
  ctx: NormalizeContext,
): LoadedAgent {
  const fileAgent = a.system_file ? readAgentFile(resolve(ctx.dir, a.system_file)) : undefined;
  const fromFile = fileAgent?.ok ? fileAgent.agent : undefined;
  const comp = a.compaction;
  const compDefaults = RECIPE_DEFAULTS.compaction;
  const provider = ctx.overrides.provider ?? a.provider ?? doc.provider ?? RECIPE_DEFAULTS.provider;
  const script = a.script ?? doc.script;
  const agent: LoadedAgent = {
    name,
    // An agent file's tools as Claude Code means them (Read, Glob, ...; none given = all of them).
    tools:
      a.tools ??
      (fromFile ? fileAgentTools(fromFile.tools, BUILTIN_TOOLS, (a.extensions?.length ?? 0) > 0) : IMPLICIT_TOOLS),
    model:
      ctx.overrides.model ??
      a.model ??
      fileModel(fromFile, provider, Object.keys(doc.models ?? {})) ??
      doc.model ??
      ctx.env.ORCHESTRATE_MODEL ??
      RECIPE_DEFAULTS.model,
    provider,
    compaction: {
      enabled: typeof comp === 'boolean' ? comp : (comp?.enabled ?? compDefaults.enabled),
      reserveTokens: (typeof comp === 'object' ? comp.reserve_tokens : undefined) ?? compDefaults.reserveTokens,
      keepRecentTokens:
        (typeof comp === 'object' ? comp.keep_recent_tokens : undefined) ?? compDefaults.keepRecentTokens,
    },
    bash: { allow: a.bash?.allow ?? [], deny: a.bash?.deny ?? [] },
    sandbox: a.sandbox ?? doc.sandbox ?? 'workspace',
    network: a.network ?? doc.network ?? false,
    skills: (a.skills ?? []).map((p) => resolve(ctx.dir, p)),
    extensions: (a.extensions ?? []).map((p) => resolve(ctx.dir, p)),
    implicit: false,
  };
  const description = a.description ?? fromFile?.description;
  if (description !== undefined) agent.description = description;
  const system = a.system ?? fromFile?.body;
  if (system !== undefined && system !== '') agent.system = system;
  if (a.system_file) agent.systemFile = resolve(ctx.dir, a.system_file);
  if (script !== undefined) agent.script = resolve(ctx.dir, script);
  const spec = models[modelKey(agent.model)];
  if (spec) agent.modelSpec = spec;
  const endpoint =
    provider === 'anthropic' || provider === 'scripted' ? undefined : findProvider(provider, providerConfigs(doc));
  if (endpoint) agent.providerConfig = endpoint;
  const fallback = fallbackTargets(
    a.fallback ?? doc.providers?.[provider]?.fallback,
    providerConfigs(doc),
    (id) => models[modelKey(id)],
  );
  if (fallback.length) agent.fallback = fallback;
  if (a.thinking !== undefined) agent.thinking = a.thinking;
  if (a.summaries !== undefined) agent.summaries = a.summaries;
  if (a.max_turns !== undefined) agent.maxTurns = a.max_turns;
  else if (fromFile?.maxTurns !== undefined) agent.maxTurns = fromFile.maxTurns;
  if (fromFile?.isolation) agent.isolation = fromFile.isolation;
  const shared = sharedHooksOf(doc, ctx);
  const hooks = agentHooks([
    shared.user,
    shared.recipe,
    fromFile?.hooks,
    a.hooks !== undefined ? recipeHooks(a.hooks, ctx.file) : undefined,
  ]);
  if (hooks) agent.commandHooks = hooks;
  const loop = loopOf(a.loop);
  if (loop) agent.loop = loop;
  const mcpServers = agentServerSpecs(
    a,
    fromFile,
    agent.systemFile ? resolve(agent.systemFile, '..') : ctx.dir,
    agent.systemFile ?? ctx.file,
    mcpServersOf(doc, ctx),
  );
  if (mcpServers.length > 0) agent.mcpServers = mcpServers;
  const repoPick = repoMcpPick(a, fromFile, mcpServersOf(doc, ctx));
  if (repoPick) agent.mcpRepoPick = repoPick;
  // mcp__ tools of servers the agent does not get were warned about (an imported file's): drop them.
  const served = new Set([...mcpServers.map((m) => m.name), ...(Array.isArray(repoPick) ? repoPick : [])]);
  agent.tools = agent.tools.filter((t) => {
    const server = serverOfToolName(t.trim());
    return (
      !t.startsWith('mcp__') ||
      (server !== undefined && served.has(server)) ||
      (server === undefined && served.size > 0)
    );
  });
  if (a.board !== undefined) agent.board = a.board;
  // The file's disallowedTools (Claude Code names) apply to the tools its file gives.
  const disallowed = [
    ...(a.disallowed_tools ?? []),
    ...(a.tools === undefined && fromFile?.disallowedTools
      ? fileDisallowedTools(
          fromFile.disallowedTools.map((d) => d.name),
          BUILTIN_TOOLS,
        )
      : []),
  ];
  if (disallowed.length) {
    agent.disallowedTools = [...new Set(disallowed)];
    agent.tools = agent.tools.filter((t) => t.startsWith('mcp__') || !matchesAny(agent.disallowedTools!, [t]));
  }
  return agent;
}

function normalizeTask(
  t: TaskDocument,
  index: number,
  doc: RecipeDocument,
  agents: Record<string, LoadedAgent>,
  ctx: NormalizeContext,
): LoadedTask {
  const d = doc.defaults ?? {};
  const kind: LoadedTask['kind'] = t.run !== undefined ? 'run' : t.pair ? 'pair' : 'agent';
  const agentNames = Object.keys(agents);
  const fe = t.for_each;
  let forEach: ForEachSpec | undefined;
  if (Array.isArray(fe)) forEach = { kind: 'list', items: fe };
  else if (fe === 'board') forEach = { kind: 'board' };
  else if (typeof fe === 'string') forEach = { kind: 'expression', expression: fe, sources: referencedTasks(fe) };
  else if (fe) forEach = { kind: 'glob', pattern: fe.glob, type: fe.type ?? 'dir' };

  const output = t.output ?? (t.output_schema ? 'json' : 'text');
  const timeout = t.timeout ?? d.timeout;
  const idle = t.idle_timeout ?? d.idle_timeout;
  const task: LoadedTask = {
    id: t.id,
    kind,
    needs: needsOf(t as Record<string, unknown>)
      .map((n) => n.id)
      .filter((id, i, all) => all.indexOf(id) === i),
    as: t.as ?? 'item',
    // Attempts each need a worktree of their own (attempts-spec.ts).
    isolation:
      ((t.attempts ?? 1) > 1 ? 'worktree' : undefined) ??
      t.isolation ??
      d.isolation ??
      (t.pair ? undefined : agents[t.agent ?? d.agent ?? (agentNames.length === 1 ? agentNames[0]! : '')]?.isolation) ??
      'none',
    // An explicit land: train lands in the checkout: merge: apply.
    merge: t.merge ?? d.merge ?? ((t.land ?? d.land) === 'train' ? 'apply' : 'patch'),
    land: t.land ?? d.land ?? 'train',
    landOrder: t.land_order ?? d.land_order ?? 'completion',
    maxRepairs: t.max_repairs ?? d.max_repairs ?? RECIPE_DEFAULTS.maxRepairs,
    writes: t.writes ?? [],
    output,
    context: t.context ?? d.context ?? 'fresh',
    retries: retriesOf(t.retries ?? d.retries),
    budget: budgetOf(t.budget ?? d.budget),
    verify: verifyOf(t.verify ?? d.verify),
    verifyRetries: t.verify_retries ?? d.verify_retries ?? 0,
    onFailure: t.on_failure ?? d.on_failure ?? 'fail',
    env: { ...envOf(d.env), ...envOf(t.env) },
    dir: ctx.dir,
    location: ctx.locate(['tasks', index]),
  };
  if (t.serialize ?? d.serialize) task.serialize = t.serialize ?? d.serialize;
  if (kind === 'agent') task.agent = t.agent ?? d.agent ?? (agentNames.length === 1 ? agentNames[0] : IMPLICIT_AGENT);
  if (t.pair)
    task.pair = {
      planner: t.pair.planner,
      worker: t.pair.worker,
      maxRounds: t.pair.max_rounds ?? RECIPE_DEFAULTS.pairMaxRounds,
      onMaxRounds: t.pair.on_max_rounds ?? RECIPE_DEFAULTS.pairOnMaxRounds,
    };
  if (t.max_turns !== undefined) task.maxTurns = t.max_turns;
  if (t.description !== undefined) task.description = t.description;
  if (t.prompt !== undefined) task.prompt = t.prompt;
  if (t.run !== undefined) task.run = t.run;
  if (forEach) {
    task.forEach = forEach;
    task.location.forEach = ctx.locate(['tasks', index, 'for_each']);
  }
  if (t.key !== undefined) task.key = t.key;
  const cwd = t.cwd ?? d.cwd;
  if (cwd !== undefined) task.cwd = cwd;
  if ((t.trust_repo_config ?? d.trust_repo_config) === true) task.trustRepoConfig = true;
  if (t.output_schema) task.outputSchema = t.output_schema;
  if (timeout !== undefined) task.timeoutMs = parseDuration(timeout);
  if (idle !== undefined) task.idleTimeoutMs = parseDuration(idle);
  const maxParallel = t.max_parallel ?? (forEach ? d.max_parallel : undefined);
  const maxFailed = t.max_failed ?? (forEach ? d.max_failed : undefined);
  if (maxParallel !== undefined) task.maxParallel = maxParallel;
  if (maxFailed !== undefined) task.maxFailed = maxFailed;
  const publish = publishSpecOf(doc.publish, t.publish);
  if (publish) task.publish = publish;
  if (t.approve) {
    const timeoutMs = t.approve.timeout !== undefined ? parseDuration(t.approve.timeout) : undefined;
    task.approve = {
      prompt: t.approve.prompt ?? `Approve task ${t.id}?`,
      ...(timeoutMs !== undefined ? { timeoutMs } : {}),
      onTimeout: t.approve.on_timeout ?? 'reject',
    };
  }
  return task;
}

/** Builds the LoadedRecipe from a document that passed validation. */
export function normalizeRecipe(doc: RecipeDocument, ctx: NormalizeContext): LoadedRecipe {
  const agents: Record<string, LoadedAgent> = {};
  const models = modelsOf(doc.models);
  for (const [name, a] of Object.entries(doc.agents ?? {})) agents[name] = normalizeAgent(name, a, doc, models, ctx);
  const tasks = doc.tasks.map((t, i) => normalizeTask(t, i, doc, agents, ctx));
  if (tasks.some((t) => t.agent === IMPLICIT_AGENT) && !agents[IMPLICIT_AGENT]) {
    agents[IMPLICIT_AGENT] = { ...normalizeAgent(IMPLICIT_AGENT, {}, doc, models, ctx), implicit: true };
  }
  // A task's own model or thinking: the task runs a copy of its agent (`agent@task`), so pricing,
  // permits, rate limits and the dry run all see that model without a new agent definition.
  const copyAgent = (base: LoadedAgent, name: string, i: number, over: ModelOverride): string => {
    const derived: LoadedAgent = { ...base, name, taskOverride: ['tasks', i] };
    if (over.model !== undefined) {
      derived.model = ctx.overrides.model ?? over.model;
      const spec = models[modelKey(derived.model)];
      if (spec) derived.modelSpec = spec;
      else delete derived.modelSpec;
    }
    if (over.thinking !== undefined) derived.thinking = over.thinking;
    if (over.tools !== undefined) {
      derived.tools = over.tools;
      delete derived.mcpServers;
    }
    if (over.provider !== undefined && ctx.overrides.provider === undefined) {
      derived.provider = over.provider as LoadedAgent['provider'];
      const endpoint =
        over.provider === 'anthropic' || over.provider === 'scripted'
          ? undefined
          : findProvider(over.provider, providerConfigs(doc));
      if (endpoint) derived.providerConfig = endpoint;
      else delete derived.providerConfig;
    }
    agents[name] = derived;
    return name;
  };
  doc.tasks.forEach((t, i) => {
    const task = tasks[i]!;
    const base = task.agent === undefined ? undefined : agents[task.agent];
    if (!base || (t.model === undefined && t.thinking === undefined && t.provider === undefined)) return;
    task.agent = copyAgent(base, `${base.name}@${task.id}`, i, t);
  });
  doc.tasks.forEach((t, i) => {
    if ((t.attempts ?? 1) > 1)
      tasks[i]!.attempts = attemptsSpecOf(t, tasks[i]!, (base, name, over) =>
        agents[base] ? copyAgent(agents[base]!, name, i, over) : base,
      );
  });
  giveBoardTools(agents, tasks, doc.board);
  const rl = doc.rate_limit;
  const recipe: LoadedRecipe = {
    file: ctx.file,
    dir: ctx.dir,
    name: doc.name,
    model: ctx.overrides.model ?? doc.model ?? ctx.env.ORCHESTRATE_MODEL ?? RECIPE_DEFAULTS.model,
    models,
    providers: providerConfigs(doc),
    providerLimits: providerLimitsOf(doc.providers),
    provider: ctx.overrides.provider ?? doc.provider ?? RECIPE_DEFAULTS.provider,
    concurrency: ctx.overrides.concurrency ?? doc.concurrency ?? RECIPE_DEFAULTS.concurrency,
    rateLimit: typeof rl === 'number' ? { default: rl, perModel: {} } : { perModel: { ...(rl ?? {}) } },
    ...(doc.pacing ? { pacing: doc.pacing } : {}),
    budget: budgetOf(doc.budget),
    inputs: ctx.inputs,
    inputValues: ctx.inputValues,
    secrets: doc.secrets ?? [],
    env: ctx.renderedEnv,
    sandbox: doc.sandbox ?? 'workspace',
    network: doc.network ?? false,
    cacheWarmup:
      typeof doc.cache_warmup === 'number'
        ? doc.cache_warmup
        : doc.cache_warmup === false
          ? false
          : RECIPE_DEFAULTS.cacheWarmupMinInstances,
    agents,
    tasks,
    board: boardSeeds(doc.board),
  };
  if (ctx.overrides.budgetUsd !== undefined) recipe.budget.usd = ctx.overrides.budgetUsd;
  if (ctx.overrides.budgetTokens !== undefined) recipe.budget.tokens = ctx.overrides.budgetTokens;
  if (doc.description !== undefined) recipe.description = doc.description;
  if (doc.version !== undefined) recipe.version = String(doc.version);
  if (doc.script !== undefined) recipe.script = resolve(ctx.dir, doc.script);
  return recipe;
}

/**
 * More than one agent can run: several agent tasks, a fan-out or a pair. Such recipes get the
 * task board's tools by default; a single agent has nobody to share a board with.
 */
function runsSeveralAgents(tasks: LoadedTask[]): boolean {
  const agentTasks = tasks.filter((t) => t.kind !== 'run');
  return agentTasks.length > 1 || agentTasks.some((t) => t.kind === 'pair' || t.forEach !== undefined);
}

/**
 * The board's tools per agent: tools it names itself are kept (tools: [task_list] gives just that
 * one); otherwise its own `board:`, else the recipe's (`board: false` off, true or a list on,
 * absent: on when several agents run) decides whether it gets all four. `board: false` on the
 * agent takes them away.
 */
function giveBoardTools(
  agents: Record<string, LoadedAgent>,
  tasks: LoadedTask[],
  board: RecipeDocument['board'],
): void {
  const recipeOn = board === undefined ? runsSeveralAgents(tasks) : board !== false;
  for (const agent of Object.values(agents)) {
    if (agent.board === false) {
      agent.tools = agent.tools.filter((t) => !isBoardTool(t));
      continue;
    }
    if (agent.tools.some(isBoardTool)) continue;
    if (agent.board ?? recipeOn) agent.tools = [...agent.tools, ...BOARD_TOOL_NAMES];
  }
}

/** `board:` items with their ids: a given id, else the next number not taken. */
function boardSeeds(board: RecipeDocument['board']): BoardSeed[] {
  if (!Array.isArray(board)) return [];
  const taken = new Set(board.flatMap((b) => (typeof b === 'object' && b.id !== undefined ? [b.id] : [])));
  let next = 1;
  const nextId = (): string => {
    while (taken.has(String(next))) next++;
    taken.add(String(next));
    return String(next);
  };
  return board.map((b) => {
    if (typeof b === 'string') return { id: nextId(), subject: b, blockedBy: [] };
    const seed: BoardSeed = {
      id: b.id ?? nextId(),
      subject: b.subject,
      blockedBy: (b.blocked_by ?? []).map(String),
    };
    if (b.description !== undefined) seed.description = b.description;
    if (b.owner !== undefined) seed.owner = b.owner;
    return seed;
  });
}
