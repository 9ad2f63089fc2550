// Tool names as agent files write them (Claude Code's Read, Grep, Glob, MultiEdit, SendMessage,
// TaskList ..., mcp__server__tool; pi's read, grep ...) mapped onto the tools an agent has here
// (mcp__ names are kept: they pick tools of the agent's MCP servers). Names are case-insensitive.
// Every tool name Claude Code has (CLAUDE_CODE_TOOLS: the current tools reference plus the names
// older agent files still carry) is known, so a tool with no counterpart here is a warning that
// says what is missing (an error with `strict_tools: true`), never "unknown tool"; only a name
// that is neither Claude Code's nor ours is unknown (a typo, or an extension's tool).
// Our names are plain strings here: the recipe layer does not import the worker's tools
// (test/recipe/agent-tools.test.ts checks the board's names against board-tool-names.ts).
import { getModel } from '../ai/models.js';

/** Built-in tools an agent gets when its file has no `tools:` line (Claude Code: every tool). */
export const ALL_FILE_AGENT_TOOLS = ['read', 'bash', 'edit', 'write', 'ls', 'grep', 'find'] as const;

/** What one Claude Code tool is here: our tools that do its job, or why there is none. */
export type ClaudeCodeTool =
  /** `note`: how it differs from Claude Code's tool (shown as a warning). */
  { ours: readonly string[]; note?: string } | { missing: string };

const SUBAGENTS = 'sub-agents are recipe tasks here (needs:, for_each:), not a tool';
const TODO_NOTE =
  "the agent's to-do items are items on the run's task board (task_create, task_update, task_list): every agent of the run sees them, and the agent sets owner to its own instance id to keep them apart";

/**
 * Every Claude Code tool name, lower case, in the order of its tools reference, then the names of
 * older releases. Source: code.claude.com/docs/en/tools-reference (the names permission rules,
 * agent files' tools: and hook matchers use).
 */
export const CLAUDE_CODE_TOOLS: Readonly<Record<string, ClaudeCodeTool>> = {
  agent: { missing: SUBAGENTS },
  artifact: { missing: 'no artifact publishing here; the run report (report.html) and result.json hold the results' },
  askuserquestion: { missing: 'agents run unattended here; nobody answers questions mid-run (use approve: on a task)' },
  bash: { ours: ['bash'] },
  croncreate: { missing: 'no scheduled prompts inside a session here' },
  crondelete: { missing: 'no scheduled prompts inside a session here' },
  cronlist: { missing: 'no scheduled prompts inside a session here' },
  edit: { ours: ['edit'] },
  enterplanmode: { missing: 'no plan mode here; use a planner/worker pair (pair:) for plan-then-code' },
  enterworktree: { missing: 'worktrees are a task setting here (workspace: worktree), not a tool' },
  exitplanmode: { missing: 'no plan mode here; use a planner/worker pair (pair:) for plan-then-code' },
  exitworktree: { missing: 'worktrees are a task setting here (workspace: worktree), not a tool' },
  glob: { ours: ['find'] },
  grep: { ours: ['grep'] },
  listmcpresourcestool: { missing: 'MCP resources are not offered here, only MCP tools (mcp__server__tool)' },
  lsp: { missing: 'no language-server tool here; run the type checker with bash or as verify:' },
  monitor: { missing: 'bash commands end with their call; no background monitor' },
  notebookedit: { missing: 'no notebook tool here; edit and write change .ipynb files as JSON' },
  powershell: { missing: 'commands run in bash (sh) here' },
  read: { ours: ['read'] },
  readmcpresourcetool: { missing: 'MCP resources are not offered here, only MCP tools (mcp__server__tool)' },
  sendmessage: { ours: ['send_message'] },
  skill: { missing: "skills are listed under the agent's skills: in the recipe" },
  taskcreate: { ours: ['task_create'] },
  taskget: { ours: ['task_get'] },
  tasklist: { ours: ['task_list'] },
  taskoutput: { missing: 'bash returns the whole output of a command; no background tasks' },
  taskstop: { missing: 'bash commands end with their call; no background tasks' },
  taskupdate: { ours: ['task_update'] },
  teamcreate: { missing: 'the recipe is the team here: its agents: and tasks: (the board and send_message are on)' },
  teamdelete: { missing: 'the recipe is the team here: its agents: and tasks: (the board and send_message are on)' },
  todowrite: { ours: ['task_create', 'task_update', 'task_list'], note: TODO_NOTE },
  toolsearch: { missing: 'every tool an agent has is listed to it from the start; nothing to search' },
  webfetch: { missing: 'no web tool here; fetch with bash (curl) if the agent has network: true' },
  websearch: { missing: 'no web search tool here' },
  write: { ours: ['write'] },
  // Names of older releases, still in many agent files.
  task: { missing: SUBAGENTS },
  bashoutput: { missing: 'bash returns the whole output of a command' },
  killshell: { missing: 'bash commands end with their call' },
  killbash: { missing: 'bash commands end with their call' },
  ls: { ours: ['ls'] },
  multiedit: { ours: ['edit'] },
  notebookread: { missing: 'read opens .ipynb files as JSON' },
  slashcommand: { missing: 'no slash commands here' },
  todoread: { ours: ['task_list', 'task_get'], note: TODO_NOTE },
  exit_plan_mode: { missing: 'no plan mode here; use a planner/worker pair (pair:) for plan-then-code' },
};

