// The MCP part of a dry run: which servers each agent gets and from which file, and with
// `--list-mcp` the tools each agent would see (each server started once, in the sandbox as in a
// run, listed, and closed again; the agent's mcp__ allow patterns and disallowed_tools applied).
// Without the flag nothing is started (servers are programs of their own) and the report says so.
import type { DryRunReport, LoadedRecipe } from '../recipe/index.js';
import { displayPath } from '../recipe/index.js';
import { MCP_TOOL_PREFIX, matchesAny, mcpToolName, normalizePattern } from '../tools/mcp/names.js';
import type { CliContext } from './cli-io.js';
import { describeServer, type ServerRow } from './commands/mcp-list.js';

/** One server of one agent, as the dry run reports it. */
export interface DryRunMcpServer {
  server: string;
  /** The file that defines it (the recipe, a .mcp.json, an agent file). */
  source: string;
  /** With --list-mcp: whether it started, and the tools this agent would get from it. */
  started?: boolean;
  tools?: string[];
  error?: string;
}

export interface DryRunMcp {
  agents: { name: string; servers: DryRunMcpServer[]; fromRepositories?: string[] | 'all' }[];
  /** Whether servers were started to list tools (--list-mcp). */
  listed: boolean;
}

/** Each agent's MCP servers; with `start`, started once each to list the tools agents would see. */
export async function dryRunMcp(
  recipe: LoadedRecipe,
  ctx: Pick<CliContext, 'cwd' | 'env'>,
  start: boolean,
): Promise<DryRunMcp> {
  const rows = new Map<string, Promise<ServerRow>>();
  const agents: DryRunMcp['agents'] = [];
  for (const a of Object.values(recipe.agents)) {
    const specs = a.mcpServers ?? [];
    if (specs.length === 0 && !a.mcpRepoPick) continue;
    const allow = a.tools.filter((t) => t.startsWith(MCP_TOOL_PREFIX)).map(normalizePattern);
    const deny = (a.disallowedTools ?? []).map(normalizePattern);
    const taken = new Set<string>();
    const servers: DryRunMcpServer[] = [];
    for (const spec of specs) {
      const entry: DryRunMcpServer = { server: spec.name, source: displayPath(spec.source, ctx.cwd) };
      if (start) {
        // A server several agents share (same definition) starts once.
        const key = `${spec.source}\0${spec.name}`;
        let row = rows.get(key);
        if (!row) {
          row = describeServer(spec, [], true, ctx);
          rows.set(key, row);
        }
        const r = await row;
        entry.started = r.started === true;
        if (r.error) entry.error = r.error;
        if (r.tools) {
          entry.tools = [];
          for (const t of r.tools) {
            const written = `${MCP_TOOL_PREFIX}${spec.name}__${t.tool}`;
            const name = mcpToolName(spec.name, t.tool, taken);
            const names = [name, written];
            if ((allow.length > 0 && !matchesAny(allow, names)) || matchesAny(deny, names)) {
              taken.delete(name);
              continue;
            }
            entry.tools.push(name);
          }
        }
      }
      servers.push(entry);
    }
    agents.push({ name: a.name, servers, ...(a.mcpRepoPick ? { fromRepositories: a.mcpRepoPick } : {}) });
  }
  return { agents, listed: start };
}

/** The dry run's MCP lines (printed under the recipe's header). */
export function renderDryRunMcp(mcp: DryRunMcp, report: DryRunReport): string[] {
  const lines: string[] = [];
  for (const a of mcp.agents) {
    const own = a.servers.map((s) => `${s.server} (${s.source})`);
    const repo =
      a.fromRepositories === undefined
        ? []
        : [
            a.fromRepositories === 'all'
              ? "every server of its repository's .mcp.json"
              : `${a.fromRepositories.join(', ')} from its repository's .mcp.json`,
          ];
    lines.push(`  MCP: agent ${a.name} gets ${[...own, ...repo].join(', ')}`);
    if (!mcp.listed) continue;
    for (const s of a.servers) {
      if (!s.started) lines.push(`    ${s.server}: does not start: ${s.error ?? 'unknown reason'}`);
      else lines.push(`    ${s.server}: ${s.tools!.length ? s.tools!.join(', ') : '(no tools this agent may use)'}`);
    }
  }
  if (mcp.agents.length === 0) return lines;
  if (!mcp.listed)
    lines.push(
      `  MCP servers were not started, so their tools are not listed: --list-mcp starts them (or orchestrate mcp list ${report.recipe.file})`,
    );
  if (mcp.agents.some((a) => a.fromRepositories !== undefined))
    lines.push("  (a repository's .mcp.json is read where its instance runs: trust_repo_config)");
  return lines;
}
