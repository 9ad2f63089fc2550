// The shapes around an AgentSession: how it is configured, what its operations return, and the
// state snapshot that get_state / UIs read.
import type { AgentStreamOptions, QueueMode } from '../agent/agent.js';
import type { AgentThinkingLevel, AnyAgentTool } from '../agent/types.js';
import type { AssistantMessage, ImageContent, Model, StreamFunction } from '../ai/types.js';
import type { CompactionSettings } from '../session/defaults.js';
import type { SessionStore } from '../session/session-store.js';
import type { Skill } from '../tools/skills.js';
import type { RetrySettings } from './defaults.js';
import type { LoadedExtensions } from './extensions.js';
import type { LoopDetectionSettings, RunLimits } from './run-limits.js';
import type { AgentSessionHooks } from './session-hooks.js';
import type { HooksConfig } from './command-hooks.js';
import type { HookSandbox } from './hook-runner.js';

/**
 * How a session behaves: the same settings in createAgentSession's options and in the session's
 * config (the factory passes them on as given).
 */
export interface SessionBehaviour {
  /** A different stream function for summary calls only, e.g. permits of another kind (default: streamFn). */
  summaryStreamFn?: StreamFunction;
  /** Provider options for every call (provider retries, idle timeout, headers...). */
  streamOptions?: AgentStreamOptions;
  compaction?: Partial<CompactionSettings>;
  /** Session-level retries of transient provider errors. */
  retry?: Partial<RetrySettings>;
  /**
   * Loop detection (repeated calls, cycles, repeated text): warn, then stop with a 'loop' error.
   * Default DEFAULT_LOOP_DETECTION; `{ enabled: false }` turns it off.
   */
  loopDetection?: Partial<LoopDetectionSettings>;
  /** Caps on turns per prompt, spend (USD / tokens of this session object) and compactions per prompt (run-limits.ts). */
  limits?: Partial<RunLimits>;
  /** Retries of a failing summary call inside one compaction. */
  summaryRetry?: { maxAttempts?: number; baseDelayMs?: number; maxDelayMs?: number };
  steeringMode?: QueueMode;
  followUpMode?: QueueMode;
}

export interface AgentSessionConfig extends SessionBehaviour {
  store: SessionStore;
  model: Model;
  thinkingLevel?: AgentThinkingLevel;
  tools: AnyAgentTool[];
  systemPrompt: string;
  /** Skills the user may invoke with `/skill:name args` (expanded before sending). */
  skills?: Skill[];
  /** Used for the loop AND for summaries (so a permit-wrapped stream covers both). */
  streamFn?: StreamFunction;
  apiKey?: string;
  /** "model" asks the model for summaries; "extractive" builds them from the conversation (scripted runs). */
  summaries?: 'model' | 'extractive';
  hooks?: AgentSessionHooks;
  /** Command hooks in Claude Code's format and where they run (hook-session.ts). */
  commandHooks?: { config: HooksConfig; projectDir: string; sandbox: HookSandbox };
  extensions?: LoadedExtensions;
  /** Resolves a model id (and provider) for setModel. */
  resolveModel?: (modelId: string, provider?: string) => Model;
  cwd: string;
  /** Where notices go (extension errors, warnings); default stderr. */
  notify?: (message: string) => void;
  /** Run when the session is disposed, after the tools (MCP servers end here). */
  disposers?: (() => void | Promise<void>)[];
}

export interface PromptOptions {
  images?: ImageContent[];
  /** While a run is in progress: queue as steering or follow-up instead of failing. */
  streamingBehavior?: 'steer' | 'followUp';
}

export interface NavigateResult {
  leafId: string | null;
  /** Text of the user message navigated to (the leaf is its parent), for re-editing. */
  editorText?: string;
  summaryEntryId?: string;
}

export interface ForkResult {
  /** Text of the user message forked from, for re-editing. */
  text: string;
  sessionFile?: string;
  sessionId: string;
}

export interface SessionState {
  model: { provider: string; id: string; contextWindow: number };
  thinkingLevel: AgentThinkingLevel;
  isStreaming: boolean;
  isCompacting: boolean;
  sessionFile?: string;
  sessionId: string;
  leafId: string | null;
  messageCount: number;
  pendingMessageCount: number;
  autoCompactionEnabled: boolean;
  autoRetryEnabled: boolean;
  steeringMode: QueueMode;
  followUpMode: QueueMode;
}

/** One summary model call (a compaction's or a branch summary's): its reply and when it was asked and answered. */
export interface SummaryCall {
  message: AssistantMessage;
  startTs: number;
  endTs: number;
}
