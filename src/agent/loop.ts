// The agent loop: call the model, run the tool calls of its reply, repeat until a reply has no
// tool calls and nothing is queued (kernel-spec 3.3/3.4 with Our decisions 2-4).
//
// Cost per turn is constant, however long the history grows:
// - The loop works on ONE copy of the context, made at the start of the run; afterwards messages
//   are only appended (or the assistant partial replaced in place), never copied.
// - With the default convertToLlm and no transformContext, converted LLM messages are cached and
//   only the appended tail is converted on each model call (convertMessageToLlm is per-message
//   and pure). The provider receives the cache array itself: it is read during the call and
//   grows after the call returns, so a provider that keeps a context past the call (a recording
//   test provider) must copy `context.messages`. A custom convertToLlm or a transformContext may
//   look at the whole history, so those run on every call (their cost is theirs).
// - Tool JSON Schemas are generated once per schema and the tool list once per tool array
//   (tool-schema.ts); the stream options are built once per run.
// - No deep clones, no JSON serialisation of the history, no per-turn scans of it.
import { EventStream, errorAssistantMessage, type AssistantMessageEventStream } from '../ai/event-stream.js';
import { stream as registryStream } from '../ai/registry.js';
import type {
  AssistantMessage,
  Context,
  Message,
  Model,
  StreamOptions,
  ToolCall,
  ToolResultMessage,
} from '../ai/types.js';
import { convertMessageToLlm, convertToLlm as defaultConvertToLlm } from './convert-to-llm.js';
import { thrownText } from './tool-error-text.js';
import { executeToolCalls } from './tool-pipeline.js';
import { toLlmTools } from './tool-schema.js';
import type { AgentContext, AgentEvent, AgentLoopConfig, AgentMessage } from './types.js';

export type AgentEventSink = (event: AgentEvent) => void;

/** Options of a run that callers above the loop (the Agent) need; not part of the loop config. */
export interface AgentRunOptions {
  /** Skip the steering poll before the first model call (the prompts already are steering messages). */
  skipInitialSteeringPoll?: boolean;
}

/** Creates the stream agentLoop returns: it ends with agent_end, whose messages are its result. */
export function createAgentEventStream(): EventStream<AgentEvent, AgentMessage[]> {
  return new EventStream<AgentEvent, AgentMessage[]>(
    (e) => e.type === 'agent_end',
    (e) => (e.type === 'agent_end' ? e.messages : []),
    () => [],
  );
}

/** Starts a run with new prompt messages; events arrive on the returned stream. */
export function agentLoop(
  prompts: AgentMessage[],
  context: AgentContext,
  config: AgentLoopConfig,
  signal?: AbortSignal,
): EventStream<AgentEvent, AgentMessage[]> {
  const events = createAgentEventStream();
  void runAgentLoop(prompts, context, config, (e) => events.push(e), signal).then(
    (messages) => events.end(messages),
    () => events.end(),
  );
  return events;
}

/**
 * Continues from the current context (its last message must not be an assistant reply, e.g. a
 * user message or tool results). Throws synchronously when there is nothing to continue from.
 */
export function agentLoopContinue(
  context: AgentContext,
  config: AgentLoopConfig,
  signal?: AbortSignal,
): EventStream<AgentEvent, AgentMessage[]> {
  assertCanContinue(context);
  const events = createAgentEventStream();
  void runAgentLoopContinue(context, config, (e) => events.push(e), signal).then(
    (messages) => events.end(messages),
    () => events.end(),
  );
  return events;
}

/** Awaitable variant of agentLoop: events go to `emit`; resolves with the new messages. */
export function runAgentLoop(
  prompts: AgentMessage[],
  context: AgentContext,
  config: AgentLoopConfig,
  emit: AgentEventSink,
  signal?: AbortSignal,
  options?: AgentRunOptions,
): Promise<AgentMessage[]> {
  return new LoopRun(context, config, emit, signal).run(prompts, options?.skipInitialSteeringPoll === true);
}

