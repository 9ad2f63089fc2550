// The stateful wrapper around the loop (kernel-spec 3.6): it owns the conversation, the model
// settings and the steering/follow-up queues, runs one loop at a time, and keeps its state in
// step with the loop's events so subscribers always see a consistent picture.
import { errorAssistantMessage } from '../ai/event-stream.js';
import type { AssistantMessage, ImageContent, Model, StreamFunction, StreamOptions, UserMessage } from '../ai/types.js';
import { agentDefaults } from './defaults.js';
import { runAgentLoop, runAgentLoopContinue, type AgentRunOptions } from './loop.js';
import { thrownText } from './tool-error-text.js';
import type {
  AgentContext,
  AgentEvent,
  AgentLoopConfig,
  AgentMessage,
  AgentThinkingLevel,
  AnyAgentTool,
} from './types.js';

export type QueueMode = 'all' | 'one-at-a-time';

export interface AgentState {
  systemPrompt: string;
  model: Model;
  thinkingLevel: AgentThinkingLevel;
  tools: AnyAgentTool[];
  messages: AgentMessage[];
  isStreaming: boolean;
  /** The assistant reply being streamed, or null. */
  streamMessage: AssistantMessage | null;
  /** Ids of tool calls that started and have not ended. */
  pendingToolCalls: Set<string>;
  /** The errorMessage of the last failed model call of the current/last run. */
  error?: string;
}

export interface AgentInitialState {
  model: Model;
  systemPrompt?: string;
  thinkingLevel?: AgentThinkingLevel;
  tools?: AnyAgentTool[];
  messages?: AgentMessage[];
}

/** Loop hooks the Agent passes through unchanged. */
export type AgentHooks = Pick<AgentLoopConfig, 'beforeToolCall' | 'afterToolCall' | 'beforeTurn' | 'shouldStop'>;

/** Provider options for every model call of the agent (model, key, signal and reasoning are set by the Agent). */
export type AgentStreamOptions = Omit<StreamOptions, 'signal' | 'apiKey' | 'reasoning'>;

export interface AgentOptions extends AgentHooks {
  initialState: AgentInitialState;
  convertToLlm?: AgentLoopConfig['convertToLlm'];
  transformContext?: AgentLoopConfig['transformContext'];
  steeringMode?: QueueMode;
  followUpMode?: QueueMode;
  streamFn?: StreamFunction;
  getApiKey?: AgentLoopConfig['getApiKey'];
  apiKey?: string;
  streamOptions?: AgentStreamOptions;
  /** Where a throwing subscriber is reported (default: console.error); the run goes on. */
  onListenerError?: (error: unknown, event: AgentEvent) => void;
}

export type AgentListener = (event: AgentEvent) => void;

export class Agent {
  private readonly _state: AgentState;
  // Replaced (never mutated) on subscribe/unsubscribe, so dispatch needs no defensive copy.
  private listeners: readonly AgentListener[] = [];
  private steeringQueue: AgentMessage[] = [];
  private followUpQueue: AgentMessage[] = [];
  private abortController: AbortController | undefined;
  private running: Promise<void> | undefined;
  private opts: Omit<AgentOptions, 'initialState'>;

  constructor(options: AgentOptions) {
    const { initialState, ...rest } = options;
    this.opts = rest;
    this._state = {
      systemPrompt: initialState.systemPrompt ?? '',
      model: initialState.model,
      thinkingLevel: initialState.thinkingLevel ?? 'off',
      tools: initialState.tools ?? [],
      messages: initialState.messages?.slice() ?? [],
      isStreaming: false,
      streamMessage: null,
      pendingToolCalls: new Set(),
      error: undefined,
    };
  }

  /** The live state. Read it freely; change it only through the Agent's methods. */
  get state(): Readonly<AgentState> {
    return this._state;
  }

  get steeringMode(): QueueMode {
    return this.opts.steeringMode ?? agentDefaults.steeringMode;
  }

  get followUpMode(): QueueMode {
    return this.opts.followUpMode ?? agentDefaults.followUpMode;
  }

  /** Listeners are called synchronously, in subscription order, after the state is updated. */
  subscribe(listener: AgentListener): () => void {
    this.listeners = [...this.listeners, listener];
    return () => {
      this.listeners = this.listeners.filter((l) => l !== listener);
    };
  }

