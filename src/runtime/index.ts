// Public surface of layer 3 (runtime): AgentSession, the createAgentSession factory, the
// delivery modes (print, json, rpc) and extensions.
export {
  RunStoppedError,
  isRunStoppedError,
  DEFAULT_LOOP_DETECTION,
  DEFAULT_RUN_LIMITS,
  type RunStopKind,
  type LoopDetectionSettings,
  type RunLimits,
} from './run-limits.js';
export { RUNTIME_DEFAULTS, DEFAULT_RETRY_SETTINGS, type RetrySettings } from './defaults.js';
export { AgentSession } from './agent-session.js';
// The session's config, options, results and state snapshot (all of that file is types).
export type * from './agent-session-types.js';
export {
  createAgentSession,
  AgentSessionConfigError,
  defaultSessionDir,
  mostRecentSession,
  orchestrateHome,
  textOrFile,
  type CreateAgentSessionOptions,
} from './create-agent-session.js';
export {
  DEFAULT_HOOK_TIMEOUT_SEC,
  HOOK_EVENTS,
  HooksConfigError,
  hasHooks,
  hookSettingsFiles,
  loadHookSources,
  loadHooksFile,
  mergeHooksConfigs,
  parseHooksConfig,
  type CommandHook,
  type HookEventName,
  type HookMatcherGroup,
  type HooksConfig,
} from './command-hooks.js';
export { PromptBlockedError, type HookRunEvent } from './hook-session.js';
export type { AgentSessionHooks } from './session-hooks.js';
export type {
  AgentSessionEvent,
  AgentSessionEventType,
  AgentSessionListener,
  CompactionResult,
  CompactionReason,
} from './session-events.js';
export type { CompactOptions } from './session-compaction.js';
export { isRetryableError, retryDelay } from './retry-policy.js';
export {
  planResume,
  cutOffTurn,
  interruptedCallText,
  READ_ONLY_TOOLS,
  type CutOffTurn,
  type ResumePlan,
  type ResumePoint,
  type ResumeKind,
} from './session-resume.js';
export {
  checkCompaction,
  extractiveSupplier,
  chainSuppliers,
  type CompactionCheck,
  type SummarySupplier,
} from './auto-compaction.js';
export { buildExtractiveSummary, type ExtractiveSummary, type ExtractiveSummaryInput } from './extractive-summary.js';
export { computeStats, type SessionStats, type TokenTotals } from './stats.js';
export { assembleSystemPrompt, type AssembleSystemPromptOptions, type AssembledSystemPrompt } from './system-prompt.js';
export {
  loadExtensions,
  emptyExtensions,
  ExtensionLoadError,
  type ExtensionAPI,
  type ExtensionFactory,
  type ExtensionSpec,
  type ExtensionCommand,
  type ExtensionCommandContext,
  type ExtensionHandlers,
  type ExtensionEventName,
  type LoadedExtensions,
  type ToolCallEvent,
  type ToolResultEvent,
} from './extensions.js';
export { runPrintMode, lastReply, resumeCutOffTurn, type ModeOutput } from './modes/print.js';
export { runJsonMode } from './modes/json.js';
export {
  runRpcMode,
  RpcServer,
  RPC_COMMANDS,
  RPC_COMMAND_TYPES,
  salvageIdAndType,
  type RpcCommandType,
  type RpcResponse,
} from './modes/rpc.js';
export { readJsonLines, jsonLine, eventLine, eventLineWriter } from './modes/jsonl.js';
