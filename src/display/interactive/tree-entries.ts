// The rows of the /tree and /fork pickers: the session's entries worth pointing at (prompts,
// replies, summaries) in tree order, indented where the conversation branched, with the current
// path marked. Tool results, labels and settings changes are walked through but not listed.
import type { SessionStore } from '../../session/session-store.js';
import type { SessionEntry } from '../../session/types.js';
import { oneLine } from '../terminal-text.js';

export interface TreeRow {
  id: string;
  /** Branch depth: grows by one below an entry with more than one child. */
  depth: number;
  text: string;
  /** On the path from the root to the current leaf. */
  onPath: boolean;
  isLeaf: boolean;
  isUser: boolean;
}

function describe(e: SessionEntry): { text: string; isUser: boolean } | undefined {
  if (e.type === 'compaction') return { text: `[compaction] ${oneLine(e.summary)}`, isUser: false };
  if (e.type === 'branch_summary') return { text: `[branch summary] ${oneLine(e.summary)}`, isUser: false };
  if (e.type !== 'message') return undefined;
  const m = e.message;
  if (m.role === 'user') {
    const text =
      typeof m.content === 'string'
        ? m.content
        : m.content.map((b) => (b.type === 'text' ? b.text : '[image]')).join('');
    return { text: `user: ${oneLine(text)}`, isUser: true };
  }
  if (m.role === 'assistant') {
    const text = m.content.map((b) => (b.type === 'text' ? b.text : '')).join('');
    const tools = m.content.flatMap((b) => (b.type === 'toolCall' ? [b.name] : []));
    const body =
      oneLine(text) ||
      (tools.length > 0
        ? `→ ${tools.join(', ')}`
        : m.errorMessage
          ? `(${m.stopReason}) ${oneLine(m.errorMessage)}`
          : '');
    return { text: `assistant: ${body}`, isUser: false };
  }
  return undefined;
}

/** Every listed entry of the session, depth first in file order. */
export function treeRows(store: SessionStore): TreeRow[] {
  const leaf = store.leafId;
  const onPath = new Set(store.getPath().map((e) => e.id));
  const rows: TreeRow[] = [];
  // Iterative walk: long sessions are deep chains.
  const stack: { id: string | null; depth: number }[] = [{ id: null, depth: 0 }];
  while (stack.length > 0) {
    const { id, depth } = stack.pop()!;
    const children = store.getChildren(id);
    const childDepth = children.length > 1 ? depth + 1 : depth;
    // Pushed in reverse so siblings come out in file order.
    for (let i = children.length - 1; i >= 0; i--) stack.push({ id: children[i]!.id, depth: childDepth });
    if (id !== null) {
      const e = store.getEntry(id)!;
      const d = describe(e);
      if (d) rows.push({ id, depth, text: d.text, onPath: onPath.has(id), isLeaf: id === leaf, isUser: d.isUser });
    }
  }
  return rows;
}

/** The user prompts on the current path (what /fork can start from), oldest first. */
export function userRowsOnPath(store: SessionStore): TreeRow[] {
  const leaf = store.leafId;
  return store.getPath().flatMap((e) => {
    const d = describe(e);
    return d?.isUser ? [{ id: e.id, depth: 0, text: d.text, onPath: true, isLeaf: e.id === leaf, isUser: true }] : [];
  });
}
