// The conversation as the interactive mode shows it: a list of items built from the session's
// messages (a reopened session) and then kept up to date from its events (streaming deltas,
// tool calls and results, compactions, retries, stops). Pure, so it is tested without ink.
import type { AgentMessage } from '../../agent/types.js';
import type { AssistantMessage, ImageContent, TextContent } from '../../ai/types.js';
import type { AgentSessionEvent } from '../../runtime/session-events.js';
import { BRANCH_SUMMARY_PREAMBLE } from '../../session/branch-summary.js';
import { formatTokens } from '../format-units.js';

export type TranscriptItem =
  | { kind: 'user'; key: string; text: string }
  | {
      kind: 'assistant';
      key: string;
      text: string;
      thinking: string;
      streaming: boolean;
      stopReason?: string;
      error?: string;
    }
  | {
      kind: 'tool';
      key: string;
      callId: string;
      name: string;
      args: unknown;
      state: 'pending' | 'running' | 'done' | 'error';
      result: string;
    }
  | { kind: 'summary'; key: string; label: string; text: string }
  | { kind: 'notice'; key: string; text: string; tone: 'info' | 'warn' | 'error' };

export interface Transcript {
  items: TranscriptItem[];
  /** Next key number (keys stay unique across updates, for React). */
  next: number;
}

export const emptyTranscript = (): Transcript => ({ items: [], next: 0 });

function textOf(content: string | (TextContent | ImageContent)[]): string {
  if (typeof content === 'string') return content;
  return content.map((b) => (b.type === 'text' ? b.text : '[image]')).join('');
}

function assistantParts(m: AssistantMessage): { text: string; thinking: string } {
  let text = '';
  let thinking = '';
  for (const b of m.content) {
    if (b.type === 'text') text += b.text;
    else if (b.type === 'thinking') thinking += b.redacted ? '[redacted]' : b.thinking;
  }
  return { text, thinking };
}

function push(t: Transcript, item: DistributiveOmit<TranscriptItem, 'key'>): Transcript {
  return { items: [...t.items, { ...item, key: `i${t.next}` } as TranscriptItem], next: t.next + 1 };
}

type DistributiveOmit<T, K extends PropertyKey> = T extends unknown ? Omit<T, K> : never;

/** A notice line (command output, errors, state changes). */
export function addNotice(t: Transcript, text: string, tone: 'info' | 'warn' | 'error' = 'info'): Transcript {
  return push(t, { kind: 'notice', text, tone });
}

function assistantItem(m: AssistantMessage, streaming: boolean): DistributiveOmit<TranscriptItem, 'key'> {
  const { text, thinking } = assistantParts(m);
  const item: DistributiveOmit<TranscriptItem, 'key'> = {
    kind: 'assistant',
    text,
    thinking,
    streaming,
    stopReason: m.stopReason,
  };
  if (!streaming && (m.stopReason === 'error' || m.stopReason === 'aborted') && m.errorMessage)
    item.error = m.errorMessage;
  return item;
}

/** Adds a finished message (history of a reopened session, or a message_end not seen streaming). */
export function addMessage(t: Transcript, m: AgentMessage): Transcript {
  switch (m.role) {
    case 'user':
      return push(t, { kind: 'user', text: textOf(m.content) });
    case 'assistant': {
      let next = t;
      const parts = assistantParts(m);
      if (parts.text !== '' || parts.thinking !== '' || m.stopReason === 'error' || m.stopReason === 'aborted')
        next = push(next, assistantItem(m, false));
      return addToolCalls(next, m);
    }
    case 'toolResult':
      return setToolResult(t, m.toolCallId, m.toolName, textOf(m.content), m.isError);
    case 'compactionSummary':
      return push(t, {
        kind: 'summary',
        label: `compacted (${formatTokens(m.tokensBefore)} tokens before)`,
        text: m.summary,
      });
    case 'branchSummary':
      // The preamble is addressed to the model; the screen shows the summary itself.
      return push(t, {
        kind: 'summary',
        label: 'summary of the branch left',
        text: m.summary.startsWith(BRANCH_SUMMARY_PREAMBLE)
          ? m.summary.slice(BRANCH_SUMMARY_PREAMBLE.length)
          : m.summary,
      });
    case 'custom':
      return m.display ? push(t, { kind: 'notice', text: `[${m.customType}] ${textOf(m.content)}`, tone: 'info' }) : t;
    case 'peer':
      return push(t, { kind: 'notice', text: `${m.from}: ${m.text}`, tone: 'info' });
    case 'bashExecution':
      return push(t, { kind: 'notice', text: `$ ${m.command}\n${m.output}`, tone: 'info' });
    default:
      return t;
  }
}

