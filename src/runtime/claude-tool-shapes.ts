// What command hooks see of a tool call: Claude Code's tool names and input shapes, because hooks
// are written from Claude Code's documentation (`if tool_name != "Bash": exit 0`, a guard on
// `.tool_input.file_path`). A hook that saw our own names (`bash`, `path`, `edits[].oldText`)
// would pass every call it means to stop. The product's tools map as follows (paths absolute,
// resolved against the session's folder, as Claude Code sends them):
//   bash  -> Bash  {command, timeout (ms)}           read -> Read {file_path, offset, limit}
//   write -> Write {file_path, content}              find -> Glob {pattern, path}
//   grep  -> Grep  {pattern, path, glob, output_mode, -n, -i, -C, head_limit}
//   ls    -> LS    {path}
//   edit  -> Edit  {file_path, old_string, new_string, replace_all: false}, once per replacement:
//            an edit call with several replacements is shown as several Edit calls (Claude Code
//            dropped MultiEdit, so guards written today check Edit only; each replacement is
//            checked, and one block stops the whole call).
// MCP tools keep their names (mcp__server__tool, as in Claude Code) and inputs; other tools of
// this product keep theirs. A hook's updatedInput is mapped back onto the product's arguments.
import { resolve } from 'node:path';
import { expandPath } from '../tools/workspace.js';
import { stringOf } from '../util/unknown-value.js';

/** Our tool names and the Claude Code names a matcher may use for the same tool. */
export const CLAUDE_CODE_NAMES: Readonly<Record<string, readonly string[]>> = {
  bash: ['Bash'],
  // MultiEdit: matchers written before Claude Code folded it into Edit still select the edit tool.
  edit: ['Edit', 'MultiEdit'],
  write: ['Write'],
  read: ['Read'],
  find: ['Glob'],
  grep: ['Grep'],
  ls: ['LS'],
};

/** One tool call as a Claude Code hook receives it. */
export interface ClaudeToolCall {
  tool_name: string;
  tool_input: Record<string, unknown>;
}

type Args = Record<string, unknown>;
const record = (v: unknown): Args => (typeof v === 'object' && v !== null && !Array.isArray(v) ? (v as Args) : {});
const defined = (o: Args): Args => Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined));
const num = (v: unknown): number | undefined => (typeof v === 'number' && Number.isFinite(v) ? v : undefined);
const escapeRegex = (s: string): string => s.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&');

interface EditItem {
  oldText: string;
  newText: string;
}

/**
 * The Claude Code calls the product's call `toolName(args)` amounts to: one, except an edit with
 * several replacements (one Edit each). `cwd` resolves relative paths.
 */
export function claudeToolCalls(toolName: string, args: unknown, cwd: string): ClaudeToolCall[] {
  const a = record(args);
  const abs = (p: unknown): string | undefined => (typeof p === 'string' ? resolve(cwd, expandPath(p)) : undefined);
  const one = (tool_name: string, tool_input: Args): ClaudeToolCall[] => [
    { tool_name, tool_input: defined(tool_input) },
  ];
  switch (toolName) {
    case 'bash': {
      const timeout = num(a.timeout);
      return one('Bash', { command: a.command, timeout: timeout !== undefined ? timeout * 1000 : undefined });
    }
    case 'edit': {
      const edits = Array.isArray(a.edits) ? (a.edits as EditItem[]) : [];
      return edits.map((e) => ({
        tool_name: 'Edit',
        tool_input: { file_path: abs(a.path), old_string: e.oldText, new_string: e.newText, replace_all: false },
      }));
    }
    case 'write':
      return one('Write', { file_path: abs(a.path), content: a.content });
    case 'read':
      return one('Read', { file_path: abs(a.path), offset: a.offset, limit: a.limit });
    case 'find':
      return one('Glob', { pattern: a.pattern, path: abs(a.path) });
    case 'grep': {
      const pattern = stringOf(a.pattern);
      return one('Grep', {
        pattern: pattern !== undefined && a.literal === true ? escapeRegex(pattern) : pattern,
        path: abs(a.path),
        glob: a.glob,
        output_mode: 'content',
        '-n': true,
        '-i': a.ignoreCase,
        '-C': a.context,
        head_limit: a.limit,
      });
    }
    case 'ls':
      return one('LS', { path: abs(a.path ?? '.') });
    default:
      return one(toolName, { ...a });
  }
}

/**
 * The product's arguments after a hook answered `updatedInput` for call `index` of
 * claudeToolCalls(toolName, args, cwd) (`sent`). Fields the hook left out keep their value; a path
 * the hook did not change stays as the model wrote it.
 */
export function productArgs(
  toolName: string,
  args: unknown,
  index: number,
  sent: ClaudeToolCall,
  updatedInput: Record<string, unknown>,
): unknown {
  const a = record(args);
  const m: Args = { ...sent.tool_input, ...updatedInput };
  const changed = (key: string): boolean => m[key] !== sent.tool_input[key];
  const pathOf = (key: string): unknown => (changed(key) ? m[key] : a.path);
  switch (toolName) {
    case 'bash': {
      const timeout = num(m.timeout);
      return defined({
        ...a,
        command: m.command,
        timeout: changed('timeout') ? (timeout !== undefined ? timeout / 1000 : undefined) : a.timeout,
      });
    }
    case 'edit': {
      const edits = Array.isArray(a.edits) ? [...(a.edits as EditItem[])] : [];
      edits[index] = { oldText: String(m.old_string ?? ''), newText: String(m.new_string ?? '') };
      return { ...a, path: pathOf('file_path'), edits };
    }
    case 'write':
      return { ...a, path: pathOf('file_path'), content: m.content };
    case 'read':
      return defined({ ...a, path: pathOf('file_path'), offset: m.offset, limit: m.limit });
    case 'find':
      return defined({ ...a, pattern: m.pattern, path: pathOf('path') });
    case 'grep': {
      const patternChanged = changed('pattern');
      return defined({
        ...a,
        // A rewritten pattern is a regular expression, as Claude Code's Grep takes it.
        pattern: patternChanged ? m.pattern : a.pattern,
        literal: patternChanged ? undefined : a.literal,
        path: pathOf('path'),
        glob: m.glob,
        ignoreCase: m['-i'],
        context: m['-C'],
        limit: m.head_limit,
      });
    }
    case 'ls':
      return defined({ ...a, path: pathOf('path') });
    default:
      return m;
  }
}

/** The absolute file a file tool's call is about (PostToolUse's tool_response.filePath), if any. */
export function claudeFilePath(call: ClaudeToolCall): string | undefined {
  return stringOf(call.tool_input.file_path);
}