/** Claude Code's tool names as it writes them (for did-you-mean hints). */
export const CLAUDE_CODE_TOOL_NAMES: readonly string[] = [
  'Agent',
  'Artifact',
  'AskUserQuestion',
  'Bash',
  'CronCreate',
  'CronDelete',
  'CronList',
  'Edit',
  'EnterPlanMode',
  'EnterWorktree',
  'ExitPlanMode',
  'ExitWorktree',
  'Glob',
  'Grep',
  'ListMcpResourcesTool',
  'LSP',
  'Monitor',
  'NotebookEdit',
  'PowerShell',
  'Read',
  'ReadMcpResourceTool',
  'SendMessage',
  'Skill',
  'TaskCreate',
  'TaskGet',
  'TaskList',
  'TaskOutput',
  'TaskStop',
  'TaskUpdate',
  'TeamCreate',
  'TeamDelete',
  'TodoWrite',
  'ToolSearch',
  'WebFetch',
  'WebSearch',
  'Write',
  'Task',
  'BashOutput',
  'KillShell',
  'KillBash',
  'LS',
  'MultiEdit',
  'NotebookRead',
  'SlashCommand',
  'TodoRead',
  'exit_plan_mode',
];

/**
 * Whether an agent file's model can run here: any model on another provider (its server decides),
 * one the recipe declares under models:, or one this runtime knows. Otherwise the recipe's model
 * runs the agent (with a warning).
 */
export function fileModelKnown(model: string, provider: string, declared: readonly string[]): boolean {
  const key = model
    .trim()
    .toLowerCase()
    .replace(/^anthropic\//, '');
  if (provider !== 'anthropic') return true;
  if (
    declared.some(
      (id) =>
        id
          .trim()
          .toLowerCase()
          .replace(/^anthropic\//, '') === key,
    )
  )
    return true;
  return getModel(key) !== undefined;
}

export type ToolVerdict =
  /** Tools of this runtime (Glob is find, MultiEdit is edit, TaskList is task_list); `note` when part of it differs. */
  | { kind: 'builtin'; tools: string[]; note?: string }
  /** A Claude Code tool this runtime does not have. */
  | { kind: 'unavailable'; reason: string }
  /** A tool of an MCP server (`mcp__<server>__<tool>`, or a pattern such as mcp__github__*), kept as written. */
  | { kind: 'mcp'; tool: string }
  /** Neither Claude Code's nor ours (a typo, or an extension's tool). */
  | { kind: 'unknown' };

/** What an agent file's tool name means here; `builtins` are the tools this runtime has. */
export function classifyFileTool(written: string, builtins: readonly string[]): ToolVerdict {
  const trimmed = written.trim();
  // Claude Code permission rules: Bash(git diff:*) names the tool and a command filter.
  const rule = /^([A-Za-z_]+)\((.*)\)$/.exec(trimmed);
  const name = (rule ? rule[1]! : trimmed).toLowerCase();
  if (name.startsWith('mcp__')) return { kind: 'mcp', tool: trimmed };
  if (builtins.includes(name)) return withRule({ kind: 'builtin', tools: [name] }, rule);
  const cc = CLAUDE_CODE_TOOLS[name];
  if (cc === undefined) return { kind: 'unknown' };
  if ('missing' in cc) return { kind: 'unavailable', reason: cc.missing };
  const absent = cc.ours.filter((t) => !builtins.includes(t));
  if (absent.length > 0) return { kind: 'unavailable', reason: `this runtime has no ${absent.join(', ')} tool` };
  return withRule({ kind: 'builtin', tools: [...cc.ours], ...(cc.note ? { note: cc.note } : {}) }, rule);
}

function withRule(v: Extract<ToolVerdict, { kind: 'builtin' }>, rule: RegExpExecArray | null): ToolVerdict {
  if (!rule) return v;
  const limit = `the (${rule[2]}) limit is not applied`;
  const how = v.tools.includes('bash')
    ? "; limit bash commands with the agent's bash: { allow: [...] } in the recipe"
    : '';
  return { ...v, note: `${limit}${how}${v.note ? `; ${v.note}` : ''}` };
}

/**
 * The tools an agent file gives its agent: names mapped, unavailable ones dropped, unknown ones
 * dropped too (Claude Code ignores them; validation warns) unless `keepUnknown` (the agent has
 * extensions, which may define them).
 */
export function fileAgentTools(
  written: readonly string[] | undefined,
  builtins: readonly string[],
  keepUnknown = false,
): string[] {
  if (written === undefined) return [...ALL_FILE_AGENT_TOOLS];
  const out: string[] = [];
  for (const w of written) {
    const v = classifyFileTool(w, builtins);
    const tools =
      v.kind === 'builtin'
        ? v.tools
        : v.kind === 'mcp'
          ? [v.tool]
          : v.kind === 'unknown' && keepUnknown
            ? [w.trim()]
            : [];
    for (const t of tools) if (!out.includes(t)) out.push(t);
  }
  return out;
}

/**
 * An agent file's `disallowedTools:` as our names: mapped tools (Write, Edit, TaskCreate ...) and
 * mcp__ patterns; names with no counterpart here are dropped (the agent never has them).
 */
export function fileDisallowedTools(written: readonly string[], builtins: readonly string[]): string[] {
  const out: string[] = [];
  for (const w of written) {
    const v = classifyFileTool(w, builtins);
    // A rule (Bash(rm:*)) denies part of a tool: the tool stays (the rule is warned about).
    if (/\(.*\)$/.test(w.trim()) && v.kind === 'builtin') continue;
    const tools = v.kind === 'builtin' ? v.tools : v.kind === 'mcp' ? [v.tool] : v.kind === 'unknown' ? [w.trim()] : [];
    for (const t of tools) if (!out.includes(t)) out.push(t);
  }
  return out;
}