  // ---- setters -------------------------------------------------------------------------------
  // Changes apply from the next run (a running loop keeps the settings it started with).

  setSystemPrompt(prompt: string): void {
    this._state.systemPrompt = prompt;
  }
  setModel(model: Model): void {
    this._state.model = model;
  }
  setThinkingLevel(level: AgentThinkingLevel): void {
    this._state.thinkingLevel = level;
  }
  setTools(tools: AnyAgentTool[]): void {
    this._state.tools = tools;
  }
  setSteeringMode(mode: QueueMode): void {
    this.opts.steeringMode = mode;
  }
  setFollowUpMode(mode: QueueMode): void {
    this.opts.followUpMode = mode;
  }
  setStreamFn(fn: StreamFunction | undefined): void {
    this.opts.streamFn = fn;
  }
  setHooks(hooks: Partial<AgentHooks>): void {
    this.opts = { ...this.opts, ...hooks };
  }
  setStreamOptions(options: AgentStreamOptions): void {
    this.opts.streamOptions = options;
  }
  replaceMessages(messages: AgentMessage[]): void {
    this._state.messages = messages.slice();
  }
  appendMessage(message: AgentMessage): void {
    this._state.messages.push(message);
  }
  clearMessages(): void {
    this._state.messages = [];
  }

  /** Clears the conversation, the streaming flags, the error and both queues. */
  reset(): void {
    this._state.messages = [];
    this._state.isStreaming = false;
    this._state.streamMessage = null;
    this._state.pendingToolCalls = new Set();
    this._state.error = undefined;
    this.clearAllQueues();
  }

  // ---- queues --------------------------------------------------------------------------------

  /** Interjects while the agent runs: delivered before the next model call (remaining tools are skipped). */
  steer(message: AgentMessage | string): void {
    this.steeringQueue.push(toMessage(message));
  }

  /** Queued until the agent would otherwise stop. */
  followUp(message: AgentMessage | string): void {
    this.followUpQueue.push(toMessage(message));
  }

  clearSteeringQueue(): void {
    this.steeringQueue = [];
  }
  clearFollowUpQueue(): void {
    this.followUpQueue = [];
  }
  clearAllQueues(): void {
    this.clearSteeringQueue();
    this.clearFollowUpQueue();
  }
  hasQueuedMessages(): boolean {
    return this.steeringQueue.length > 0 || this.followUpQueue.length > 0;
  }

  // ---- runs ----------------------------------------------------------------------------------

  /** Runs the loop with a new prompt. Rejects while a run is in progress. */
  async prompt(input: string | AgentMessage | AgentMessage[], images?: ImageContent[]): Promise<void> {
    this.assertIdle();
    let prompts: AgentMessage[];
    if (typeof input === 'string') {
      const content: UserMessage['content'] = [{ type: 'text', text: input }, ...(images ?? [])];
      prompts = [{ role: 'user', content, timestamp: Date.now() }];
    } else prompts = Array.isArray(input) ? input : [input];
    await this.run(prompts);
  }

  /**
   * Continues the conversation. After an assistant reply it delivers queued steering (first) or
   * follow-up messages; otherwise it re-runs the model on the current history (e.g. after tool
   * results or a user message appended directly).
   */
  async continue(): Promise<void> {
    this.assertIdle();
    const last = this._state.messages[this._state.messages.length - 1];
    if (!last) throw new Error('Cannot continue: there are no messages. Use prompt() to start.');
    if (last.role === 'assistant') {
      const steering = this.dequeue('steering');
      if (steering.length > 0) return this.run(steering, { skipInitialSteeringPoll: true });
      const followUps = this.dequeue('followUp');
      if (followUps.length > 0) return this.run(followUps);
      throw new Error('Cannot continue from message role: assistant (nothing is queued). Use prompt() instead.');
    }
    return this.run(null);
  }

  /** Aborts the current run (tools get the signal; the model call ends as "aborted"). */
  abort(): void {
    this.abortController?.abort();
  }

  /** Resolves when the current run (if any) has finished. */
  waitForIdle(): Promise<void> {
    return this.running ?? Promise.resolve();
  }

  private assertIdle(): void {
    if (this._state.isStreaming) {
      throw new Error(
        'The agent is already running: use steer() or followUp() to queue a message, or wait for it to finish.',
      );
    }
  }