/** The transcript of a whole context (a reopened session, after a rewind or compaction). */
export function transcriptFromMessages(messages: readonly AgentMessage[]): Transcript {
  return messages.reduce<Transcript>((t, m) => addMessage(t, m), emptyTranscript());
}

function addToolCalls(t: Transcript, m: AssistantMessage): Transcript {
  let next = t;
  for (const b of m.content) {
    if (b.type !== 'toolCall') continue;
    if (next.items.some((i) => i.kind === 'tool' && i.callId === b.id)) continue;
    next = push(next, { kind: 'tool', callId: b.id, name: b.name, args: b.arguments, state: 'pending', result: '' });
  }
  return next;
}

function updateTool(
  t: Transcript,
  callId: string,
  change: (i: Extract<TranscriptItem, { kind: 'tool' }>) => TranscriptItem,
): Transcript | undefined {
  const at = t.items.findLastIndex((i) => i.kind === 'tool' && i.callId === callId);
  if (at === -1) return undefined;
  const items = t.items.slice();
  items[at] = change(items[at] as Extract<TranscriptItem, { kind: 'tool' }>);
  return { ...t, items };
}

function setToolResult(t: Transcript, callId: string, name: string, result: string, isError: boolean): Transcript {
  const state = isError ? ('error' as const) : ('done' as const);
  return (
    updateTool(t, callId, (i) => ({ ...i, state, result })) ??
    push(t, { kind: 'tool', callId, name, args: {}, state, result })
  );
}

/** Replaces the last assistant item that is still streaming, or adds one. */
function setStreaming(t: Transcript, m: AssistantMessage, streaming: boolean): Transcript {
  const last = t.items[t.items.length - 1];
  if (last?.kind === 'assistant' && last.streaming) {
    const items = t.items.slice(0, -1);
    const parts = assistantParts(m);
    const drop =
      !streaming &&
      parts.text === '' &&
      parts.thinking === '' &&
      m.stopReason !== 'error' &&
      m.stopReason !== 'aborted';
    if (drop) return { ...t, items };
    items.push({ ...assistantItem(m, streaming), key: last.key } as TranscriptItem);
    return { ...t, items };
  }
  return push(t, assistantItem(m, streaming));
}

/** Folds one session event into the transcript. */
export function applyEvent(t: Transcript, e: AgentSessionEvent): Transcript {
  switch (e.type) {
    case 'message_start':
      if (e.message.role === 'assistant') return setStreaming(t, e.message, true);
      // Prompts, delivered steering / follow-up messages and custom notes appear as they enter the context.
      return addMessage(t, e.message);
    case 'message_update':
      return setStreaming(t, e.message, true);
    case 'message_end':
      if (e.message.role === 'assistant') {
        return addToolCalls(setStreaming(t, e.message, false), e.message);
      }
      if (e.message.role === 'toolResult')
        return setToolResult(t, e.message.toolCallId, e.message.toolName, textOf(e.message.content), e.message.isError);
      return t;
    case 'tool_execution_start':
      return (
        updateTool(t, e.toolCallId, (i) => ({ ...i, state: 'running' })) ??
        push(t, { kind: 'tool', callId: e.toolCallId, name: e.toolName, args: e.args, state: 'running', result: '' })
      );
    case 'tool_execution_update':
      return updateTool(t, e.toolCallId, (i) => ({ ...i, result: textOf(e.partialResult.content) })) ?? t;
    case 'tool_execution_end':
      return setToolResult(t, e.toolCallId, e.toolName, textOf(e.result.content), e.isError);
    case 'auto_compaction_start':
      return addNotice(
        t,
        e.reason === 'overflow'
          ? 'Context overflow: compacting, then retrying…'
          : 'Context is getting full: compacting…',
      );
    case 'auto_compaction_end':
      if (e.errorMessage) return addNotice(t, e.errorMessage, e.aborted ? 'warn' : 'error');
      return e.result ? addNotice(t, `Compacted ${formatTokens(e.result.tokensBefore)} tokens into a summary.`) : t;
    case 'auto_retry_start':
      return addNotice(
        t,
        `Provider error (${e.errorMessage}); retry ${e.attempt}/${e.maxAttempts} in ${(e.delayMs / 1000).toFixed(1)}s`,
        'warn',
      );
    case 'auto_retry_end':
      return e.success
        ? t
        : addNotice(t, `Gave up after ${e.attempt} retries: ${e.finalError ?? 'unknown error'}`, 'error');
    case 'run_stopped':
      return addNotice(t, e.message, 'error');
    case 'loop_warning':
      return addNotice(t, `Loop warning: ${e.detail}`, 'warn');
    case 'extension_error':
      return addNotice(t, `Extension ${e.extensionPath} failed on ${e.event}: ${e.error}`, 'error');
    default:
      return t;
  }
}