/** Awaitable variant of agentLoopContinue. */
export async function runAgentLoopContinue(
  context: AgentContext,
  config: AgentLoopConfig,
  emit: AgentEventSink,
  signal?: AbortSignal,
): Promise<AgentMessage[]> {
  assertCanContinue(context);
  return new LoopRun(context, config, emit, signal).run(null, false);
}

function assertCanContinue(context: AgentContext): void {
  const last = context.messages[context.messages.length - 1];
  if (!last) throw new Error('Cannot continue: the context has no messages. Start the run with a prompt instead.');
  if (last.role === 'assistant') throw new Error('Cannot continue from message role: assistant');
}

const NO_RESULTS: ToolResultMessage[] = [];
const NO_MESSAGES: AgentMessage[] = [];

class LoopRun {
  private readonly ctx: AgentContext;
  private readonly signal: AbortSignal;
  private readonly streamOptions: StreamOptions;
  private readonly incrementalConvert: boolean;
  private model: Model;
  private readonly newMessages: AgentMessage[] = [];
  private ended = false;
  // Incremental LLM conversion cache (see the header comment).
  private cacheSource: AgentMessage[] | null = null;
  private cacheCount = 0;
  private cacheLast: AgentMessage | undefined;
  private cacheConverted: Message[] = [];

  constructor(
    context: AgentContext,
    private readonly config: AgentLoopConfig,
    private readonly emitEvent: AgentEventSink,
    signal: AbortSignal | undefined,
  ) {
    this.ctx = { systemPrompt: context.systemPrompt, messages: context.messages.slice(), tools: context.tools };
    this.signal = signal ?? new AbortController().signal;
    this.model = config.model;
    this.incrementalConvert =
      !config.transformContext && (!config.convertToLlm || config.convertToLlm === defaultConvertToLlm);
    // Only provider options go to the provider; loop hooks stay here.
    const {
      model: _model,
      convertToLlm: _convert,
      transformContext: _transform,
      getApiKey: _getApiKey,
      apiKey: _apiKey,
      getSteeringMessages: _steer,
      getFollowUpMessages: _followUp,
      beforeTurn: _beforeTurn,
      shouldStop: _shouldStop,
      beforeToolCall: _before,
      afterToolCall: _after,
      streamFn: _streamFn,
      ...streamOptions
    } = config;
    this.streamOptions = streamOptions;
  }

  private emit(event: AgentEvent): void {
    if (event.type === 'agent_end') this.ended = true;
    this.emitEvent(event);
  }

  async run(prompts: AgentMessage[] | null, skipInitialSteeringPoll: boolean): Promise<AgentMessage[]> {
    try {
      if (prompts) this.append(prompts);
      this.emit({ type: 'agent_start' });
      this.emit({ type: 'turn_start' });
      if (prompts) for (const p of prompts) this.emitMessage(p);
      await this.loop(skipInitialSteeringPoll);
    } catch (err) {
      // Only a hook that must not throw (steering/follow-up polls, shouldStop) or an event sink
      // gets here; model-call failures are already assistant messages. Report it as one.
      if (!this.ended) {
        const message = errorAssistantMessage(this.model, thrownText(err), this.signal.aborted ? 'aborted' : 'error');
        this.append([message]);
        this.emitMessage(message);
        this.emit({ type: 'agent_end', messages: this.newMessages });
      }
    }
    return this.newMessages;
  }

