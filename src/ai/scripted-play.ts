// Playback for the scripted provider (scripted.ts): normalises a script turn into a plan (blocks to
// stream, how it ends) and streams that plan through the assistant-message protocol, chunk by chunk,
// honouring abort between chunks. Kept apart from scripted.ts, which decides *which* turn answers a
// call; this file only decides *how* a chosen turn is streamed.
import { aiDefaults } from './defaults.js';
import type { AssistantMessageEventStream } from './event-stream.js';
import { StreamedToolArguments } from './partial-json.js';
import { classifyProviderError } from './provider-error.js';
import type { ScriptedReply, ScriptedTurn, ScriptedTurnSpec } from './scripted.js';
import type { AssistantMessage, Model, StopReason, ToolCall } from './types.js';
import { computeCost } from './usage.js';

export const ABORTED_TEXT = 'Request was aborted';

export function isAssistantMessage(t: ScriptedTurn | ScriptedTurnSpec | AssistantMessage): t is AssistantMessage {
  return typeof t === 'object' && (t as AssistantMessage).role === 'assistant';
}

function replyChars(content: AssistantMessage['content']): number {
  let n = 0;
  for (const b of content) {
    if (b.type === 'text') n += b.text.length;
    else if (b.type === 'thinking') n += b.thinking.length;
    else n += b.name.length + JSON.stringify(b.arguments).length;
  }
  return n;
}

/**
 * A scripted failure classified as a provider's would be (from a leading status and its wording).
 * The scripted provider has no retry loop, so a transient one is left to the caller to run again.
 */
export function scriptedFailureFields(
  text: string,
): Pick<AssistantMessage, 'errorStatus' | 'errorKind' | 'errorRetryable'> {
  const leading = /^\s*([1-5]\d\d)\b/.exec(text);
  const status = leading ? Number(leading[1]) : undefined;
  const kind = classifyProviderError({ message: text });
  return {
    ...(status !== undefined ? { errorStatus: status } : {}),
    ...(kind !== undefined ? { errorKind: kind, errorRetryable: true } : {}),
  };
}

/** Normalised form of any turn: blocks to stream, how it ends. */
export interface Plan {
  blocks: AssistantMessage['content'];
  stopReason: StopReason;
  errorMessage?: string;
  /** Blocks streamed before an error (all of them for a reply). */
  emitBlocks: number;
  usage?: ScriptedReply['usage'];
  delayMs: number;
  chunkDelayMs?: number;
}

export function planOf(turn: ScriptedTurnSpec | AssistantMessage, replyIndex: number): Plan {
  if (isAssistantMessage(turn)) {
    const failed = turn.stopReason === 'error' || turn.stopReason === 'aborted';
    return {
      blocks: turn.content,
      stopReason: turn.stopReason,
      errorMessage: failed ? (turn.errorMessage ?? 'scripted error') : undefined,
      emitBlocks: turn.content.length,
      delayMs: 0,
    };
  }
  let blocks: AssistantMessage['content'];
  if (turn.content) blocks = turn.content;
  else {
    blocks = [];
    if (turn.thinking !== undefined)
      blocks.push({
        type: 'thinking',
        thinking: turn.thinking,
        thinkingSignature: turn.thinkingSignature ?? `scripted-signature-${replyIndex}`,
      });
    if (turn.text !== undefined) blocks.push({ type: 'text', text: turn.text });
    turn.tools?.forEach((t, i) => {
      blocks.push({ type: 'toolCall', id: t.id ?? `call_${replyIndex}_${i}`, name: t.name, arguments: t.args ?? {} });
    });
  }
  const delayMs = turn.delayMs ?? 0;
  const slow = turn.chunkDelayMs !== undefined ? { chunkDelayMs: turn.chunkDelayMs } : {};
  if ('error' in turn && typeof turn.error === 'string') {
    return {
      blocks,
      stopReason: turn.stopReason ?? 'error',
      errorMessage: turn.error,
      emitBlocks: Math.min(turn.afterBlocks ?? 0, blocks.length),
      usage: turn.usage,
      delayMs,
      ...slow,
    };
  }
  const reply = turn as ScriptedReply;
  const hasTools = blocks.some((b) => b.type === 'toolCall');
  return {
    blocks,
    stopReason: reply.stopReason ?? (hasTools ? 'toolUse' : 'stop'),
    emitBlocks: blocks.length,
    usage: reply.usage,
    delayMs,
    ...slow,
  };
}

