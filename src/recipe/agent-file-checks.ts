// Checks of an agent file (Claude Code or pi format) named by a recipe's agent: its tools and its
// model, every problem in one pass, reported at the agent file's own line and column.
import { listModels } from '../ai/models.js';
import type { AgentFile } from './agent-file.js';
import { ALL_FILE_AGENT_TOOLS, CLAUDE_CODE_TOOL_NAMES, classifyFileTool, fileModelKnown } from './agent-tools.js';
import type { PendingProblem } from './problems.js';
import { BUILTIN_TOOLS } from './schema.js';
import { suggestionHint } from './suggest.js';
import { isRecord, stringOf } from '../util/unknown-value.js';

type Path = (string | number)[];
type Obj = Record<string, unknown>;

/**
 * What an agent file (Claude Code or pi format) means for its agent, every problem in one pass:
 * tool names (case-insensitive; Glob is find; Claude Code tools missing here are warnings unless
 * strict_tools), a missing tools: line (every tool, with a note), and its model.
 */
export function checkAgentFile(
  name: string,
  a: Obj,
  file: AgentFile,
  shownFile: string,
  raw: Obj,
  checkTool: (tool: string, path: Path | undefined, at?: PendingProblem['at']) => void,
  problem: (p: PendingProblem) => void,
): void {
  const base: Path = ['agents', name];
  const at = (p: { line: number; col: number }) => ({ file: shownFile, line: p.line, col: p.col });
  if (a.tools === undefined) {
    const strict = a.strict_tools === true || file.strictTools === true;
    if (file.tools === undefined) {
      problem({
        code: 'agent_file',
        severity: 'warning',
        path: base,
        at: at({ line: 1, col: 1 }),
        message: `agent file of "${name}" has no tools: line, so the agent gets every built-in tool (${ALL_FILE_AGENT_TOOLS.join(', ')}), as in Claude Code`,
        hint: 'to limit it, add a line such as tools: Read, Grep, Glob to the frontmatter, or tools: [...] to the agent in the recipe',
      });
    }
    for (const t of file.toolPositions) {
      const v = classifyFileTool(t.name, BUILTIN_TOOLS);
      /** A tool of the file that is left out, with a warning (strict_tools makes it an error). */
      const ignored = (message: string, hint: string): void =>
        problem({ code: 'unknown_tool', severity: 'warning', path: base, at: at(t), message, hint });
      if (v.kind === 'mcp') continue; // checked with the agent's MCP servers (mcp-servers.ts)
      if (v.kind === 'unknown') {
        // Claude Code ignores a name it has no tool for (an MCP server's, another agent's): so
        // do we, with a word; strict_tools (or an extension that may define it) checks it.
        const extensions = Array.isArray(a.extensions) && a.extensions.length > 0;
        if (strict || extensions) checkTool(t.name, undefined, at(t));
        else
          ignored(
            `agent "${name}" tool "${t.name}" is not a tool here or in Claude Code and is ignored`,
            `${suggestionHint(t.name, [...BUILTIN_TOOLS, ...CLAUDE_CODE_TOOL_NAMES], 'tools')}; or set strict_tools: true to make this an error`,
          );
      } else if (v.kind === 'builtin' && v.note)
        problem({
          code: 'agent_file',
          severity: 'warning',
          path: base,
          at: at(t),
          message: `agent "${name}" tool ${t.name}: ${v.note}`,
        });
      else if (v.kind === 'unavailable') {
        if (strict)
          problem({
            code: 'unknown_tool',
            path: base,
            at: at(t),
            message: `agent "${name}" uses tool "${t.name}", which is not available here (${v.reason})`,
            hint: 'remove it from the agent file, or drop strict_tools so it is ignored with a warning',
          });
        else
          ignored(
            `agent "${name}" tool "${t.name}" is not available here and is ignored (${v.reason})`,
            'remove it from tools:, or set strict_tools: true to make this an error',
          );
      }
    }
  }
  // The file's model is used unless the recipe gives the agent one; `inherit` means the recipe's.
  const model = file.model?.trim();
  if (a.model !== undefined || model === undefined || model === '' || model.toLowerCase() === 'inherit') return;
  const provider = stringOf(a.provider) ?? stringOf(raw.provider) ?? 'anthropic';
  if (fileModelKnown(model, provider, isRecord(raw.models) ? Object.keys(raw.models) : [])) return;
  // A collection's file may name a model this runtime does not know: the recipe's model runs it.
  problem({
    code: 'unknown_model',
    severity: 'warning',
    path: base,
    at: at(file.modelPosition ?? { line: 1, col: 1 }),
    message: `agent file of "${name}" names unknown model "${model}"; the agent uses the recipe's model instead`,
    hint: `${suggestionHint(
      model,
      listModels().map((m) => m.id),
      'models',
    )}; or write model: inherit (the recipe's model), or an alias: sonnet, opus, haiku`,
  });
}
