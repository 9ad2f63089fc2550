// Turns Chat Completions chunks into our streaming protocol, building the live `partial` in place.
// Servers differ from api.openai.com in ways that break naive readers, each handled here:
//   - parallel tool calls all streamed with index 0 (some vLLM/Ollama builds): a new id at a used
//     index starts a new call, deltas without an id go to the latest call of that index;
//   - finish_reason sent twice (or once per choice chunk and again with usage): calls end once;
//   - no usage chunk although include_usage was asked: the caller estimates and marks it;
//   - tool calls written as JSON text (compat.textToolCalls): held back and turned into calls;
//   - reasoning in `reasoning_content` / `reasoning` (DeepSeek, vLLM, Ollama): thinking blocks.
import type OpenAI from 'openai';
import type { AssistantMessageEventStream } from './event-stream.js';
import { StreamedToolArguments } from './partial-json.js';
import { ReplyReader } from './reply-reader.js';
import { mayBeTextToolCall, parseTextToolCalls, type TextToolCall } from './text-tool-calls.js';
import type { AssistantMessage, Model, StopReason, ToolCall } from './types.js';
import { computeCost } from './usage.js';

type Chunk = OpenAI.Chat.Completions.ChatCompletionChunk;

/** Maps a finish_reason; unknown values yield an error text instead. */
export function mapFinishReason(reason: string | null | undefined): { stopReason: StopReason; error?: string } {
  switch (reason) {
    case 'stop':
    case 'end_turn':
    case 'eos':
    case null:
    case undefined:
      return { stopReason: 'stop' };
    case 'length':
      return { stopReason: 'length' };
    case 'tool_calls':
    case 'function_call':
      return { stopReason: 'toolUse' };
    case 'content_filter':
      return {
        stopReason: 'error',
        error: 'The reply was withheld by a content filter (finish_reason "content_filter").',
      };
    default:
      return { stopReason: 'error', error: `Unhandled finish reason: ${reason}` };
  }
}

/** Token usage of a chunk's `usage` (cached prompt tokens count as cache reads, not input). */
export function applyChatUsage(model: Model, out: AssistantMessage, u: OpenAI.CompletionUsage): void {
  const cached = u.prompt_tokens_details?.cached_tokens ?? 0;
  out.usage.input = Math.max(0, (u.prompt_tokens ?? 0) - cached);
  out.usage.cacheRead = cached;
  out.usage.cacheWrite = 0;
  out.usage.output = u.completion_tokens ?? 0;
  delete out.usage.estimated;
  computeCost(model, out.usage);
}

interface CallSlot {
  contentIndex: number;
  id: string;
  index: number;
  args: StreamedToolArguments;
  ended: boolean;
}

type DeltaWithReasoning = Chunk['choices'][number]['delta'] & {
  reasoning_content?: string | null;
  reasoning?: string | null;
};

export class ChatStreamReader extends ReplyReader {
  /** A finish_reason arrived (the reply is complete even if the usage chunk never comes). */
  finished = false;
  sawUsage = false;

  private readonly slots: CallSlot[] = [];
  /** The latest call slot of each streamed index. */
  private readonly byIndex = new Map<number, CallSlot>();
  private textIndex: number | undefined;
  private thinkingIndex: number | undefined;
  /** Text held back while it may be a tool call written as text (compat.textToolCalls). */
  private held: string | undefined;
  private generatedIds = 0;

  constructor(
    model: Model,
    output: AssistantMessage,
    stream: AssistantMessageEventStream,
    emitStart: () => void,
    private readonly toolNames: readonly string[],
  ) {
    super(model, output, stream, emitStart);
    if (model.compat?.textToolCalls && toolNames.length > 0) this.held = '';
  }

  handle(chunk: Chunk): void {
    if (this.firstEvent()) this.emitStart();
    if (chunk.usage) {
      this.sawUsage = true;
      applyChatUsage(this.model, this.output, chunk.usage);
    }
    const choice = chunk.choices?.[0];
    if (!choice) return;
    const delta = (choice.delta ?? {}) as DeltaWithReasoning;
    const reasoning = delta.reasoning_content ?? delta.reasoning;
    if (typeof reasoning === 'string' && reasoning !== '' && !this.finished) this.thinking(reasoning);
    if (typeof delta.content === 'string' && delta.content !== '' && !this.finished) this.text(delta.content);
    if (delta.tool_calls && !this.finished) for (const tc of delta.tool_calls) this.toolCallDelta(tc);
    if (choice.finish_reason) this.finish(choice.finish_reason);
  }

  private thinking(delta: string): void {
    const out = this.output;
    if (this.thinkingIndex === undefined) {
      this.closeText();
      out.content.push({ type: 'thinking', thinking: '' });
      this.thinkingIndex = out.content.length - 1;
      this.contentStarted = true;
      this.stream.push({ type: 'thinking_start', contentIndex: this.thinkingIndex, partial: out });
    }
    const block = out.content[this.thinkingIndex]!;
    if (block.type === 'thinking') block.thinking += delta;
    this.stream.push({ type: 'thinking_delta', contentIndex: this.thinkingIndex, delta, partial: out });
  }

  private text(delta: string): void {
    this.contentStarted = true;
    if (this.held !== undefined) {
      this.held += delta;
      if (mayBeTextToolCall(this.held)) return;
      // Not a call after all: show what was held, stream the rest.
      const shown = this.held;
      this.held = undefined;
      this.emitText(shown);
      return;
    }
    this.emitText(delta);
  }