const sleep = (ms: number, signal?: AbortSignal): Promise<void> =>
  new Promise((resolve) => {
    const timer = setTimeout(done, ms);
    function done(): void {
      clearTimeout(timer);
      signal?.removeEventListener('abort', done);
      resolve();
    }
    signal?.addEventListener('abort', done, { once: true });
  });

/** Streams a plan through the protocol: chunks, abort checks between them, terminal event. */
export async function play(
  plan: Plan,
  output: AssistantMessage,
  stream: AssistantMessageEventStream,
  model: Model,
  chunkSize: number,
  chunkDelayMs: number,
  signal: AbortSignal | undefined,
): Promise<void> {
  const finishUsage = (): void => {
    output.usage.output = Math.ceil(replyChars(output.content) / aiDefaults.charsPerToken);
    if (plan.usage) Object.assign(output.usage, plan.usage);
    computeCost(model, output.usage);
  };
  const aborted = (): boolean => {
    if (!signal?.aborted) return false;
    finishUsage();
    output.stopReason = 'aborted';
    output.errorMessage = ABORTED_TEXT;
    stream.push({ type: 'error', reason: 'aborted', error: output });
    return true;
  };
  const perChunk = plan.chunkDelayMs ?? chunkDelayMs;
  const pause = (): Promise<void> | undefined => (perChunk > 0 ? sleep(perChunk, signal) : undefined);

  if (plan.delayMs > 0) {
    await sleep(plan.delayMs, signal);
    if (aborted()) return;
  }
  const failing = plan.stopReason === 'error' || plan.stopReason === 'aborted';
  // Like an HTTP error, a failure with nothing streamed has no start event.
  if (!(failing && plan.emitBlocks === 0)) stream.push({ type: 'start', partial: output });

  for (let b = 0; b < plan.emitBlocks; b++) {
    const src = plan.blocks[b]!;
    const contentIndex = output.content.length;
    if (src.type === 'toolCall') {
      const call: ToolCall = { type: 'toolCall', id: src.id, name: src.name, arguments: {} };
      output.content.push(call);
      stream.push({ type: 'toolcall_start', contentIndex, partial: output });
      const json = JSON.stringify(src.arguments);
      const streamed = new StreamedToolArguments();
      for (let i = 0; i < json.length; i += chunkSize) {
        await pause();
        if (aborted()) return;
        const delta = json.slice(i, i + chunkSize);
        const preview = streamed.push(delta);
        call.arguments = i + chunkSize >= json.length ? (JSON.parse(json) as Record<string, unknown>) : preview;
        stream.push({ type: 'toolcall_delta', contentIndex, delta, partial: output });
      }
      stream.push({ type: 'toolcall_end', contentIndex, toolCall: call, partial: output });
      continue;
    }
    const isText = src.type === 'text';
    const full = isText ? src.text : src.thinking;
    const block: AssistantMessage['content'][number] = isText
      ? { type: 'text', text: '' }
      : { type: 'thinking', thinking: src.redacted ? full : '', ...(src.redacted ? { redacted: true } : {}) };
    output.content.push(block);
    stream.push({ type: isText ? 'text_start' : 'thinking_start', contentIndex, partial: output });
    if (!(block.type === 'thinking' && block.redacted)) {
      for (let i = 0; i < full.length; i += chunkSize) {
        await pause();
        if (aborted()) return;
        const delta = full.slice(i, i + chunkSize);
        if (block.type === 'text') block.text += delta;
        else block.thinking += delta;
        stream.push({ type: isText ? 'text_delta' : 'thinking_delta', contentIndex, delta, partial: output });
      }
    }
    // Like the real API, the signature arrives once the thinking is complete.
    if (block.type === 'thinking' && src.type === 'thinking' && src.thinkingSignature)
      block.thinkingSignature = src.thinkingSignature;
    if (block.type === 'text') stream.push({ type: 'text_end', contentIndex, content: block.text, partial: output });
    else stream.push({ type: 'thinking_end', contentIndex, content: block.thinking, partial: output });
  }

  await pause();
  if (aborted()) return;
  finishUsage();
  const reason = plan.stopReason;
  output.stopReason = reason;
  if (reason === 'error' || reason === 'aborted') {
    output.errorMessage = plan.errorMessage;
    if (reason === 'error') Object.assign(output, scriptedFailureFields(plan.errorMessage ?? ''));
    stream.push({ type: 'error', reason, error: output });
    return;
  }
  stream.push({ type: 'done', reason, message: output });
}
