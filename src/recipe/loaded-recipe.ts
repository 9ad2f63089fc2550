// What a loaded recipe is: the plain data (structured-clone safe, so it crosses to worker threads)
// normalize.ts makes from the validated YAML document and the coordinator runs.
import type { ModelSpec } from '../ai/models.js';
import type { ProviderConfig } from '../ai/provider-config.js';
import type { HooksConfig } from '../runtime/command-hooks.js';
import type { LoopDetectionSettings } from '../runtime/run-limits.js';
import type { McpServerSpec } from '../tools/mcp/config.js';
import type { RetryFailureClass } from './defaults.js';
import type { InputSpec } from './inputs.js';
import type { FallbackTarget } from './fallback.js';
import type { AttemptsSpec } from './attempts-spec.js';
import type { PublishSpec } from './publish-spec.js';
import type { ProviderName } from './schema.js';

export interface Budget {
  usd?: number;
  tokens?: number;
}

/** A task's `retries:` with the defaults filled in: how many retries, their backoff, and on which failure classes. */
export interface TaskRetries {
  count: number;
  backoff: { initialMs: number; maxMs: number; factor: number };
  on: RetryFailureClass[];
}

export interface LoadedAgent {
  name: string;
  description?: string;
  /** The system prompt text (inline, or the body of system_file); undefined = runtime default. */
  system?: string;
  /** Absolute path of the agent file, when there is one. */
  systemFile?: string;
  tools: string[];
  model: string;
  /** Limits and price of `model` when the recipe declares it under `models:`. */
  modelSpec?: ModelSpec;
  provider: ProviderName;
  /** The endpoint when `provider` is neither anthropic nor scripted (declared, or a preset). */
  providerConfig?: ProviderConfig;
  /** `fallback:` (its own, else its provider's): where its calls move when its model stays overloaded or down. */
  fallback?: FallbackTarget[];
  /** Absolute path of the scripted-provider script (agent's own, else the recipe's). */
  script?: string;
  thinking?: 'off' | 'minimal' | 'low' | 'medium' | 'high' | 'xhigh';
  /** Who writes its summaries (undefined: the model, or extractive for the scripted provider). */
  summaries?: 'model' | 'extractive';
  /** Model calls per attempt of an instance (`max_turns`; undefined: the runtime's default; 0 = no cap). */
  maxTurns?: number;
  /** Loop detection settings the recipe changes (`loop:`); undefined: the runtime's defaults. */
  loop?: Partial<LoopDetectionSettings>;
  compaction: { enabled: boolean; reserveTokens: number; keepRecentTokens: number };
  bash: { allow: string[]; deny: string[] };
  /** Confinement of its bash and its tasks' verify commands (the agent's, else the recipe's). */
  sandbox?: 'workspace' | 'none';
  network?: boolean;
  skills: string[];
  extensions: string[];
  /** MCP servers whose tools it gets (unexpanded: the thread that starts them expands ${VAR}s). */
  mcpServers?: McpServerSpec[];
  /** Servers it takes from a trusted repository's .mcp.json (`trust_repo_config`), read where it runs. */
  mcpRepoPick?: string[] | 'all';
  /** Tool patterns it may not use (`disallowed_tools:`). */
  disallowedTools?: string[];
  /** True for the built-in agent used when a recipe defines none. */
  implicit: boolean;
  /** A task's own model/thinking on this agent (`agent@task`): the recipe path of that task. */
  taskOverride?: (string | number)[];
  /** The agent's own `board:` (true/false); undefined: the recipe's board setting decides. */
  board?: boolean;
  /**
   * Its command hooks (Claude Code's format): the user's settings files, the recipe's `hooks:`,
   * its agent file's and its own `hooks:` (recipe-hooks.ts); undefined when there are none.
   */
  commandHooks?: HooksConfig;
  /** The agent file's `isolation: worktree`: its tasks default to a worktree per instance. */
  isolation?: 'worktree';
}

export type ForEachSpec =
  | { kind: 'list'; items: unknown[] }
  | { kind: 'glob'; pattern: string; type: 'dir' | 'file' | 'any' }
  /** `sources`: the tasks the expression reads; empty means it only uses inputs/env (static). */
  | { kind: 'expression'; expression: string; sources: string[] }
  /** `for_each: board`: the task board's open items when the task starts. */
  | { kind: 'board' };

/** An item the task board starts with (`board:`); ids are filled in (the next number when not given). */
export interface BoardSeed {
  id: string;
  subject: string;
  description?: string;
  owner?: string;
  blockedBy: string[];
}

export interface VerifyStep {
  name?: string;
  /** Shell command template. */
  run: string;
}

export interface SourceLocation {
  line: number;
  col: number;
}

