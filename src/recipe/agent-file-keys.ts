// What an agent file's Claude Code keys beyond name/description/tools/model mean for its agent,
// one by one, as warnings at the file's own line and column: keys with no counterpart here
// (skills, permissionMode, memory, ...: AgentFile.notes), hook events and types that are not run,
// and disallowedTools entries that remove nothing. maxTurns, disallowedTools, hooks and
// isolation: worktree are honoured (normalize.ts); they need no word unless the recipe overrides them.
import type { AgentFile } from './agent-file.js';
import { classifyFileTool } from './agent-tools.js';
import type { PendingProblem } from './problems.js';
import { BUILTIN_TOOLS } from './schema.js';

type Obj = Record<string, unknown>;

export function checkAgentFileKeys(
  name: string,
  a: Obj,
  file: AgentFile,
  shownFile: string,
  problem: (p: PendingProblem) => void,
): void {
  const path = ['agents', name];
  const warn = (at: { line: number; col: number }, message: string, hint?: string) =>
    problem({
      code: 'agent_file',
      severity: 'warning',
      path,
      at: { file: shownFile, line: at.line, col: at.col },
      message: `agent "${name}": ${message}`,
      ...(hint ? { hint } : {}),
    });
  for (const n of file.notes) warn(n, n.message, n.hint);
  if (file.disallowedTools && a.tools !== undefined && file.disallowedTools.length > 0) {
    const first = file.disallowedTools[0]!;
    warn(
      first,
      "disallowedTools: of the agent file is not applied: the recipe gives this agent's tools: itself",
      "add the tools to leave out to the agent's disallowed_tools: in the recipe",
    );
    return;
  }
  for (const d of file.disallowedTools ?? []) {
    const rule = /^([A-Za-z_]+)\((.*)\)$/.exec(d.name.trim());
    const v = classifyFileTool(d.name, BUILTIN_TOOLS);
    if (rule && v.kind === 'builtin')
      warn(
        d,
        `disallowedTools ${d.name}: a rule that denies part of a tool is not applied; the ${v.tools.join(', ')} tool stays`,
        v.tools.includes('bash')
          ? "refuse commands with the agent's bash: { deny: [...] } in the recipe"
          : 'list the whole tool to take it away',
      );
    else if (v.kind === 'unknown')
      warn(d, `disallowedTools names "${d.name}", which is not a tool here or in Claude Code: nothing is removed`);
  }
}
