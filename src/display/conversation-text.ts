// `orchestrate show <run> --instance <key>`: one agent's conversation as text. User and assistant
// text in full; tool calls as `name(args)` and tool results cut to a few hundred characters, with
// the count of what was cut so the reader knows to open the session file for the rest.
import { DISPLAY_DEFAULTS } from './defaults.js';
import { formatCost, formatTokens } from './format-units.js';
import type { Conversation, ConversationItem } from './session-conversation.js';
import { makePainter, oneLine, type Painter } from './terminal-text.js';

/** Cuts to `max` characters and says how much was left out. */
export function abbreviate(text: string, max: number): string {
  if (text.length <= max) return text;
  // Never cut between the two halves of a surrogate pair (an emoji would print as garbage).
  const end = /[\uD800-\uDBFF]/.test(text[max - 1] ?? '') ? max - 1 : max;
  return `${text.slice(0, end)}… [${text.length - end} more characters]`;
}

/** A tool call's arguments as one line of JSON, cut to toolArgsChars: `show --instance` and the web page alike. */
export function toolArgsText(args: unknown): string {
  let s: string;
  try {
    s = JSON.stringify(args) ?? '';
  } catch {
    s = String(args);
  }
  return abbreviate(s, DISPLAY_DEFAULTS.toolArgsChars);
}

/** An assistant reply's label: its model, tokens and cost, the ones it has (`show --instance` and the report alike). */
export function assistantMeta(i: Extract<ConversationItem, { kind: 'assistant' }>): string[] {
  const parts = [
    i.model,
    i.tokens !== undefined ? `${formatTokens(i.tokens)} tokens` : undefined,
    i.cost !== undefined ? formatCost(i.cost) : undefined,
  ];
  return parts.filter((s): s is string => Boolean(s));
}

const indent = (text: string, pad = '  ') =>
  text
    .split('\n')
    .map((l) => pad + l)
    .join('\n');

/** One conversation item as (multi-line) text, as `show --instance` prints it. */
export function conversationItemText(i: ConversationItem, p: Painter): string {
  switch (i.kind) {
    case 'user':
      return `${p.paint(['bold', 'blue'], 'user')}\n${indent(i.text)}${i.images ? `\n  [${i.images} image(s)]` : ''}`;
    case 'assistant': {
      const parts: string[] = [];
      const meta = assistantMeta(i).join(', ');
      parts.push(`${p.paint(['bold', 'green'], 'assistant')}${meta ? p.paint('dim', ` (${meta})`) : ''}`);
      if (i.thinking)
        parts.push(p.paint('dim', indent(abbreviate(i.thinking, DISPLAY_DEFAULTS.toolResultChars), '  thinking: ')));
      if (i.text) parts.push(indent(i.text));
      for (const c of i.toolCalls) parts.push(`  ${p.paint('cyan', '→')} ${c.name}(${toolArgsText(c.args)})`);
      if (i.stopReason === 'error' || i.stopReason === 'aborted')
        parts.push(p.paint('red', `  [${i.stopReason}] ${oneLine(i.error ?? '')}`));
      return parts.join('\n');
    }
    case 'toolResult': {
      const head = `  ${p.paint(i.isError ? 'red' : 'dim', `← ${i.toolName}${i.isError ? ' (error)' : ''}`)}`;
      const body = abbreviate(i.text, DISPLAY_DEFAULTS.toolResultChars);
      return `${head}\n${indent(body, '    ')}${i.images ? `\n    [${i.images} image(s)]` : ''}`;
    }
    case 'peer':
      return `${p.paint(['bold', 'magenta'], `message from ${i.from}`)}\n${indent(i.text)}`;
    case 'context':
      return `${p.paint('dim', `[context: ${i.label}]`)}\n${indent(abbreviate(i.text, DISPLAY_DEFAULTS.reportTextChars))}`;
    case 'summary':
      return `${p.paint('dim', `[${i.label}]`)}\n${indent(i.text)}`;
    case 'bash':
      return `${p.paint('dim', `$ ${i.command}`)}${i.exitCode ? ` (exit ${i.exitCode})` : ''}\n${indent(abbreviate(i.output, DISPLAY_DEFAULTS.toolResultChars), '    ')}`;
    default:
      return '';
  }
}

export function formatConversation(conv: Conversation, title: string, painter: Painter = makePainter(false)): string {
  const out: string[] = [painter.paint('bold', title), painter.paint('dim', `session: ${conv.file}`)];
  if (!conv.exists) out.push('(no session file yet: the instance never reached its first model reply)');
  for (const w of conv.warnings) out.push(painter.paint('yellow', `warning: ${w}`));
  for (const i of conv.items) out.push('', conversationItemText(i, painter));
  return `${out.join('\n')}\n`;
}
