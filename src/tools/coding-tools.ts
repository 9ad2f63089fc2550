// The built-in tool registry: one factory per name, and the standard sets.
import type { AnyAgentTool } from '../agent/types.js';
import { createBashTool, type BashToolOptions } from './bash.js';
import { createEditTool } from './edit.js';
import { createFindTool } from './find.js';
import { createGrepTool } from './grep.js';
import { createLsTool } from './ls.js';
import { createReadTool } from './read.js';
import { createWriteTool } from './write.js';
import type { WorkspaceOptions } from './workspace.js';

export const BUILTIN_TOOL_NAMES = ['read', 'bash', 'edit', 'write', 'grep', 'find', 'ls'] as const;
export type BuiltinToolName = (typeof BUILTIN_TOOL_NAMES)[number];

/** What a coding agent gets by default. */
export const DEFAULT_TOOL_NAMES: readonly BuiltinToolName[] = ['read', 'bash', 'edit', 'write'];
/** Exploration without side effects (scouts, reviewers, planners). */
export const READ_ONLY_TOOL_NAMES: readonly BuiltinToolName[] = ['read', 'grep', 'find', 'ls'];

export interface CodingToolsOptions extends WorkspaceOptions {
  /** Output limits shared by all tools. */
  maxLines?: number;
  maxBytes?: number;
  /** bash-only settings (policy, shell, prefix, env, temp dir). */
  bash?: Omit<BashToolOptions, keyof WorkspaceOptions | 'maxLines' | 'maxBytes'>;
}

export function isBuiltinToolName(name: string): name is BuiltinToolName {
  return (BUILTIN_TOOL_NAMES as readonly string[]).includes(name);
}

/** One built-in tool by name. Throws for an unknown name, listing the known ones. */
export function createTool(name: string, options: CodingToolsOptions): AnyAgentTool {
  const { maxLines, maxBytes, bash, ...workspace } = options;
  // What the sandbox hides from commands (the runs folder) is out of reach of the file tools too.
  if (workspace.hidden === undefined && bash?.sandbox?.hide) workspace.hidden = bash.sandbox.hide;
  // What it keeps read-only (a run's trusted inputs) the file tools do not write either.
  if (workspace.readOnly === undefined && bash?.sandbox?.readOnly) workspace.readOnly = bash.sandbox.readOnly;
  switch (name) {
    case 'read':
      return createReadTool({ ...workspace, maxLines, maxBytes });
    case 'bash':
      return createBashTool({ ...workspace, ...bash, maxLines, maxBytes });
    case 'edit':
      return createEditTool(workspace);
    case 'write':
      return createWriteTool(workspace);
    case 'grep':
      return createGrepTool({ ...workspace, maxBytes });
    case 'find':
      return createFindTool({ ...workspace, maxBytes });
    case 'ls':
      return createLsTool({ ...workspace, maxBytes });
    default:
      throw new Error(`Unknown tool "${name}". Built-in tools: ${BUILTIN_TOOL_NAMES.join(', ')}.`);
  }
}

/** The named built-in tools (default: read, bash, edit, write), all sharing one workspace. */
export function createCodingTools(
  options: CodingToolsOptions,
  names: readonly string[] = DEFAULT_TOOL_NAMES,
): AnyAgentTool[] {
  return names.map((name) => createTool(name, options));
}