  private async loop(skipInitialSteeringPoll: boolean): Promise<void> {
    const config = this.config;
    let firstTurn = true;
    let pending =
      skipInitialSteeringPoll || !config.getSteeringMessages ? NO_MESSAGES : await poll(config.getSteeringMessages);
    for (;;) {
      let hasMoreToolCalls = true;
      while (hasMoreToolCalls || pending.length > 0) {
        if (firstTurn) firstTurn = false;
        else this.emit({ type: 'turn_start' });
        if (pending.length > 0) {
          this.append(pending);
          for (const m of pending) this.emitMessage(m);
          pending = NO_MESSAGES;
        }

        const assistant = await this.streamAssistantResponse();
        this.newMessages.push(assistant);
        if (assistant.stopReason === 'error' || assistant.stopReason === 'aborted') {
          // Hard stop: no tools, no follow-ups.
          this.emit({ type: 'turn_end', message: assistant, toolResults: NO_RESULTS });
          this.emit({ type: 'agent_end', messages: this.newMessages });
          return;
        }

        const toolCalls = toolCallsOf(assistant);
        hasMoreToolCalls = toolCalls.length > 0;
        let results = NO_RESULTS;
        let steering = NO_MESSAGES;
        let terminate = false;
        if (hasMoreToolCalls) {
          // Tool calls decide, not the stop reason: a `length` reply with tool calls runs them.
          const batch = await executeToolCalls(assistant, toolCalls, this.ctx, config, this.signal, (e) =>
            this.emit(e),
          );
          results = batch.results;
          this.append(results);
          steering = batch.steering;
          // A user interjection outranks a stop request: the model should see it.
          terminate = batch.terminate && steering.length === 0;
        }
        this.emit({ type: 'turn_end', message: assistant, toolResults: results });

        const stop =
          terminate ||
          this.signal.aborted ||
          (config.shouldStop !== undefined &&
            (await config.shouldStop({ message: assistant, toolResults: results, newMessages: this.newMessages })));
        if (stop) {
          // Steering already taken from the queue must not be lost: keep it in the history.
          if (steering.length > 0) {
            this.append(steering);
            for (const m of steering) this.emitMessage(m);
          }
          this.emit({ type: 'agent_end', messages: this.newMessages });
          return;
        }
        // No await without a hook: each one costs a trip through the microtask queue per turn.
        pending =
          steering.length > 0
            ? steering
            : config.getSteeringMessages
              ? await poll(config.getSteeringMessages)
              : NO_MESSAGES;
      }
      const followUps = config.getFollowUpMessages ? await poll(config.getFollowUpMessages) : NO_MESSAGES;
      if (followUps.length === 0) break;
      pending = followUps;
    }
    this.emit({ type: 'agent_end', messages: this.newMessages });
  }

  /** One model call (3.4). Never throws: any failure becomes an error assistant message. */
  private async streamAssistantResponse(): Promise<AssistantMessage> {
    const config = this.config;
    let stage = 'beforeTurn hook';
    let events: AssistantMessageEventStream;
    try {
      if (config.beforeTurn) {
        const change = await config.beforeTurn(this.ctx, this.model, this.signal);
        if (change) {
          if (change.model) this.model = change.model;
          if (change.systemPrompt !== undefined) this.ctx.systemPrompt = change.systemPrompt;
          if (change.messages) this.ctx.messages = change.messages.slice();
        }
      }
      stage = config.transformContext ? 'transformContext' : 'convertToLlm';
      const messages = this.incrementalConvert ? this.cachedLlmMessages() : await this.convertedLlmMessages();
      stage = 'getApiKey';
      const apiKey = config.getApiKey
        ? ((await config.getApiKey(this.model.provider)) ?? config.apiKey)
        : config.apiKey;
      stage = 'tool schema generation';
      const tools = this.ctx.tools.length > 0 ? toLlmTools(this.ctx.tools) : undefined;
      stage = 'provider stream';
      const llmContext: Context = { systemPrompt: this.ctx.systemPrompt, messages, tools };
      const streamFn = config.streamFn ?? registryStream;
      // StreamFunction is synchronous by contract; tolerate a promise from custom functions.
      const streamed = streamFn(this.model, llmContext, { ...this.streamOptions, apiKey, signal: this.signal });
      events = isPromiseLike(streamed) ? await streamed : streamed;
    } catch (err) {
      return this.failedCall(`${stage} failed: ${thrownText(err)}`);
    }
    return this.consume(events);
  }

