// Recognizes our own summary requests on the fake API, in both shapes (src/session/summarize.ts):
// inside the conversation (the agent's system prompt, the instruction as the last user message)
// and as a transcript (the summarizer's system prompt).
import { IN_CONVERSATION_SUMMARY_OPENING, SUMMARIZER_SYSTEM_PROMPT } from '../../src/session/summarize.js';

/** The text of a request's last message (string content or its text blocks). */
function lastMessageText(body: { messages?: unknown }): string {
  const messages = Array.isArray(body.messages) ? (body.messages as { content?: unknown }[]) : [];
  const c = messages[messages.length - 1]?.content;
  if (typeof c === 'string') return c;
  if (!Array.isArray(c)) return '';
  return c.map((b: { type?: string; text?: string }) => (b.type === 'text' ? (b.text ?? '') : '')).join('\n');
}

/** A handoff or compaction summary request of ours. */
export function isSummaryRequest(body: { system?: unknown; messages?: unknown } | undefined): boolean {
  if (!body) return false;
  const system = typeof body.system === 'string' ? body.system : JSON.stringify(body.system ?? '');
  return (
    system.includes(SUMMARIZER_SYSTEM_PROMPT.slice(0, 60)) ||
    lastMessageText(body).includes(IN_CONVERSATION_SUMMARY_OPENING)
  );
}
