// Claude Code's tool names as agent files use them: the complete list is known (a missing tool is
// a warning naming what is missing, never "unknown"), the team tools map onto send_message and the
// task board under the names the board really has, and disallowedTools removes tools by either name.
import { describe, expect, it } from 'vitest';
import {
  CLAUDE_CODE_TOOL_NAMES,
  CLAUDE_CODE_TOOLS,
  classifyFileTool,
  fileAgentTools,
  fileDisallowedTools,
} from '../../src/recipe/agent-tools.js';
import { BOARD_TOOL_NAMES } from '../../src/recipe/board-tool-names.js';
import { BUILTIN_TOOLS } from '../../src/recipe/schema.js';

describe('Claude Code tool names', () => {
  it('knows every tool of the current tools reference and the older names agent files still carry', () => {
    for (const name of [
      'Agent',
      'Task',
      'Bash',
      'BashOutput',
      'Edit',
      'ExitPlanMode',
      'Glob',
      'Grep',
      'KillShell',
      'LS',
      'MultiEdit',
      'NotebookEdit',
      'NotebookRead',
      'Read',
      'SlashCommand',
      'TodoWrite',
      'TodoRead',
      'WebFetch',
      'WebSearch',
      'Write',
      'Skill',
      'TaskCreate',
      'TaskList',
      'TaskGet',
      'TaskUpdate',
      'TaskOutput',
      'TaskStop',
      'SendMessage',
      'TeamCreate',
      'TeamDelete',
      'AskUserQuestion',
      'EnterPlanMode',
      'EnterWorktree',
      'ExitWorktree',
      'LSP',
      'Monitor',
      'PowerShell',
      'ToolSearch',
      'CronCreate',
      'CronDelete',
      'CronList',
      'ListMcpResourcesTool',
      'ReadMcpResourceTool',
    ]) {
      expect(CLAUDE_CODE_TOOLS[name.toLowerCase()], name).toBeDefined();
      expect(classifyFileTool(name, BUILTIN_TOOLS).kind, name).not.toBe('unknown');
    }
    expect(Object.keys(CLAUDE_CODE_TOOLS).sort()).toEqual(CLAUDE_CODE_TOOL_NAMES.map((n) => n.toLowerCase()).sort());
  });

  it("every tool a Claude Code name maps onto exists here; the team tools are the board's own names", () => {
    for (const [name, t] of Object.entries(CLAUDE_CODE_TOOLS))
      if ('ours' in t) for (const ours of t.ours) expect(BUILTIN_TOOLS as readonly string[], name).toContain(ours);
    const board = (n: string) => (CLAUDE_CODE_TOOLS[n] as { ours: string[] }).ours;
    expect([...board('taskcreate'), ...board('tasklist'), ...board('taskget'), ...board('taskupdate')]).toEqual([
      ...BOARD_TOOL_NAMES,
    ]);
    for (const t of [...board('todowrite'), ...board('todoread')])
      expect(BOARD_TOOL_NAMES as readonly string[]).toContain(t);
  });

  it("maps a team file's tools onto ours; a missing tool says what is missing; a name of neither is unknown", () => {
    expect(
      fileAgentTools(
        ['Read', 'Glob', 'Grep', 'Bash', 'TaskList', 'TaskGet', 'TaskUpdate', 'SendMessage'],
        BUILTIN_TOOLS,
      ),
    ).toEqual(['read', 'find', 'grep', 'bash', 'task_list', 'task_get', 'task_update', 'send_message']);
    expect(classifyFileTool('TodoWrite', BUILTIN_TOOLS)).toMatchObject({
      kind: 'builtin',
      tools: ['task_create', 'task_update', 'task_list'],
    });
    expect(classifyFileTool('WebFetch', BUILTIN_TOOLS)).toEqual({
      kind: 'unavailable',
      reason: 'no web tool here; fetch with bash (curl) if the agent has network: true',
    });
    expect(classifyFileTool('Agent(worker, researcher)', BUILTIN_TOOLS).kind).toBe('unavailable');
    // Without the board's tools (a runtime that lacks them) the board names say so.
    expect(classifyFileTool('TaskCreate', ['read', 'bash'])).toEqual({
      kind: 'unavailable',
      reason: 'this runtime has no task_create tool',
    });
    expect(classifyFileTool('Serach', BUILTIN_TOOLS)).toEqual({ kind: 'unknown' });
    // Unknown names are dropped (Claude Code ignores them) unless extensions may define them.
    expect(fileAgentTools(['Read', 'chrome-mcp'], BUILTIN_TOOLS)).toEqual(['read']);
    expect(fileAgentTools(['Read', 'deploy'], BUILTIN_TOOLS, true)).toEqual(['read', 'deploy']);
  });

  it('disallowedTools names tools either way; a rule that denies part of a tool removes nothing', () => {
    expect(fileDisallowedTools(['Write', 'Edit', 'TaskCreate', 'mcp__github__delete_*'], BUILTIN_TOOLS)).toEqual([
      'write',
      'edit',
      'task_create',
      'mcp__github__delete_*',
    ]);
    expect(fileDisallowedTools(['Bash(rm:*)', 'WebFetch'], BUILTIN_TOOLS)).toEqual([]);
  });
});