  private dequeue(which: 'steering' | 'followUp'): AgentMessage[] {
    const queue = which === 'steering' ? this.steeringQueue : this.followUpQueue;
    if (queue.length === 0) return [];
    const mode = which === 'steering' ? this.steeringMode : this.followUpMode;
    return mode === 'all' ? queue.splice(0) : queue.splice(0, 1);
  }

  private run(prompts: AgentMessage[] | null, runOptions?: AgentRunOptions): Promise<void> {
    const controller = new AbortController();
    this.abortController = controller;
    const state = this._state;
    state.isStreaming = true;
    state.streamMessage = null;
    state.error = undefined;
    const running = this.drive(prompts, runOptions, controller).finally(() => {
      state.isStreaming = false;
      state.streamMessage = null;
      state.pendingToolCalls.clear();
      if (this.abortController === controller) this.abortController = undefined;
      if (this.running === running) this.running = undefined;
    });
    this.running = running;
    return running;
  }

  private async drive(
    prompts: AgentMessage[] | null,
    runOptions: AgentRunOptions | undefined,
    controller: AbortController,
  ): Promise<void> {
    const state = this._state;
    const context: AgentContext = {
      systemPrompt: state.systemPrompt,
      messages: state.messages.slice(),
      tools: state.tools,
    };
    const config = this.loopConfig();
    const emit = (event: AgentEvent): void => this.handle(event);
    try {
      if (prompts) await runAgentLoop(prompts, context, config, emit, controller.signal, runOptions);
      else await runAgentLoopContinue(context, config, emit, controller.signal);
    } catch (err) {
      // The loop reports failures as messages; this is the last line of defence.
      if (state.isStreaming) {
        const message = errorAssistantMessage(
          state.model,
          thrownText(err),
          controller.signal.aborted ? 'aborted' : 'error',
        );
        message.content = [{ type: 'text', text: '' }];
        state.messages.push(message);
        state.error = message.errorMessage;
        // Only agent_end: the message never streamed, so no message_* events (kernel-spec 3.6).
        this.handle({ type: 'agent_end', messages: [message] });
      }
    }
  }

  private loopConfig(): AgentLoopConfig {
    const o = this.opts;
    const s = this._state;
    return {
      ...o.streamOptions,
      model: s.model,
      reasoning: s.thinkingLevel === 'off' ? undefined : s.thinkingLevel,
      convertToLlm: o.convertToLlm,
      transformContext: o.transformContext,
      getApiKey: o.getApiKey,
      apiKey: o.apiKey,
      streamFn: o.streamFn,
      beforeTurn: o.beforeTurn,
      shouldStop: o.shouldStop,
      beforeToolCall: o.beforeToolCall,
      afterToolCall: o.afterToolCall,
      getSteeringMessages: () => this.dequeue('steering'),
      getFollowUpMessages: () => this.dequeue('followUp'),
    };
  }

  /** Updates the state from one loop event, then tells the listeners. */
  private handle(event: AgentEvent): void {
    const s = this._state;
    switch (event.type) {
      case 'message_start':
      case 'message_update':
        if (event.message.role === 'assistant') s.streamMessage = event.message;
        break;
      case 'message_end':
        s.streamMessage = null;
        s.messages.push(event.message);
        if (event.message.role === 'assistant' && event.message.errorMessage) s.error = event.message.errorMessage;
        break;
      case 'tool_execution_start':
        s.pendingToolCalls.add(event.toolCallId);
        break;
      case 'tool_execution_end':
        s.pendingToolCalls.delete(event.toolCallId);
        break;
      case 'turn_end':
        if (event.message.errorMessage) s.error = event.message.errorMessage;
        break;
      case 'agent_end':
        s.isStreaming = false;
        s.streamMessage = null;
        break;
      default:
        break;
    }
    for (const listener of this.listeners) {
      try {
        listener(event);
      } catch (err) {
        (this.opts.onListenerError ?? defaultListenerError)(err, event);
      }
    }
  }
}

function defaultListenerError(error: unknown, event: AgentEvent): void {
  console.error(`Agent listener threw on ${event.type}:`, error);
}

function toMessage(message: AgentMessage | string): AgentMessage {
  return typeof message === 'string'
    ? { role: 'user', content: [{ type: 'text', text: message }], timestamp: Date.now() }
    : message;
}
