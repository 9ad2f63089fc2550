// One MCP server as data: its configuration (transport, target) and, when asked to start it, whether
// it starts and its tools under the names agents see. `orchestrate mcp list` prints these rows and
// the dry run (service/dry-run.ts) filters them per agent.
import { displayPath } from '../recipe/index.js';
import { resolveMcpServer, type McpServerSpec } from '../tools/mcp/config.js';
import { mcpToolName } from '../tools/mcp/names.js';

export interface ServerRow {
  name: string;
  source: string;
  transport?: string;
  target?: string;
  agents: string[];
  started?: boolean;
  error?: string;
  /** Why it was not started although listing starts servers (an unconfined server of an untrusted file). */
  notStarted?: string;
  tools?: { name: string; tool: string; description?: string }[];
}

/** One server's row: its configuration, and with `start` whether it starts and its tools. */
export async function describeServer(
  spec: McpServerSpec,
  agents: string[],
  start: boolean,
  ctx: { cwd: string; env: Record<string, string | undefined> },
  untrusted = false,
): Promise<ServerRow> {
  const row: ServerRow = { name: spec.name, source: displayPath(spec.source, ctx.cwd), agents };
  const resolved = resolveMcpServer(spec, ctx.env);
  if (!resolved.config) {
    row.started = false;
    row.error = resolved.problems.map((p) => p.message).join('; ');
    return row;
  }
  const c = resolved.config;
  row.transport = c.transport;
  // The URL without its query (tokens sometimes travel there); commands as written.
  row.target = c.transport === 'stdio' ? [c.command, ...c.args].join(' ') : c.url!.replace(/\?.*$/, '');
  if (!start) return row;
  if (untrusted && c.transport === 'stdio' && c.sandbox === 'none') {
    row.notStarted = `${row.source} is the current folder's (a cloned repository's, or one an agent wrote) and this server would run unconfined (sandbox: none); pass --trust-repo-config to start it, or define it in ~/.orchestrate/.mcp.json or a recipe`;
    return row;
  }
  const notes: string[] = [];
  // Loaded here: the MCP SDK takes a second or more to import, which other commands never pay.
  const { McpConnection } = await import('../tools/mcp/connection.js');
  const connection = new McpConnection(c, { cwd: ctx.cwd, notify: (m) => notes.push(m), baseEnv: ctx.env });
  try {
    await connection.start();
    row.started = true;
    const taken = new Set<string>();
    row.tools = connection.tools.map((t) => ({
      name: mcpToolName(c.name, t.name, taken),
      tool: t.name,
      ...(t.description ? { description: t.description } : {}),
    }));
  } catch (err) {
    row.started = false;
    row.error = err instanceof Error ? err.message : String(err);
  } finally {
    await connection.close();
  }
  return row;
}
