// Turns raw Messages API stream events into our streaming protocol (kernel-spec 2.5/2.6),
// building the live `partial` message in place.
import type Anthropic from '@anthropic-ai/sdk';
import { pushContentEnd } from './event-stream.js';
import { StreamedToolArguments } from './partial-json.js';
import { ReplyReader } from './reply-reader.js';
import type { AssistantMessage, StopReason } from './types.js';
import { computeCost } from './usage.js';

export const REDACTED_THINKING_TEXT = '[Reasoning redacted]';

/** Maps the API stop reason; unknown values yield an error text instead. */
export function mapStopReason(reason: string | null | undefined): { stopReason: StopReason; error?: string } {
  switch (reason) {
    case 'end_turn':
    case 'pause_turn':
    case 'stop_sequence':
    case null:
    case undefined:
      return { stopReason: 'stop' };
    case 'max_tokens':
      return { stopReason: 'length' };
    case 'tool_use':
      return { stopReason: 'toolUse' };
    case 'refusal':
      return { stopReason: 'error', error: 'The model declined to answer (stop_reason "refusal").' };
    case 'sensitive':
      return { stopReason: 'error', error: 'The reply was withheld by a content filter (stop_reason "sensitive").' };
    case 'model_context_window_exceeded':
      return {
        stopReason: 'error',
        error: 'model_context_window_exceeded: the conversation no longer fits the context window.',
      };
    default:
      return { stopReason: 'error', error: `Unhandled stop reason: ${reason}` };
  }
}

interface OpenBlock {
  contentIndex: number;
  /** Raw JSON of a tool call's arguments, as streamed so far. */
  json?: StreamedToolArguments;
}

/** Reads one attempt's events. `started` tells whether the caller already emitted `start`. */
export class AnthropicStreamReader extends ReplyReader {
  private readonly open = new Map<number, OpenBlock>();
  sawMessageStop = false;

  handle(ev: Anthropic.RawMessageStreamEvent): void {
    this.firstEvent();
    const out = this.output;
    switch (ev.type) {
      case 'message_start': {
        const u = ev.message.usage;
        out.usage.input = u.input_tokens ?? 0;
        out.usage.output = u.output_tokens ?? 0;
        out.usage.cacheRead = u.cache_read_input_tokens ?? 0;
        out.usage.cacheWrite = u.cache_creation_input_tokens ?? 0;
        computeCost(this.model, out.usage);
        this.emitStart();
        return;
      }
      case 'content_block_start': {
        const b = ev.content_block;
        let block: AssistantMessage['content'][number];
        if (b.type === 'text') block = { type: 'text', text: b.text ?? '' };
        else if (b.type === 'thinking')
          block = { type: 'thinking', thinking: b.thinking ?? '', thinkingSignature: b.signature || undefined };
        else if (b.type === 'redacted_thinking')
          block = { type: 'thinking', thinking: REDACTED_THINKING_TEXT, thinkingSignature: b.data, redacted: true };
        else if (b.type === 'tool_use') {
          const input = b.input !== null && typeof b.input === 'object' ? (b.input as Record<string, unknown>) : {};
          block = { type: 'toolCall', id: b.id, name: b.name, arguments: input };
        } else return; // server-side tool blocks are not part of our protocol
        this.contentStarted = true;
        out.content.push(block);
        const contentIndex = out.content.length - 1;
        this.open.set(ev.index, {
          contentIndex,
          json: block.type === 'toolCall' ? new StreamedToolArguments() : undefined,
        });
        const kind =
          block.type === 'text' ? 'text_start' : block.type === 'thinking' ? 'thinking_start' : 'toolcall_start';
        this.stream.push({ type: kind, contentIndex, partial: out });
        return;
      }
      case 'content_block_delta': {
        const ob = this.open.get(ev.index);
        if (!ob) return;
        const block = out.content[ob.contentIndex]!;
        const d = ev.delta;
        if (d.type === 'text_delta' && block.type === 'text') {
          block.text += d.text;
          this.stream.push({ type: 'text_delta', contentIndex: ob.contentIndex, delta: d.text, partial: out });
        } else if (d.type === 'thinking_delta' && block.type === 'thinking') {
          block.thinking += d.thinking;
          this.stream.push({ type: 'thinking_delta', contentIndex: ob.contentIndex, delta: d.thinking, partial: out });
        } else if (d.type === 'signature_delta' && block.type === 'thinking') {
          block.thinkingSignature = (block.thinkingSignature ?? '') + d.signature;
        } else if (d.type === 'input_json_delta' && block.type === 'toolCall') {
          ob.json ??= new StreamedToolArguments();
          block.arguments = ob.json.push(d.partial_json);
          this.stream.push({
            type: 'toolcall_delta',
            contentIndex: ob.contentIndex,
            delta: d.partial_json,
            partial: out,
          });
        }
        return;
      }
      case 'content_block_stop': {
        const ob = this.open.get(ev.index);
        if (!ob) return;
        this.open.delete(ev.index);
        const block = out.content[ob.contentIndex]!;
        if (block.type === 'toolCall' && ob.json?.json) block.arguments = ob.json.final();
        pushContentEnd(this.stream, out, ob.contentIndex);
        return;
      }
      case 'message_delta': {
        const mapped = mapStopReason(ev.delta.stop_reason);
        out.stopReason = mapped.stopReason;
        this.stopError = mapped.error;
        // Proxies may omit fields: only overwrite what the event actually carries.
        const u = ev.usage;
        if (u) {
          if (u.input_tokens != null) out.usage.input = u.input_tokens;
          if (u.output_tokens != null) out.usage.output = u.output_tokens;
          if (u.cache_read_input_tokens != null) out.usage.cacheRead = u.cache_read_input_tokens;
          if (u.cache_creation_input_tokens != null) out.usage.cacheWrite = u.cache_creation_input_tokens;
          computeCost(this.model, out.usage);
        }
        return;
      }
      case 'message_stop':
        this.sawMessageStop = true;
        return;
    }
  }
}
