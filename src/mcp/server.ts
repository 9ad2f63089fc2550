// One MCP server of orchestrate: the SDK's McpServer with the tool table registered, and the
// instructions a client shows its model. stdio serves one of these; HTTP one per session.
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { ORCHESTRATE_TOOLS } from './tools.js';
import { registerTools, type ServerContext } from './tool-table.js';

const INSTRUCTIONS = `orchestrate runs recipes: YAML files that fan tasks out to many agents (a task DAG with for_each fan-outs, retries, budgets).
Typical use: validate_recipe, then dry_run (the plan and a cost estimate), then run_recipe. run_recipe returns the run id at once;
follow it with run_events (pass back next_cursor each time) or run_status; cancel or steer single instances while it runs;
show_instance reads one agent's conversation. With wait: true, run_recipe and resume return when the run ends and send
progress notifications meanwhile. A run is a process of its own: it keeps going if this server stops, and resume continues
an interrupted or failed run. Relative paths resolve against the server's working folder.`;

export function createOrchestrateServer(ctx: Omit<ServerContext, 'clientName'>, version: string): McpServer {
  const server = new McpServer(
    { name: 'orchestrate', title: 'orchestrate', version },
    { instructions: INSTRUCTIONS, capabilities: { tools: {} } },
  );
  registerTools(server, ORCHESTRATE_TOOLS, { ...ctx, clientName: () => server.server.getClientVersion()?.name });
  return server;
}