  private async consume(events: AssistantMessageEventStream): Promise<AssistantMessage> {
    const messages = this.ctx.messages;
    let started = false;
    try {
      for await (const event of events) {
        if (event.type === 'start') {
          started = true;
          messages.push(event.partial);
          this.emit({ type: 'message_start', message: snapshot(event.partial) });
        } else if (event.type === 'done' || event.type === 'error') {
          break;
        } else if (started) {
          // Block events before `start` are ignored. Listeners get a snapshot (blocks copied, their
          // strings are immutable), so a producer running ahead cannot change what they saw.
          messages[messages.length - 1] = event.partial;
          this.emit({ type: 'message_update', message: snapshot(event.partial), assistantMessageEvent: event });
        }
      }
    } catch (err) {
      const failed = errorAssistantMessage(
        this.model,
        `provider stream failed: ${thrownText(err)}`,
        this.signal.aborted ? 'aborted' : 'error',
      );
      if (started) messages.pop();
      messages.push(failed);
      if (!started) this.emit({ type: 'message_start', message: { ...failed } });
      this.emit({ type: 'message_end', message: failed });
      return failed;
    }
    const final = await events.result();
    if (started) messages[messages.length - 1] = final;
    else {
      messages.push(final);
      this.emit({ type: 'message_start', message: { ...final } });
    }
    this.emit({ type: 'message_end', message: final });
    return final;
  }

  private failedCall(text: string): AssistantMessage {
    const message = errorAssistantMessage(this.model, text, this.signal.aborted ? 'aborted' : 'error');
    this.ctx.messages.push(message);
    this.emitMessage(message);
    return message;
  }

  /** The LLM messages for this call when a custom conversion or transform may look at everything. */
  private async convertedLlmMessages(): Promise<Message[]> {
    const config = this.config;
    const source = config.transformContext
      ? await config.transformContext(this.ctx.messages, this.signal)
      : this.ctx.messages;
    const converted = await (config.convertToLlm ?? defaultConvertToLlm)(source);
    return onlyLlmRoles(converted);
  }

  /** The LLM messages for this call with the default conversion: only the new tail is converted. */
  private cachedLlmMessages(): Message[] {
    const source = this.ctx.messages;
    // The cache is valid while the same array only grew: same array, not shorter, and the last
    // converted message still in place (catches in-place edits that shift the history).
    if (
      this.cacheSource !== source ||
      this.cacheCount > source.length ||
      (this.cacheCount > 0 && source[this.cacheCount - 1] !== this.cacheLast)
    ) {
      this.cacheSource = source;
      this.cacheCount = 0;
      this.cacheConverted = [];
    }
    const out = this.cacheConverted;
    for (let i = this.cacheCount; i < source.length; i++) {
      const converted = convertMessageToLlm(source[i]!);
      if (converted) out.push(converted);
    }
    this.cacheCount = source.length;
    this.cacheLast = source[source.length - 1];
    return out;
  }

  private append(messages: readonly AgentMessage[]): void {
    for (const m of messages) {
      this.ctx.messages.push(m);
      this.newMessages.push(m);
    }
  }

  private emitMessage(message: AgentMessage): void {
    this.emit({ type: 'message_start', message });
    this.emit({ type: 'message_end', message });
  }
}

async function poll(source: (() => AgentMessage[] | Promise<AgentMessage[]>) | undefined): Promise<AgentMessage[]> {
  if (!source) return NO_MESSAGES;
  return (await source()) ?? NO_MESSAGES;
}

function isPromiseLike<T>(value: T | PromiseLike<T>): value is PromiseLike<T> {
  return typeof (value as PromiseLike<T> | null)?.then === 'function';
}

function toolCallsOf(message: AssistantMessage): ToolCall[] {
  const calls: ToolCall[] = [];
  for (const block of message.content) if (block.type === 'toolCall') calls.push(block);
  return calls;
}

/** A custom convertToLlm may let an internal role through; the model must never see one. */
function onlyLlmRoles(messages: Message[]): Message[] {
  for (const m of messages) {
    if (m.role !== 'user' && m.role !== 'assistant' && m.role !== 'toolResult') {
      return messages.filter((x) => x.role === 'user' || x.role === 'assistant' || x.role === 'toolResult');
    }
  }
  return messages;
}

/** A point-in-time copy of a streaming message: O(blocks), no deep clone of arguments. */
function snapshot(partial: AssistantMessage): AssistantMessage {
  return { ...partial, content: partial.content.map((b) => ({ ...b })) };
}
