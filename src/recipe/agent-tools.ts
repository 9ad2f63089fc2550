// Tool names as agent files write them (Claude Code's Read, Grep, Glob, MultiEdit, WebFetch,
// mcp__server__tool ...; pi's read, grep ...) mapped onto the built-in tools (mcp__ names are kept:
// they pick tools of the agent's MCP servers). Names are
// case-insensitive. Claude Code tools with no counterpart here are dropped with a warning, or
// are errors when the agent sets `strict_tools: true`.

/** Built-in tools an agent gets when its file has no `tools:` line (Claude Code: every tool). */
export const ALL_FILE_AGENT_TOOLS = ['read', 'bash', 'edit', 'write', 'ls', 'grep', 'find'] as const;

/** Claude Code names (lower case) that map onto a built-in tool with another name. */
const RENAMED: Record<string, string> = { glob: 'find', multiedit: 'edit' };

/** Claude Code tools this runtime does not have, and what to say about each. */
const UNAVAILABLE: Record<string, string> = {
  task: 'sub-agents are recipe tasks here (needs:, for_each:), not a tool',
  agent: 'sub-agents are recipe tasks here (needs:, for_each:), not a tool',
  webfetch: 'no web tool here; fetch with bash (curl) if the agent has network: true',
  websearch: 'no web search tool here',
  notebookedit: 'no notebook tool here; edit and write change .ipynb files as JSON',
  notebookread: 'read opens .ipynb files as JSON',
  todowrite: 'no to-do tool here',
  todoread: 'no to-do tool here',
  exitplanmode: 'no plan mode here',
  bashoutput: 'bash returns the whole output of a command',
  killshell: 'bash commands end with their call',
  killbash: 'bash commands end with their call',
  slashcommand: 'no slash commands here',
  skill: "skills are listed under the agent's skills: in the recipe",
};

export type ToolVerdict =
  /** A built-in tool (Glob is find, MultiEdit is edit); `note` when part of it is not honoured. */
  | { kind: 'builtin'; tool: string; note?: string }
  /** A Claude Code tool this runtime does not have. */
  | { kind: 'unavailable'; reason: string }
  /** A tool of an MCP server (`mcp__<server>__<tool>`, or a pattern such as mcp__github__*), kept as written. */
  | { kind: 'mcp'; tool: string }
  /** Not a tool name known here (maybe an extension's tool). */
  | { kind: 'unknown' };

/** What an agent file's tool name means here. */
export function classifyFileTool(written: string, builtins: readonly string[]): ToolVerdict {
  const trimmed = written.trim();
  // Claude Code permission rules: Bash(git diff:*) names the tool and a command filter.
  const rule = /^([A-Za-z_]+)\((.*)\)$/.exec(trimmed);
  const name = (rule ? rule[1]! : trimmed).toLowerCase();
  if (name.startsWith('mcp__')) return { kind: 'mcp', tool: trimmed };
  const tool = RENAMED[name] ?? name;
  if (builtins.includes(tool)) {
    if (rule)
      return {
        kind: 'builtin',
        tool,
        note: `the (${rule[2]}) limit is not applied; limit bash commands with the agent's bash: { allow: [...] } in the recipe`,
      };
    return { kind: 'builtin', tool };
  }
  const reason = UNAVAILABLE[name];
  return reason !== undefined ? { kind: 'unavailable', reason } : { kind: 'unknown' };
}

/**
 * The tools an agent file gives its agent: built-in names mapped, unavailable ones dropped,
 * unknown ones kept as written (an extension may define them; validation reports the rest).
 */
export function fileAgentTools(written: readonly string[] | undefined, builtins: readonly string[]): string[] {
  if (written === undefined) return [...ALL_FILE_AGENT_TOOLS];
  const out: string[] = [];
  for (const w of written) {
    const v = classifyFileTool(w, builtins);
    const tool = v.kind === 'builtin' || v.kind === 'mcp' ? v.tool : v.kind === 'unknown' ? w.trim() : undefined;
    if (tool !== undefined && !out.includes(tool)) out.push(tool);
  }
  return out;
}
