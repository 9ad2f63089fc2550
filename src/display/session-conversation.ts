// An instance's conversation read from its session file, as display items. Read-only on purpose:
// viewing a run must never rewrite a session (SessionStore.open repairs or migrates damaged
// files; here damage only becomes warnings). The path shown is root to leaf, every entry on it,
// including what a compaction later summarized: a viewer wants the whole story.
import type { AgentMessage } from '../agent/types.js';
import type { ImageContent, TextContent } from '../ai/types.js';
import { JsonlFileStorage } from '../session/jsonl-file-storage.js';
import { loadSession } from '../session/load-session.js';
import { SessionTree } from '../session/session-tree.js';
import type { SessionEntry } from '../session/types.js';

export interface ToolCallItem {
  id: string;
  name: string;
  args: unknown;
}

export type ConversationItem =
  | { kind: 'user'; ts: string; text: string; images: number }
  | {
      kind: 'assistant';
      ts: string;
      text: string;
      thinking: string;
      toolCalls: ToolCallItem[];
      stopReason: string;
      error?: string;
      model?: string;
      tokens?: number;
      cost?: number;
    }
  | {
      kind: 'toolResult';
      ts: string;
      toolCallId: string;
      toolName: string;
      text: string;
      isError: boolean;
      images: number;
    }
  | { kind: 'peer'; ts: string; from: string; text: string }
  | { kind: 'context'; ts: string; label: string; text: string }
  | { kind: 'summary'; ts: string; label: string; text: string }
  | { kind: 'bash'; ts: string; command: string; output: string; exitCode: number | null };

export interface Conversation {
  file: string;
  exists: boolean;
  items: ConversationItem[];
  warnings: string[];
}

function textOf(content: string | (TextContent | ImageContent)[]): { text: string; images: number } {
  if (typeof content === 'string') return { text: content, images: 0 };
  const text = content
    .filter((b): b is TextContent => b.type === 'text')
    .map((b) => b.text)
    .join('\n');
  return { text, images: content.filter((b) => b.type === 'image').length };
}

function messageItem(m: AgentMessage, ts: string): ConversationItem | undefined {
  switch (m.role) {
    case 'user': {
      const { text, images } = textOf(m.content);
      return { kind: 'user', ts, text, images };
    }
    case 'assistant': {
      const text: string[] = [];
      const thinking: string[] = [];
      const toolCalls: ToolCallItem[] = [];
      for (const b of m.content) {
        if (b.type === 'text') text.push(b.text);
        else if (b.type === 'thinking' && !b.redacted) thinking.push(b.thinking);
        else if (b.type === 'toolCall') toolCalls.push({ id: b.id, name: b.name, args: b.arguments });
      }
      return {
        kind: 'assistant',
        ts,
        text: text.join('\n'),
        thinking: thinking.join('\n'),
        toolCalls,
        stopReason: m.stopReason,
        error: m.errorMessage,
        model: m.model,
        tokens: m.usage?.totalTokens,
        cost: m.usage?.cost?.total,
      };
    }
    case 'toolResult': {
      const { text, images } = textOf(m.content);
      return {
        kind: 'toolResult',
        ts,
        toolCallId: m.toolCallId,
        toolName: m.toolName,
        text,
        isError: m.isError,
        images,
      };
    }
    case 'peer':
      return { kind: 'peer', ts, from: m.from, text: m.text };
    case 'custom':
      return { kind: 'context', ts, label: m.customType, text: textOf(m.content).text };
    case 'compactionSummary':
      return { kind: 'summary', ts, label: 'compaction summary', text: m.summary };
    case 'branchSummary':
      return { kind: 'summary', ts, label: 'branch summary', text: m.summary };
    case 'bashExecution':
      return { kind: 'bash', ts, command: m.command, output: m.output, exitCode: m.exitCode };
    default:
      return undefined;
  }
}

function entryItem(e: SessionEntry): ConversationItem | undefined {
  switch (e.type) {
    case 'message':
      return messageItem(e.message, e.timestamp);
    case 'compaction':
      return {
        kind: 'summary',
        ts: e.timestamp,
        label: `compacted (${e.tokensBefore} tokens before)`,
        text: e.summary,
      };
    case 'branch_summary':
      return { kind: 'summary', ts: e.timestamp, label: 'branch summary', text: e.summary };
    case 'custom_message':
      return { kind: 'context', ts: e.timestamp, label: e.customType, text: textOf(e.content).text };
    default:
      return undefined;
  }
}

export function readConversation(file: string): Conversation {
  const loaded = loadSession(new JsonlFileStorage(file));
  const warnings = [...loaded.warnings];
  if (!loaded.exists) return { file, exists: false, items: [], warnings };
  const tree = SessionTree.build(loaded.entries, warnings);
  const last = tree.entries[tree.entries.length - 1];
  const leaf = loaded.leafTarget !== undefined ? loaded.leafTarget : (last?.id ?? null);
  const path = leaf === null ? [] : tree.pathTo(leaf);
  const items: ConversationItem[] = [];
  for (const e of path) {
    const item = entryItem(e);
    if (item) items.push(item);
  }
  return { file, exists: true, items, warnings };
}