  private emitText(delta: string): void {
    const out = this.output;
    this.closeThinking();
    if (this.textIndex === undefined) {
      out.content.push({ type: 'text', text: '' });
      this.textIndex = out.content.length - 1;
      this.stream.push({ type: 'text_start', contentIndex: this.textIndex, partial: out });
    }
    const block = out.content[this.textIndex]!;
    if (block.type === 'text') block.text += delta;
    this.stream.push({ type: 'text_delta', contentIndex: this.textIndex, delta, partial: out });
  }

  private closeText(): void {
    if (this.textIndex === undefined) return;
    const block = this.output.content[this.textIndex]!;
    if (block.type === 'text')
      this.stream.push({ type: 'text_end', contentIndex: this.textIndex, content: block.text, partial: this.output });
    this.textIndex = undefined;
  }

  private closeThinking(): void {
    if (this.thinkingIndex === undefined) return;
    const block = this.output.content[this.thinkingIndex]!;
    if (block.type === 'thinking')
      this.stream.push({
        type: 'thinking_end',
        contentIndex: this.thinkingIndex,
        content: block.thinking,
        partial: this.output,
      });
    this.thinkingIndex = undefined;
  }

  /** Which call a delta belongs to: by index, unless it brings a new id for a used index. */
  private slotFor(tc: OpenAI.Chat.Completions.ChatCompletionChunk.Choice.Delta.ToolCall): CallSlot | undefined {
    const index = typeof tc.index === 'number' ? tc.index : this.slots.length;
    if (tc.id) {
      const same = this.slots.find((s) => s.id === tc.id);
      if (same) return same;
      const atIndex = this.byIndex.get(index);
      // A call at this index without an id yet takes the id; one with another id stays whole.
      if (atIndex && atIndex.id === '') {
        atIndex.id = tc.id;
        return atIndex;
      }
      return undefined;
    }
    return this.byIndex.get(index);
  }

  private toolCallDelta(tc: OpenAI.Chat.Completions.ChatCompletionChunk.Choice.Delta.ToolCall): void {
    const out = this.output;
    let slot = this.slotFor(tc);
    if (!slot) {
      this.closeText();
      this.closeThinking();
      const index = typeof tc.index === 'number' ? tc.index : this.slots.length;
      const call: ToolCall = { type: 'toolCall', id: tc.id ?? '', name: tc.function?.name ?? '', arguments: {} };
      out.content.push(call);
      slot = {
        contentIndex: out.content.length - 1,
        id: tc.id ?? '',
        index,
        args: new StreamedToolArguments(),
        ended: false,
      };
      this.slots.push(slot);
      this.byIndex.set(index, slot);
      this.contentStarted = true;
      this.stream.push({ type: 'toolcall_start', contentIndex: slot.contentIndex, partial: out });
    }
    const call = out.content[slot.contentIndex] as ToolCall;
    if (tc.function?.name && call.name === '') call.name = tc.function.name;
    if (tc.id && call.id === '') call.id = tc.id;
    const piece = tc.function?.arguments;
    if (typeof piece === 'string' && piece !== '') {
      call.arguments = slot.args.push(piece);
      this.stream.push({ type: 'toolcall_delta', contentIndex: slot.contentIndex, delta: piece, partial: out });
    }
  }

  /** The first finish_reason ends the reply; later ones (a duplicated finish) change nothing. */
  private finish(reason: string): void {
    if (this.finished) return;
    this.finished = true;
    const mapped = mapFinishReason(reason);
    this.output.stopReason = mapped.stopReason;
    this.stopError = mapped.error;
    this.end();
  }

  /** Closes every open block once (also when the stream ended without a finish_reason). */
  end(): void {
    const out = this.output;
    let textCalls: TextToolCall[] = [];
    if (this.held !== undefined) {
      // The whole reply was held: it started like JSON. Calls, or text after all.
      const held = this.held;
      this.held = undefined;
      const parsed = held.trim() === '' ? undefined : parseTextToolCalls(held, this.toolNames);
      if (parsed) {
        if (parsed.rest !== '') this.emitText(parsed.rest);
        textCalls = parsed.calls;
      } else if (held !== '') this.emitText(held);
    } else if (this.model.compat?.textToolCalls && this.textIndex !== undefined) {
      // Prose with <tool_call> tags in it: the tags become calls, the prose stays.
      const block = out.content[this.textIndex]!;
      if (block.type === 'text' && block.text.includes('<tool_call>')) {
        const parsed = parseTextToolCalls(block.text, this.toolNames);
        if (parsed) {
          block.text = parsed.rest;
          textCalls = parsed.calls;
        }
      }
    }
    this.closeThinking();
    this.closeText();
    for (const c of textCalls) {
      const call: ToolCall = { type: 'toolCall', id: this.newId(), name: c.name, arguments: c.arguments };
      out.content.push(call);
      const contentIndex = out.content.length - 1;
      this.stream.push({ type: 'toolcall_start', contentIndex, partial: out });
      this.stream.push({ type: 'toolcall_end', contentIndex, toolCall: call, partial: out });
    }
    if (textCalls.length > 0 && out.stopReason === 'stop') out.stopReason = 'toolUse';
    for (const slot of this.slots) {
      if (slot.ended) continue;
      slot.ended = true;
      const call = out.content[slot.contentIndex] as ToolCall;
      if (slot.args.json) call.arguments = slot.args.final();
      if (call.id === '') call.id = this.newId();
      this.stream.push({ type: 'toolcall_end', contentIndex: slot.contentIndex, toolCall: call, partial: out });
    }
    // Servers that answer "stop" with tool calls in the reply still asked for the tools to run.
    if (this.slots.length > 0 && out.stopReason === 'stop') out.stopReason = 'toolUse';
  }

  private newId(): string {
    this.generatedIds++;
    return `call_${this.output.timestamp.toString(36)}_${this.generatedIds}`;
  }
}