export interface LoadedTask {
  id: string;
  description?: string;
  kind: 'agent' | 'pair' | 'run';
  /** The agent running an `agent` task. */
  agent?: string;
  pair?: { planner: string; worker: string; maxRounds: number; onMaxRounds: 'fail' | 'accept' };
  /** Model calls per attempt of an instance (`max_turns`); undefined: the agent's, else the runtime's default. */
  maxTurns?: number;
  /** Templates (may hold `${{ }}`), rendered per instance by resolveInstance. */
  prompt?: string;
  run?: string;
  needs: string[];
  forEach?: ForEachSpec;
  /** Item variable name in expressions (`item` always works too). */
  as: string;
  /** Template for the instance key; undefined = derived from the item. */
  key?: string;
  /** Template relative to `dir`; undefined = the recipe folder. */
  cwd?: string;
  isolation: 'none' | 'worktree';
  /** Where a worktree instance's work lands (worktree-merge.ts); only used with isolation: worktree. */
  merge: 'patch' | 'branch' | 'apply';
  /** merge: apply: through the merge train (orchestrator/workspace/merge-train.ts) or the patch as it is. */
  land: 'train' | 'direct';
  /** land: train: completion order, or task order (recipe order of tasks; merge-train.ts). */
  landOrder: 'completion' | 'task';
  /** land: train: re-runs of an instance whose work conflicts or breaks verify on the tip. */
  maxRepairs: number;
  /** overlapping: instances whose writes: overlap never run at once. */
  serialize?: 'overlapping';
  writes: string[];
  output: 'text' | 'json';
  outputSchema?: Record<string, unknown>;
  context: 'fresh' | 'summaries';
  retries: TaskRetries;
  timeoutMs?: number;
  idleTimeoutMs?: number;
  budget: Budget;
  verify: VerifyStep[];
  verifyRetries: number;
  onFailure: 'fail' | 'continue';
  maxParallel?: number;
  maxFailed?: number;
  /** Environment templates for this task (over the recipe's env). */
  env: Record<string, string>;
  /** The recipe folder: relative paths and globs resolve against it. */
  dir: string;
  /** Where the task is defined, and its for_each, for messages about it at run time. */
  location: SourceLocation & { forEach?: SourceLocation };
  /** Approval gate (`approve:`): each instance waits for a user's answer before it is queued. */
  approve?: ApproveGate;
  /** Where its instances' changes are published (`publish:`, recipe block with the task's over it). */
  publish?: PublishSpec;
  /** `trust_repo_config: true`: its instances read the configuration (.mcp.json) of the repository they work in. */
  trustRepoConfig?: boolean;
  /** `attempts: N` (N > 1): each instance runs as N attempts in worktrees, and one is picked (attempts-spec.ts). */
  attempts?: AttemptsSpec;
}

export interface ApproveGate {
  prompt: string;
  /** Absent: it waits until someone answers. */
  timeoutMs?: number;
  onTimeout: 'approve' | 'reject';
}

/** `pacing:` (schema-parts.ts): by the limits learned from the provider's headers, or by `rate_limit:` alone. */
export type Pacing = 'adaptive' | 'fixed';

/** A provider's own `rate_limit`, `pacing` and `budget` (under `providers: NAME:`). */
export interface ProviderLimits {
  /** `total`: requests per minute to the provider, all models together; `perModel`: per model on it. */
  rateLimit: { total?: number; perModel: Record<string, number> };
  budget: Budget;
  /** Absent: the recipe's `pacing`. */
  pacing?: Pacing;
}

export interface LoadedRecipe {
  /** Absolute path of the recipe file. */
  file: string;
  dir: string;
  name: string;
  description?: string;
  version?: string;
  /** Run-level default model after overrides. */
  model: string;
  /** The recipe's `models:`, keyed by modelKey(id). */
  models: Record<string, ModelSpec>;
  /** The recipe's `providers:`, as the ai layer takes them. */
  providers: ProviderConfig[];
  /** Rate limits and budgets of the providers under `providers:` that set them, by provider name. */
  providerLimits: Record<string, ProviderLimits>;
  provider: ProviderName;
  script?: string;
  concurrency: number;
  /** Requests per minute: one figure for every model, and/or per model id. */
  rateLimit: { default?: number; perModel: Record<string, number> };
  /** The recipe's `pacing:` (every provider without its own); absent: adaptive. */
  pacing?: Pacing;
  budget: Budget;
  inputs: Record<string, InputSpec>;
  /** Input values after defaults and --set. */
  inputValues: Record<string, unknown>;
  secrets: string[];
  /** Recipe env with expressions evaluated (inputs only); the process env is not merged in. */
  env: Record<string, string>;
  /** Confinement of `run:` steps and the default of every agent. */
  sandbox?: 'workspace' | 'none';
  network?: boolean;
  /** Fan-outs of at least this many instances warm the prompt cache first (cache-warmup.ts); false: never. */
  cacheWarmup?: number | false;
  agents: Record<string, LoadedAgent>;
  /** In file order; plan.ts gives the topological order. */
  tasks: LoadedTask[];
  /** The task board's seed items (`board:` as a list); the board exists in every run, its tools only where given. */
  board: BoardSeed[];
}

/** Overrides from the command line; each wins over the recipe. */
export interface RecipeOverrides {
  model?: string;
  provider?: ProviderName;
  concurrency?: number;
  budgetUsd?: number;
  /** Replaces the recipe's `budget.tokens` (the run's total, spend so far included). */
  budgetTokens?: number;
}
