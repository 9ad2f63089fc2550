// Turns Responses API stream events into our streaming protocol. Output items are keyed by
// output_index (every event names it), so parallel calls never merge; a call's arguments are
// taken from function_call_arguments.done / output_item.done when the server sends them whole.
import type OpenAI from 'openai';
import { pushContentEnd } from './event-stream.js';
import { StreamedToolArguments, parseToolArguments } from './partial-json.js';
import { ReplyReader } from './reply-reader.js';
import type { AssistantMessage, ToolCall } from './types.js';
import { computeCost } from './usage.js';

type Event = OpenAI.Responses.ResponseStreamEvent;

interface Item {
  contentIndex: number;
  kind: 'text' | 'thinking' | 'call';
  args?: StreamedToolArguments;
  ended: boolean;
}

export class ResponsesStreamReader extends ReplyReader {
  /** response.completed / incomplete / failed arrived. */
  finished = false;
  sawUsage = false;
  /** A failure the server reported inside the stream (response.failed, error event). */
  streamError: { message: string; code?: string } | undefined;
  private readonly items = new Map<number, Item>();

  handle(ev: Event): void {
    if (this.firstEvent()) this.emitStart();
    const out = this.output;
    switch (ev.type) {
      case 'response.output_item.added': {
        const it = ev.item;
        if (it.type === 'function_call') {
          const call: ToolCall = { type: 'toolCall', id: it.call_id, name: it.name, arguments: {} };
          this.open(ev.output_index, 'call', call);
          if (it.arguments) this.argsDelta(ev.output_index, it.arguments);
        }
        return;
      }
      case 'response.output_text.delta':
        this.textDelta(ev.output_index, 'text', ev.delta);
        return;
      case 'response.reasoning_summary_text.delta':
      case 'response.reasoning_text.delta':
        this.textDelta(ev.output_index, 'thinking', ev.delta);
        return;
      case 'response.function_call_arguments.delta':
        this.argsDelta(ev.output_index, ev.delta);
        return;
      case 'response.function_call_arguments.done': {
        const item = this.items.get(ev.output_index);
        if (item?.kind === 'call')
          (out.content[item.contentIndex] as ToolCall).arguments = parseToolArguments(ev.arguments);
        return;
      }
      case 'response.output_item.done': {
        const it = ev.item;
        const item = this.items.get(ev.output_index);
        if (it.type === 'function_call' && item?.kind === 'call') {
          const call = out.content[item.contentIndex] as ToolCall;
          if (it.arguments) call.arguments = parseToolArguments(it.arguments);
          if (it.call_id) call.id = it.call_id;
        }
        this.close(ev.output_index);
        return;
      }
      case 'response.completed':
      case 'response.incomplete': {
        this.finished = true;
        this.usage(ev.response.usage);
        for (const index of [...this.items.keys()]) this.close(index);
        const calls = out.content.some((b) => b.type === 'toolCall');
        if (ev.type === 'response.incomplete') {
          const why = ev.response.incomplete_details?.reason;
          if (why === 'max_output_tokens') out.stopReason = 'length';
          else {
            out.stopReason = 'error';
            this.stopError = `The response is incomplete (${why ?? 'no reason given'}).`;
          }
        } else out.stopReason = calls ? 'toolUse' : 'stop';
        return;
      }
      case 'response.failed': {
        this.finished = true;
        const e = ev.response.error;
        this.streamError = { message: e?.message ?? 'The response failed.', code: e?.code ?? undefined };
        return;
      }
      case 'error':
        this.finished = true;
        this.streamError = { message: ev.message, code: ev.code ?? undefined };
        return;
      default:
        return;
    }
  }

  private usage(u: OpenAI.Responses.ResponseUsage | null | undefined): void {
    if (!u) return;
    this.sawUsage = true;
    const cached = u.input_tokens_details?.cached_tokens ?? 0;
    this.output.usage.input = Math.max(0, u.input_tokens - cached);
    this.output.usage.cacheRead = cached;
    this.output.usage.output = u.output_tokens;
    computeCost(this.model, this.output.usage);
  }

  private open(index: number, kind: Item['kind'], block: AssistantMessage['content'][number]): Item {
    const out = this.output;
    out.content.push(block);
    const item: Item = {
      contentIndex: out.content.length - 1,
      kind,
      ended: false,
      args: kind === 'call' ? new StreamedToolArguments() : undefined,
    };
    this.items.set(index, item);
    this.contentStarted = true;
    const type = kind === 'text' ? 'text_start' : kind === 'thinking' ? 'thinking_start' : 'toolcall_start';
    this.stream.push({ type, contentIndex: item.contentIndex, partial: out });
    return item;
  }

  private textDelta(index: number, kind: 'text' | 'thinking', delta: string): void {
    const out = this.output;
    let item = this.items.get(index);
    if (!item || item.kind !== kind)
      item = this.open(index, kind, kind === 'text' ? { type: 'text', text: '' } : { type: 'thinking', thinking: '' });
    const block = out.content[item.contentIndex]!;
    if (block.type === 'text') block.text += delta;
    else if (block.type === 'thinking') block.thinking += delta;
    this.stream.push({
      type: kind === 'text' ? 'text_delta' : 'thinking_delta',
      contentIndex: item.contentIndex,
      delta,
      partial: out,
    });
  }

  private argsDelta(index: number, delta: string): void {
    const item = this.items.get(index);
    if (item?.kind !== 'call' || !item.args) return;
    const call = this.output.content[item.contentIndex] as ToolCall;
    call.arguments = item.args.push(delta);
    this.stream.push({ type: 'toolcall_delta', contentIndex: item.contentIndex, delta, partial: this.output });
  }

  private close(index: number): void {
    const item = this.items.get(index);
    if (!item || item.ended) return;
    item.ended = true;
    pushContentEnd(this.stream, this.output, item.contentIndex);
  }
}
