// A small scripted model for the agent tests: each model call takes the next scripted reply and
// streams it through the real protocol (start, block start/delta/end, done|error) on an
// AssistantMessageEventStream. It records what each call received (copied, because the loop
// hands the provider a growing array).
import { AssistantMessageEventStream, emptyAssistantMessage } from '../../src/ai/event-stream.js';
import type {
  AssistantMessage,
  Context,
  Model,
  StopReason,
  StreamFunction,
  StreamOptions,
  ToolCall,
} from '../../src/ai/types.js';

export const testModel: Model = {
  id: 'fake-1',
  name: 'Fake 1',
  api: 'fake',
  provider: 'fake',
  reasoning: true,
  input: ['text'],
  cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 },
  contextWindow: 100_000,
  maxTokens: 4096,
};

export interface ScriptedReply {
  text?: string;
  toolCalls?: { name: string; args?: unknown; id?: string }[];
  stopReason?: StopReason;
  errorMessage?: string;
  /** The reply is not delivered before this promise resolves (lets a test act mid-stream). */
  gate?: Promise<void>;
}

export type ScriptStep = ScriptedReply | ((context: Context, callIndex: number) => ScriptedReply);

export interface RecordedCall {
  model: Model;
  systemPrompt?: string;
  messages: Context['messages'];
  toolNames: string[];
  options?: StreamOptions;
}

export interface FakeModel {
  streamFn: StreamFunction;
  calls: RecordedCall[];
}

let idCounter = 0;

/** Builds a stream function replaying `script`; calls beyond the script reply "done". */
export function fakeModel(script: ScriptStep[]): FakeModel {
  const calls: RecordedCall[] = [];
  const streamFn: StreamFunction = (model, context, options) => {
    const index = calls.length;
    calls.push({
      model,
      systemPrompt: context.systemPrompt,
      messages: context.messages.slice(),
      toolNames: (context.tools ?? []).map((t) => t.name),
      options,
    });
    const step = script[index] ?? { text: 'done' };
    const reply = typeof step === 'function' ? step(context, index) : step;
    const out = new AssistantMessageEventStream(model);
    void play(out, model, reply, options?.signal);
    return out;
  };
  return { streamFn, calls };
}

async function play(
  out: AssistantMessageEventStream,
  model: Model,
  reply: ScriptedReply,
  signal?: AbortSignal,
): Promise<void> {
  await Promise.resolve();
  if (reply.gate) await reply.gate;
  const partial: AssistantMessage = emptyAssistantMessage(model);
  const snap = (): AssistantMessage => ({ ...partial, content: partial.content.slice() });
  out.push({ type: 'start', partial: snap() });
  if (signal?.aborted) {
    out.push({
      type: 'error',
      reason: 'aborted',
      error: { ...snap(), stopReason: 'aborted', errorMessage: 'Request was aborted' },
    });
    return;
  }
  if (reply.text !== undefined) {
    const index = partial.content.length;
    partial.content.push({ type: 'text', text: '' });
    out.push({ type: 'text_start', contentIndex: index, partial: snap() });
    partial.content[index] = { type: 'text', text: reply.text };
    out.push({ type: 'text_delta', contentIndex: index, delta: reply.text, partial: snap() });
    out.push({ type: 'text_end', contentIndex: index, content: reply.text, partial: snap() });
  }
  for (const call of reply.toolCalls ?? []) {
    const index = partial.content.length;
    const toolCall: ToolCall = {
      type: 'toolCall',
      id: call.id ?? `call_${++idCounter}`,
      name: call.name,
      // Tests send malformed arguments on purpose (strings, arrays): the loop must cope.
      arguments: (call.args ?? {}) as Record<string, unknown>,
    };
    partial.content.push(toolCall);
    out.push({ type: 'toolcall_start', contentIndex: index, partial: snap() });
    out.push({ type: 'toolcall_end', contentIndex: index, toolCall, partial: snap() });
  }
  const stopReason: StopReason = reply.stopReason ?? (reply.toolCalls?.length ? 'toolUse' : 'stop');
  const final: AssistantMessage = { ...partial, content: partial.content.slice(), stopReason };
  if (stopReason === 'error' || stopReason === 'aborted') {
    final.errorMessage = reply.errorMessage ?? 'scripted failure';
    out.push({ type: 'error', reason: stopReason, error: final });
  } else out.push({ type: 'done', reason: stopReason, message: final });
}

/** A promise with its resolve function exposed, for ordering tests. */
export function deferred<T = void>(): { promise: Promise<T>; resolve: (value: T) => void } {
  let resolve!: (value: T) => void;
  const promise = new Promise<T>((r) => (resolve = r));
  return { promise, resolve };
}

export function userMessage(text: string): { role: 'user'; content: string; timestamp: number } {
  return { role: 'user', content: text, timestamp: Date.now() };
}
