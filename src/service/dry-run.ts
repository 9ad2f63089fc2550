// A dry run as data, shared by `orchestrate <recipe> --dry-run` and the MCP server's dry_run tool:
// the plan and estimate (recipe/dryRun), and the MCP part: which servers each agent gets and from
// which file, and with `listMcp` the tools each agent would see (each server started once, in the
// sandbox as in a run, listed, and closed again; the agent's mcp__ allow patterns and
// disallowed_tools applied). Without it nothing is started (servers are programs of their own).
import { displayPath, dryRun, type DryRunReport, type LoadedRecipe, type RecipeProblem } from '../recipe/index.js';
import { MCP_TOOL_PREFIX, matchesAny, mcpToolName, normalizePattern } from '../tools/mcp/names.js';
import type { DryRunMcp, DryRunMcpServer } from '../display/render-dry-run.js';
import { describeServer, type ServerRow } from './mcp-servers.js';
import { overlapWarning, writeOverlaps } from './write-overlaps.js';

export type { DryRunMcp, DryRunMcpServer } from '../display/render-dry-run.js';

/** Where paths are shown relative to, and the environment inputs and servers read. */
export interface ServiceEnv {
  cwd: string;
  env: Record<string, string | undefined>;
}

export type DryRunOutcome =
  | { ok: true; report: DryRunReport; mcp: DryRunMcp }
  | { ok: false; code: 'problems'; problems: readonly RecipeProblem[] };

/** The plan, the estimate and the MCP part of a loaded recipe; nothing runs but listed MCP servers. */
export async function dryRunRecipe(
  recipe: LoadedRecipe,
  where: ServiceEnv,
  opts: { listMcp: boolean },
): Promise<DryRunOutcome> {
  const result = dryRun(recipe, { env: where.env, displayFile: displayPath(recipe.file, where.cwd) });
  if (!result.ok) return { ok: false, code: 'problems', problems: result.problems };
  // Overlap prediction: instances whose writes: overlap, and what the run does with them.
  const overlaps = writeOverlaps(recipe, result.report.plan, where.env);
  if (overlaps.length) {
    result.report.overlaps = overlaps;
    result.report.warnings.push(...overlaps.map(overlapWarning));
  }
  const mcp = await dryRunMcp(recipe, where, opts.listMcp);
  return { ok: true, report: result.report, mcp };
}

/** Each agent's MCP servers; with `start`, started once each to list the tools agents would see. */
export async function dryRunMcp(recipe: LoadedRecipe, ctx: ServiceEnv, start: boolean): Promise<DryRunMcp> {
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
