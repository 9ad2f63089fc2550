// Layer 1 types: what the loop keeps in its state (AgentMessage), how a tool runs (AgentTool),
// what it reports (AgentEvent), and how it is configured (AgentLoopConfig).
import type { z } from 'zod';
import type {
  AssistantMessage,
  AssistantMessageEvent,
  ImageContent,
  Message,
  Model,
  StreamFunction,
  StreamOptions,
  TextContent,
  ToolCall,
  ToolResultMessage,
} from '../ai/types.js';

/** Reasoning effort as the agent sees it: the provider levels plus "off". */
export type AgentThinkingLevel = 'off' | 'minimal' | 'low' | 'medium' | 'high' | 'xhigh';

// ---- Internal messages -------------------------------------------------------------------
// They live in the loop's state and session files; convertToLlm reduces them to user messages
// at the provider boundary, so the model never sees an internal role.

/** The structured summary that replaces compacted history. */
export interface CompactionSummaryMessage {
  role: 'compactionSummary';
  summary: string;
  tokensBefore: number;
  timestamp: number;
}

/** A summary of a branch the conversation came back from. */
export interface BranchSummaryMessage {
  role: 'branchSummary';
  summary: string;
  fromId: string;
  timestamp: number;
}

/** Application-defined context (extensions, orchestrator notes, merged plans). */
export interface CustomMessage {
  role: 'custom';
  customType: string;
  content: string | (TextContent | ImageContent)[];
  /** Whether a UI should show it. */
  display: boolean;
  details?: unknown;
  timestamp: number;
}

/** A message from another agent (or the coordinator) delivered over a port. */
export interface PeerMessage {
  role: 'peer';
  from: string;
  text: string;
  timestamp: number;
}

/** A shell command run by the user outside the loop. */
export interface BashExecutionMessage {
  role: 'bashExecution';
  command: string;
  output: string;
  exitCode: number | null;
  cancelled: boolean;
  truncated: boolean;
  fullOutputPath?: string;
  excludeFromContext?: boolean;
  timestamp: number;
}

export type InternalMessage =
  | CompactionSummaryMessage
  | BranchSummaryMessage
  | CustomMessage
  | PeerMessage
  | BashExecutionMessage;

export type AgentMessage = Message | InternalMessage;

// ---- Tools ---------------------------------------------------------------------------------

/** What a tool returns. Throw to report a failure; `terminate` asks the loop to stop after this batch. */
export interface AgentToolResult<TDetails = unknown> {
  content: (TextContent | ImageContent)[];
  details?: TDetails;
  terminate?: boolean;
}

export type AgentToolUpdate<TDetails = unknown> = (partial: AgentToolResult<TDetails>) => void;

/**
 * A tool is a zod schema plus a function. The JSON Schema the model sees is generated from
 * `parameters`; arguments are repaired (stage 1) and validated (stage 2) before `execute`.
 */
export interface AgentTool<TSchema extends z.ZodType = z.ZodType, TDetails = unknown> {
  name: string;
  /** Human-facing name for UIs. */
  label?: string;
  /** Written for the model: what the tool does and when to use it. */
  description: string;
  parameters: TSchema;
  /** If any tool in a batch is sequential, the whole batch runs one call at a time. */
  sequential?: boolean;
  /**
   * Calls of one batch whose tools share this key run one at a time, in the order the model gave;
   * the batch's other calls still overlap them (an MCP server's writes, which may not be safe to
   * run together, while its read-only tools and other tools run in parallel).
   */
  serialGroup?: string;
  /** One line for the system prompt's tool list (falls back to the description's first line). */
  promptSnippet?: string;
  /** Extra guideline bullets for the system prompt while the tool is active. */
  promptGuidelines?: string[];
  /** Parameter-name aliases the model tends to use, e.g. { file_path: 'path' }. */
  argumentAliases?: Record<string, string>;
  execute(
    toolCallId: string,
    params: z.output<TSchema>,
    signal: AbortSignal,
    onUpdate: AgentToolUpdate<TDetails>,
  ): Promise<AgentToolResult<TDetails>>;
  /** Releases what the tool holds (bash: its private temp folder); called when the session ends. */
  dispose?(): void | Promise<void>;
}

// A tool of any schema; used where tools are stored side by side.
// biome-ignore lint/suspicious/noExplicitAny: a tool's parameters and details vary per tool; `unknown` would refuse every concrete tool (its execute takes its own type)
export type AnyAgentTool = AgentTool<any, any>;

