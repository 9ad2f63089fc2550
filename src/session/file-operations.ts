// Files a stretch of conversation touched, taken from the read/write/edit tool calls. The lists
// travel with every summary and accumulate across compactions, so a later agent (or the
// orchestrator merging summaries) knows which files matter without replaying the history.
import type { AgentMessage } from '../agent/types.js';
import type { FileLists } from './types.js';

export interface FileOperations {
  read: Set<string>;
  written: Set<string>;
  edited: Set<string>;
}

const READ_TOOLS: ReadonlySet<string> = new Set(['read']);
const WRITE_TOOLS: ReadonlySet<string> = new Set(['write']);
const EDIT_TOOLS: ReadonlySet<string> = new Set(['edit']);

export function createFileOperations(seed?: FileLists): FileOperations {
  return { read: new Set(seed?.readFiles ?? []), written: new Set(), edited: new Set(seed?.modifiedFiles ?? []) };
}

function pathArgument(args: Record<string, unknown>): string | undefined {
  const p = args.path ?? args.file_path;
  return typeof p === 'string' && p.length > 0 ? p : undefined;
}

/** Adds the paths of every read/write/edit tool call in `messages`. */
export function collectFileOperations(messages: readonly AgentMessage[], ops: FileOperations): FileOperations {
  for (const m of messages) {
    if (m.role !== 'assistant') continue;
    for (const block of m.content) {
      if (block.type !== 'toolCall') continue;
      const path = pathArgument(block.arguments);
      if (!path) continue;
      if (READ_TOOLS.has(block.name)) ops.read.add(path);
      else if (WRITE_TOOLS.has(block.name)) ops.written.add(path);
      else if (EDIT_TOOLS.has(block.name)) ops.edited.add(path);
    }
  }
  return ops;
}

/** modified = edited ∪ written; read = read − modified; both sorted. */
export function fileListsOf(ops: FileOperations): FileLists {
  const modified = new Set([...ops.edited, ...ops.written]);
  return {
    readFiles: [...ops.read].filter((p) => !modified.has(p)).sort(),
    modifiedFiles: [...modified].sort(),
  };
}

/** The tagged blocks appended to a summary (empty lists are omitted). */
export function formatFileLists(lists: FileLists): string {
  let out = '';
  if (lists.readFiles.length > 0) out += `\n\n<read-files>\n${lists.readFiles.join('\n')}\n</read-files>`;
  if (lists.modifiedFiles.length > 0)
    out += `\n\n<modified-files>\n${lists.modifiedFiles.join('\n')}\n</modified-files>`;
  return out;
}

const FILE_LIST_BLOCK = /\n*<(read-files|modified-files)>\n[\s\S]*?\n?<\/\1>/g;

/** A summary without its file-list blocks (they are recomputed and re-appended). */
export function stripFileLists(summary: string): string {
  return summary.replace(FILE_LIST_BLOCK, '').trimEnd();
}
