// Cross-provider transform (kernel-spec 2.7): makes a stored conversation safe to send to the
// target model. Input messages are never mutated; unchanged messages are passed through as is.
import { aiDefaults } from './defaults.js';
import type { AssistantMessage, Message, Model, ToolCall, ToolResultMessage } from './types.js';

export const NO_RESULT_TEXT = 'No result provided';

/** Rewrites a foreign tool-call id into one the target provider accepts. */
export type ToolCallIdNormalizer = (id: string) => string;

/** Anthropic accepts [A-Za-z0-9_-]{1,64}. */
export function normalizeAnthropicToolCallId(id: string): string {
  const clean = id.replace(/[^A-Za-z0-9_-]/g, '_').slice(0, aiDefaults.toolCallIdMaxLength);
  return clean === '' ? 'toolu_empty' : clean;
}

function isSameModel(msg: AssistantMessage, target: Pick<Model, 'api' | 'provider' | 'id'>): boolean {
  return msg.provider === target.provider && msg.api === target.api && msg.model === target.id;
}

/** Pass 1 on one assistant message: thinking and tool-call ids adapted to the target model. */
function adaptAssistant(
  msg: AssistantMessage,
  target: Pick<Model, 'api' | 'provider' | 'id'>,
  normalize: ToolCallIdNormalizer | undefined,
  idMap: Map<string, string>,
): AssistantMessage {
  const same = isSameModel(msg, target);
  let changed = false;
  const content: AssistantMessage['content'] = [];
  for (const block of msg.content) {
    if (block.type === 'thinking') {
      if (block.redacted) {
        // Encrypted reasoning only means something to the model that produced it.
        if (same) content.push(block);
        else changed = true;
        continue;
      }
      if (same && block.thinkingSignature) {
        content.push(block);
        continue;
      }
      if (block.thinking.trim() === '') {
        changed = true;
        continue;
      }
      if (same) content.push(block);
      else {
        content.push({ type: 'text', text: block.thinking });
        changed = true;
      }
      continue;
    }
    if (block.type === 'toolCall' && !same && normalize) {
      const id = normalize(block.id);
      if (id !== block.id) {
        idMap.set(block.id, id);
        const call: ToolCall = { ...block, id };
        content.push(call);
        changed = true;
        continue;
      }
    }
    content.push(block);
  }
  return changed ? { ...msg, content } : msg;
}

function syntheticResult(call: ToolCall, timestamp: number): ToolResultMessage {
  return {
    role: 'toolResult',
    toolCallId: call.id,
    toolName: call.name,
    content: [{ type: 'text', text: NO_RESULT_TEXT }],
    isError: true,
    timestamp,
  };
}

/**
 * Returns the messages to send to `target`:
 * - assistant replies that ended in error/aborted are dropped (never replayed);
 * - thinking is kept for the same model, turned into text (or dropped when blank) for others;
 * - foreign tool-call ids are normalised and their results remapped;
 * - a tool call without a result gets a synthetic error result "No result provided" right
 *   after its batch, and a result whose call is not in the preceding reply is dropped, so the
 *   request always has the call/result pairing providers demand.
 */
export function transformMessages(
  messages: readonly Message[],
  target: Pick<Model, 'api' | 'provider' | 'id'>,
  normalizeToolCallId?: ToolCallIdNormalizer,
): Message[] {
  const idMap = new Map<string, string>();
  const out: Message[] = [];
  // Tool calls of the last kept assistant reply that have no result yet, in call order.
  let pending: ToolCall[] = [];
  let pendingTimestamp = 0;
  let answerable = new Set<string>();

  const flush = (): void => {
    for (const call of pending) out.push(syntheticResult(call, pendingTimestamp));
    pending = [];
  };

  for (const msg of messages) {
    if (msg.role === 'assistant') {
      if (msg.stopReason === 'error' || msg.stopReason === 'aborted') continue;
      flush();
      const adapted = adaptAssistant(msg, target, normalizeToolCallId, idMap);
      pending = adapted.content.filter((b): b is ToolCall => b.type === 'toolCall');
      pendingTimestamp = adapted.timestamp;
      answerable = new Set(pending.map((c) => c.id));
      out.push(adapted);
      continue;
    }
    if (msg.role === 'toolResult') {
      const id = idMap.get(msg.toolCallId) ?? msg.toolCallId;
      if (!answerable.has(id)) continue;
      answerable.delete(id);
      pending = pending.filter((c) => c.id !== id);
      out.push(id === msg.toolCallId ? msg : { ...msg, toolCallId: id });
      continue;
    }
    flush();
    answerable = new Set();
    out.push(msg);
  }
  flush();
  return out;
}