// ---- Events -----------------------------------------------------------------------------------

export type AgentEvent =
  | { type: 'agent_start' }
  | { type: 'agent_end'; messages: AgentMessage[] }
  | { type: 'turn_start' }
  | { type: 'turn_end'; message: AssistantMessage; toolResults: ToolResultMessage[] }
  | { type: 'message_start'; message: AgentMessage }
  | { type: 'message_update'; message: AssistantMessage; assistantMessageEvent: AssistantMessageEvent }
  | { type: 'message_end'; message: AgentMessage }
  | { type: 'tool_execution_start'; toolCallId: string; toolName: string; args: unknown }
  | {
      type: 'tool_execution_update';
      toolCallId: string;
      toolName: string;
      args: unknown;
      partialResult: AgentToolResult;
    }
  | {
      type: 'tool_execution_end';
      toolCallId: string;
      toolName: string;
      result: AgentToolResult;
      isError: boolean;
    };

// ---- Loop configuration ---------------------------------------------------------------------------

export interface AgentContext {
  systemPrompt?: string;
  messages: AgentMessage[];
  tools: AnyAgentTool[];
}

export interface BeforeToolCallContext {
  assistantMessage: AssistantMessage;
  toolCall: ToolCall;
  /** Validated arguments. */
  args: unknown;
  context: AgentContext;
}

export interface AfterToolCallContext extends BeforeToolCallContext {
  result: AgentToolResult;
  isError: boolean;
}

export interface BeforeToolCallResult {
  block?: boolean;
  reason?: string;
  /**
   * Arguments to run the tool with instead (a policy hook that rewrites the call, e.g. a command
   * hook's updatedInput); validated again with the tool's schema, invalid ones fail the call.
   */
  args?: unknown;
}

/** Fields replace the executed values wholesale; omitted fields keep them. */
export interface AfterToolCallResult {
  content?: AgentToolResult['content'];
  details?: unknown;
  isError?: boolean;
  terminate?: boolean;
}

/** What the hook before each turn may change. */
export interface BeforeTurnResult {
  model?: Model;
  /** Replaces the loop's context messages from this turn on. */
  messages?: AgentMessage[];
  systemPrompt?: string;
}

export interface StopHookContext {
  message: AssistantMessage;
  toolResults: ToolResultMessage[];
  newMessages: AgentMessage[];
}

export interface AgentLoopConfig extends Omit<StreamOptions, 'signal' | 'apiKey'> {
  model: Model;
  /** Reduces internal messages to what the model accepts. Called once per model call. */
  convertToLlm?: (messages: AgentMessage[]) => Message[] | Promise<Message[]>;
  /** Runs before convertToLlm on every model call (pruning, injection). */
  transformContext?: (messages: AgentMessage[], signal: AbortSignal) => Promise<AgentMessage[]>;
  /** Resolved before every model call (short-lived tokens). */
  getApiKey?: (provider: string) => string | undefined | Promise<string | undefined>;
  apiKey?: string;
  getSteeringMessages?: () => AgentMessage[] | Promise<AgentMessage[]>;
  getFollowUpMessages?: () => AgentMessage[] | Promise<AgentMessage[]>;
  /** Before each model call: may swap the model, the system prompt or the context. */
  beforeTurn?: (
    context: AgentContext,
    model: Model,
    signal: AbortSignal,
    // biome-ignore lint/suspicious/noConfusingVoidType: a hook that returns nothing (typed `void`) must fit; `undefined` would refuse it
  ) => Promise<BeforeTurnResult | void> | BeforeTurnResult | void;
  /** After each turn: returning true ends the run (budgets, external stop). */
  shouldStop?: (ctx: StopHookContext) => boolean | Promise<boolean>;
  beforeToolCall?: (
    ctx: BeforeToolCallContext,
    signal: AbortSignal,
    // biome-ignore lint/suspicious/noConfusingVoidType: a hook that returns nothing (typed `void`) must fit; `undefined` would refuse it
  ) => Promise<BeforeToolCallResult | void> | BeforeToolCallResult | void;
  afterToolCall?: (
    ctx: AfterToolCallContext,
    signal: AbortSignal,
    // biome-ignore lint/suspicious/noConfusingVoidType: a hook that returns nothing (typed `void`) must fit; `undefined` would refuse it
  ) => Promise<AfterToolCallResult | void> | AfterToolCallResult | void;
  /** Overrides the provider dispatch (tests, proxies). */
  streamFn?: StreamFunction;
}
