// orchestrate: the public SDK entry. The runtime (AgentSession and its factory) is exported flat,
// with the pieces of the lower layers most programs need; every layer is also available whole,
// as a namespace here (`import { ai } from 'orchestrate-agents'`) or as its own subpath
// (`orchestrate-agents/ai`, `/agent`, `/tools`, `/session`). The npm name is orchestrate-agents;
// the command it installs is `orchestrate`.
//
//   import { createAgentSession } from 'orchestrate-agents';
//   const session = await createAgentSession({ cwd: process.cwd(), tools: ['read', 'bash'] });
//   session.subscribe((event) => { if (event.type === 'message_end') console.log(event.message.role); });
//   await session.prompt('Summarize README.md');
//   console.log(session.lastAssistantText());

export * from './runtime/index.js';

export * as ai from './ai/index.js';
export * as agent from './agent/index.js';
export * as tools from './tools/index.js';
export * as session from './session/index.js';

// ---- layer 0: messages, models, providers
export type {
  AssistantMessage,
  AssistantMessageEvent,
  Context,
  ImageContent,
  Message,
  Model,
  StopReason,
  StreamFunction,
  StreamOptions,
  TextContent,
  ThinkingContent,
  ThinkingLevel,
  Tool,
  ToolCall,
  ToolResultMessage,
  Usage,
  UserMessage,
} from './ai/types.js';
export {
  getModel,
  listModels,
  modelFromSpec,
  priceOf,
  resolveModel,
  scriptedModel,
  DEFAULT_MODEL_ID,
  type ModelSpec,
} from './ai/models.js';
export { stream, complete, registerProvider } from './ai/registry.js';
export { registerBuiltInProviders } from './ai/providers.js';
export {
  createScriptedProvider,
  type ScriptedProvider,
  type ScriptedTurn,
  type ScriptedScript,
} from './ai/scripted.js';
export { loadScriptFile, parseScript } from './ai/scripted-script.js';

// ---- layer 1: the loop and its tools
export type {
  AgentEvent,
  AgentMessage,
  AgentThinkingLevel,
  AgentTool,
  AgentToolResult,
  AnyAgentTool,
  AgentLoopConfig,
} from './agent/types.js';
export { Agent } from './agent/agent.js';

// ---- layer 2: built-in tools and sessions
export {
  createCodingTools,
  createTool,
  BUILTIN_TOOL_NAMES,
  DEFAULT_TOOL_NAMES,
  READ_ONLY_TOOL_NAMES,
} from './tools/coding-tools.js';
export type { BashPolicy } from './tools/bash-policy.js';
export { SessionStore } from './session/session-store.js';
export { parseSummary, renderSummary, type StructuredSummary } from './session/parse-summary.js';
export type { SessionEntry, SessionHeader, FileLists } from './session/types.js';
