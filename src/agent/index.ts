// Layer 1 public surface: the agent loop, its tool pipeline and the stateful Agent.
export * from './types.js';
export { agentDefaults, BLOCKED_DEFAULT_TEXT, SKIPPED_FOR_ABORT_TEXT, SKIPPED_FOR_STEERING_TEXT } from './defaults.js';
export {
  convertToLlm,
  convertMessageToLlm,
  COMPACTION_SUMMARY_PREFACE,
  BRANCH_SUMMARY_PREFACE,
} from './convert-to-llm.js';
export { toolJsonSchema, toLlmTool, toLlmTools } from './tool-schema.js';
export { prepareArguments, type PreparedArguments } from './prepare-arguments.js';
export { invalidArgumentsText, unknownToolText, thrownText } from './tool-error-text.js';
export { executeToolCalls, type ToolBatchResult, type ToolPipelineConfig } from './tool-pipeline.js';
export {
  agentLoop,
  agentLoopContinue,
  runAgentLoop,
  runAgentLoopContinue,
  createAgentEventStream,
  type AgentEventSink,
  type AgentRunOptions,
} from './loop.js';
export {
  Agent,
  type AgentState,
  type AgentInitialState,
  type AgentOptions,
  type AgentHooks,
  type AgentListener,
  type AgentStreamOptions,
  type QueueMode,
} from './agent.js';
