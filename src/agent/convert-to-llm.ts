// The default reduction of the loop's rich messages to what a model accepts. Internal roles
// (summaries, custom notes, peer messages, shell runs) become user messages with a short preface
// so the model knows what it is reading; they never reach a provider under their own role.
import type { Message, UserMessage } from '../ai/types.js';
import type { AgentMessage, BashExecutionMessage, PeerMessage } from './types.js';

export const COMPACTION_SUMMARY_PREFACE =
  'Earlier history of this conversation was compacted; this summary replaces it:';
export const BRANCH_SUMMARY_PREFACE = 'This is a summary of a branch this conversation came back from:';

/**
 * Converts one message, or returns undefined when it must not reach the model. Per-message and
 * pure, which is what lets the loop convert only the appended tail of the history.
 */
export function convertMessageToLlm(message: AgentMessage): Message | undefined {
  switch (message.role) {
    case 'user':
    case 'assistant':
    case 'toolResult':
      return message;
    case 'compactionSummary':
      return userText(`${COMPACTION_SUMMARY_PREFACE}\n\n<summary>\n${message.summary}\n</summary>`, message.timestamp);
    case 'branchSummary':
      return userText(`${BRANCH_SUMMARY_PREFACE}\n\n<summary>\n${message.summary}\n</summary>`, message.timestamp);
    case 'custom':
      return { role: 'user', content: message.content, timestamp: message.timestamp };
    case 'peer':
      return userText(peerText(message), message.timestamp);
    case 'bashExecution':
      return message.excludeFromContext ? undefined : userText(bashText(message), message.timestamp);
    default:
      // A role this layer does not know (e.g. from a newer session file): never send it.
      return undefined;
  }
}

/** Default `convertToLlm`: every message converted in order, internal-only ones dropped. */
export function convertToLlm(messages: readonly AgentMessage[]): Message[] {
  const out: Message[] = [];
  for (const m of messages) {
    const converted = convertMessageToLlm(m);
    if (converted) out.push(converted);
  }
  return out;
}

function userText(text: string, timestamp: number): UserMessage {
  return { role: 'user', content: [{ type: 'text', text }], timestamp };
}

function peerText(m: PeerMessage): string {
  const from = m.from.replace(/&/g, '&amp;').replace(/"/g, '&quot;').replace(/</g, '&lt;');
  return `<peer-message from="${from}">\nMessage from ${m.from}:\n\n${m.text}\n</peer-message>`;
}

function bashText(m: BashExecutionMessage): string {
  const lines = [`Ran \`${m.command}\``];
  if (m.output.length > 0) lines.push('```', m.output.replace(/\n$/, ''), '```');
  else lines.push('(no output)');
  if (m.cancelled) lines.push('(command cancelled)');
  else if (m.exitCode !== null && m.exitCode !== 0) lines.push(`Command exited with code ${m.exitCode}`);
  if (m.truncated) {
    lines.push(m.fullOutputPath ? `[Output truncated. Full output: ${m.fullOutputPath}]` : '[Output truncated]');
  }
  return lines.join('\n');
}
