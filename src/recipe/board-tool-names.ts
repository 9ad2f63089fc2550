// The names of the run-wide task board's tools (orchestrator/control/task-board.ts keeps the board, the
// worker's board-tools.ts gives them to agents). Here, in the recipe layer, so validation, agent
// files (Claude Code's TaskCreate/TaskList/TaskGet/TaskUpdate map onto them) and the worker all
// name them from one list.
export const BOARD_TOOL_NAMES = ['task_create', 'task_list', 'task_get', 'task_update'] as const;
export type BoardToolName = (typeof BOARD_TOOL_NAMES)[number];

export function isBoardTool(name: string): name is BoardToolName {
  return (BOARD_TOOL_NAMES as readonly string[]).includes(name);
}
