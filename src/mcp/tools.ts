// The tool table of `orchestrate mcp serve`, in the order clients list them. A new tool is a
// defineTool(...) in a file of this folder and one entry here.
import { changesetStatusTool, followUpTool } from './campaign-tools.js';
import { approveTool, cancelTool, rejectTool, steerTool } from './control-tools.js';
import { listRunsTool, runEventsTool, runStatusTool, showInstanceTool } from './inspect-tools.js';
import { dryRunTool, validateRecipeTool } from './recipe-tools.js';
import { resumeTool, runRecipeTool } from './run-tools.js';
import type { OrchestrateTool } from './tool-table.js';

export const ORCHESTRATE_TOOLS: readonly OrchestrateTool[] = [
  validateRecipeTool,
  dryRunTool,
  runRecipeTool,
  runStatusTool,
  runEventsTool,
  cancelTool,
  steerTool,
  approveTool,
  rejectTool,
  resumeTool,
  showInstanceTool,
  listRunsTool,
  changesetStatusTool,
  followUpTool,
];
