// Conversation as plain text for a summarizer: one labelled paragraph per item. The model is
// asked to summarize this text, never to continue it, so no message is sent in its own role.
import type { AgentMessage } from '../agent/types.js';
import { contentText } from '../ai/content-text.js';
import { SESSION_DEFAULTS } from './defaults.js';

function truncate(text: string, max: number): string {
  return text.length <= max ? text : `${text.slice(0, max)}\n[... ${text.length - max} more characters truncated]`;
}

function formatArgs(args: Record<string, unknown>): string {
  return Object.entries(args)
    .map(([k, v]) => `${k}=${JSON.stringify(v)}`)
    .join(', ');
}

function paragraphs(m: AgentMessage, toolResultChars: number): string[] {
  switch (m.role) {
    case 'user': {
      const t = contentText(m.content);
      return t ? [`[User]: ${t}`] : [];
    }
    case 'assistant': {
      const out: string[] = [];
      const thinking = m.content
        .filter((b) => b.type === 'thinking' && !b.redacted)
        .map((b) => (b.type === 'thinking' ? b.thinking : ''));
      const text = m.content.filter((b) => b.type === 'text').map((b) => (b.type === 'text' ? b.text : ''));
      const calls = m.content
        .filter((b) => b.type === 'toolCall')
        .map((b) => (b.type === 'toolCall' ? `${b.name}(${formatArgs(b.arguments)})` : ''));
      if (thinking.length > 0) out.push(`[Assistant thinking]: ${thinking.join('\n')}`);
      if (text.length > 0) out.push(`[Assistant]: ${text.join('\n')}`);
      if (calls.length > 0) out.push(`[Assistant tool calls]: ${calls.join('; ')}`);
      if (m.stopReason === 'error' && m.errorMessage) out.push(`[Assistant error]: ${m.errorMessage}`);
      return out;
    }
    case 'toolResult': {
      const t = contentText(m.content);
      return [`[Tool result${m.isError ? ' (error)' : ''}]: ${truncate(t, toolResultChars)}`];
    }
    case 'custom': {
      const t = contentText(m.content);
      return t ? [`[Context: ${m.customType}]: ${t}`] : [];
    }
    case 'bashExecution': {
      if (m.excludeFromContext) return [];
      const exit = m.cancelled
        ? ' (cancelled)'
        : m.exitCode !== null && m.exitCode !== 0
          ? ` (exit code ${m.exitCode})`
          : '';
      return [`[User ran a shell command${exit}]: $ ${m.command}\n${truncate(m.output, toolResultChars)}`];
    }
    case 'compactionSummary':
      return [`[Summary of earlier conversation]: ${m.summary}`];
    case 'branchSummary':
      return [`[Summary of a branch that was left]: ${m.summary}`];
    case 'peer':
      return [`[Message from ${m.from}]: ${m.text}`];
    default:
      return [];
  }
}

/**
 * Labelled paragraphs separated by blank lines; images omitted, tool results cut to a few KB.
 * With `maxChars`, the longest paragraphs are cut to one common length (each keeps its start)
 * until the text fits: a summary request must fit the window it summarizes for.
 */
export function serializeConversation(
  messages: readonly AgentMessage[],
  toolResultChars: number = SESSION_DEFAULTS.compaction.toolResultChars,
  maxChars?: number,
): string {
  const out: string[] = [];
  for (const m of messages) out.push(...paragraphs(m, toolResultChars));
  const total = out.reduce((n, p) => n + p.length + 2, 0);
  if (maxChars === undefined || total <= maxChars) return out.join('\n\n');
  // The largest cap with sum(min(len, cap) + marker) <= maxChars, by binary search.
  const marker = 60;
  const fits = (cap: number): boolean => out.reduce((n, p) => n + Math.min(p.length, cap + marker) + 2, 0) <= maxChars;
  let lo = 0;
  let hi = Math.max(...out.map((p) => p.length));
  while (lo < hi) {
    const mid = Math.ceil((lo + hi) / 2);
    if (fits(mid)) lo = mid;
    else hi = mid - 1;
  }
  return out.map((p) => truncate(p, Math.max(lo, 200))).join('\n\n');
}
