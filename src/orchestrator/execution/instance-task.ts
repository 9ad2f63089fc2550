// What the coordinator hands a worker thread for one attempt of one instance. Plain data plus
// MessagePorts (moved through the transferList), so it crosses the thread boundary by structured
// clone. Types only: the coordinator imports this without loading the runtime.
import type { MessagePort } from 'node:worker_threads';
import type { LearnedWindow } from '../../ai/learned-windows.js';
import type { ModelSpec } from '../../ai/models.js';
import type { ProviderConfig } from '../../ai/provider-config.js';
import type { ScriptedScript } from '../../ai/scripted.js';
import type { FallbackTarget } from '../../recipe/fallback.js';
import type { HooksConfig } from '../../runtime/command-hooks.js';
import type { LoopDetectionSettings } from '../../runtime/run-limits.js';
import type { McpServerSpec } from '../../tools/mcp/config.js';

export interface AgentSpec {
  name: string;
  /** Model id or alias (resolved for the provider in the worker). */
  model: string;
  /** Limits and price of a model the recipe declares (`models:`); the worker builds it from these. */
  modelSpec?: ModelSpec;
  /** anthropic, scripted, or an OpenAI-compatible provider's name (its endpoint in agent.providerConfig). */
  provider: string;
  /** The endpoint of an OpenAI-compatible (or re-pointed Anthropic) provider; its key is read in the worker. */
  providerConfig?: ProviderConfig;
  /** Where its calls move when its model stays overloaded or down (recipe `fallback:`), in order. */
  fallback?: FallbackTarget[];
  /** Absolute path of the script for the scripted provider. */
  script?: string;
  /**
   * That script, parsed once by the coordinator: a thread then never loads the YAML parser, nor
   * re-reads the file per instance. Absent when the coordinator could not parse it; the thread
   * then loads `script` itself and reports the problem.
   */
  scriptData?: ScriptedScript;
  /** Role text appended to the runtime's system prompt (which keeps the tool guidelines). */
  system?: string;
  tools: string[];
  thinking?: 'off' | 'minimal' | 'low' | 'medium' | 'high' | 'xhigh';
  /** Who writes its summaries (undefined: the runtime's default for the provider). */
  summaries?: 'model' | 'extractive';
  compaction: { enabled: boolean; reserveTokens: number; keepRecentTokens: number };
  /** Loop detection settings the recipe changes (`loop:`); undefined: the runtime's defaults. */
  loop?: Partial<LoopDetectionSettings>;
  bash: { allow: string[]; deny: string[] };
  /** Absolute skill folders or files. */
  skills: string[];
  /** Absolute extension module paths. */
  extensions: string[];
  /** MCP servers of the agent, unexpanded: the thread expands ${VAR}s with its own environment. */
  mcpServers?: McpServerSpec[];
  /** Servers it takes from the repository's .mcp.json when the task trusts it (names, or all). */
  mcpRepoPick?: string[] | 'all';
  /** Tool patterns the agent may not use (MCP tools). */
  disallowedTools?: string[];
  /** Command hooks (Claude Code's format) from the user's settings, the recipe and the agent file. */
  commandHooks?: HooksConfig;
}

export type InstanceRole = 'solo' | 'pair-worker' | 'pair-planner';

export interface InstanceTask {
  runId: string;
  task: string;
  /** Instance id (`task` or `task.key`); pair members add `@worker` / `@planner`. */
  id: string;
  attempt: number;
  /** The task (or, for pair members, the pair instance) this agent belongs to. */
  parent?: string;
  role: InstanceRole;
  sessionFile: string;
  cwd: string;
  /** The first prompt of a fresh session. */
  prompt: string;
  /** `context: summaries`: the merged plan of the needed tasks, given right after the prompt. */
  contextMessage?: string;
  /** Sent to a used session after a failed or aborted reply, or after a failed attempt's finished answer (AgentHost.start). */
  continueNote: string;
  /**
   * The previous attempt of this instance failed (a task-level retry, not a resume after an
   * interruption): a finished answer in the session is not the end, the continue note follows it.
   */
  afterFailure?: boolean;
  agent: AgentSpec;
  apiKey?: string;
  baseUrl?: string;
  /** Values kept out of the session file (run/secrets.ts; `local` ones never go to a remote worker). */
  secrets?: { name: string; value: string; local?: boolean }[];
  /** First delay of model-call retries (provider and session level), from ORCHESTRATE_RETRY_BASE_MS. */
  retryBaseDelayMs?: number;
  /** Globs relative to `cwd` that edit/write may touch (undefined: anywhere in cwd). */
  writeScope?: string[];
  /** `trust_repo_config: true`: read the .mcp.json in `cwd` (the repository's) for MCP servers. */
  trustRepoConfig?: boolean;
  /**
   * Confinement of bash and verify (tools/sandbox.ts): the mode the coordinator found usable,
   * the network switch, what to hide besides the defaults (the run folder), and the files inside
   * the workspace that stay read-only (the run's trusted inputs: the recipe, agent files, .mcp.json ...).
   */
  sandbox?: { mode: 'workspace' | 'none'; network: boolean; hide: string[]; readOnly?: string[] };
  output: 'text' | 'json';
  outputSchema?: Record<string, unknown>;
  outputRetries: number;
  verify: { name?: string; run: string }[];
  verifyRetries: number;
  verifyTimeoutMs?: number;
  env: Record<string, string>;
  /** Forward streaming deltas (message_update, tool_execution_update) as events. */
  fullEvents: boolean;
  /** Rounds of a planner/worker pair. */
  maxRounds?: number;
  /** What a pair out of rounds without approval is: failed (not_approved) or accepted. */
  onMaxRounds?: 'fail' | 'accept';
  /**
   * Model calls this attempt may make across all its prompts (task, verify and output fix-ups);
   * 0 = no cap. The task's max_turns, else the agent's, else the runtime's default.
   */
  maxTurns: number;
  /** Compact the session into a handoff summary when the agent is done. */
  summarize: boolean;
  /** Context windows the run's agents learned so far (shared-windows.ts): sessions start with them. */
  learnedWindows?: LearnedWindow[];
  /** Tracing on: the W3C traceparent of the run's span this agent runs under (plain JSON, so it crosses Redis too). */
  traceparent?: string;
  /** To the coordinator (moved in the transferList). */
  port: MessagePort;
  /** Direct channel to the other pair member (moved in the transferList). */
  peerPort?: MessagePort;
  /** To the run's MCP host in the coordinator's thread (`scope: run` servers; moved in the transferList). */
  mcpPort?: MessagePort;
}
