// `orchestrate mcp list [recipe]`: each MCP server a recipe (or, without one, the .mcp.json of
// ~/.orchestrate and of the current folder) configures, which agents get it, whether it starts,
// and its tools under the names agents see (mcp__<server>__<tool>). Servers are started for real
// (in the sandbox, as in a run) and closed again; --no-start only lists the configuration.
// The current folder's .mcp.json is the repository's, as a run sees it (a cloned repository, or a
// file an agent wrote): like a run without `trust_repo_config`, it never gets a server started
// unconfined (`sandbox: none`) unless --trust-repo-config says so; such a server is listed with
// the reason instead.
import { resolve } from 'node:path';
import { loadRecipe } from '../../recipe/index.js';
import { orchestrateHome } from '../../runtime/create-agent-session.js';
import { readMcpJson, userMcpJsonPaths, type McpServerSpec } from '../../tools/mcp/config.js';
import { describeServer } from '../../service/mcp-servers.js';
import { EXIT, type CliContext } from '../cli-io.js';
import type { CliCommand } from '../command.js';
import { printProblems } from '../print-problems.js';

interface Listed {
  spec: McpServerSpec;
  agents: string[];
  /** From the current folder's .mcp.json without --trust-repo-config: never started unconfined. */
  untrusted?: boolean;
}

/** The servers to list: a recipe's (with the agents that get each), or the user's .mcp.json files. */
function serversToList(
  recipe: string | undefined,
  ctx: CliContext,
  trustRepoConfig: boolean,
): { specs: Map<string, Listed> } | { code: number } {
  const specs = new Map<string, Listed>();
  if (recipe !== undefined) {
    const loaded = loadRecipe(recipe, { cwd: ctx.cwd, env: ctx.env, allowMissingInputs: true });
    if (!loaded.ok) {
      printProblems(loaded.problems, ctx);
      return { code: EXIT.usage };
    }
    for (const agent of Object.values(loaded.recipe.agents)) {
      for (const spec of agent.mcpServers ?? []) {
        const row = specs.get(spec.name) ?? { spec, agents: [] };
        row.agents.push(agent.name);
        specs.set(spec.name, row);
      }
    }
    return { specs };
  }
  const [homeFile, folderFile] = userMcpJsonPaths(orchestrateHome(ctx.env), ctx.cwd);
  let broken = false;
  for (const file of [homeFile!, folderFile!]) {
    const read = readMcpJson(file);
    for (const p of read?.problems ?? []) {
      ctx.stderr(`orchestrate mcp list: ${p.message}\n`);
      broken = true;
    }
    // ~/.orchestrate/.mcp.json is the user's own; the folder's is trusted only when asked (or when it is the same file).
    const untrusted = file === folderFile && resolve(folderFile) !== resolve(homeFile!) && !trustRepoConfig;
    for (const spec of read?.specs ?? [])
      specs.set(spec.name, { spec, agents: [], ...(untrusted ? { untrusted } : {}) });
  }
  // A broken file is a mistake to fix, not "no servers configured" with exit 0.
  if (broken) {
    ctx.stderr(
      '  hint: each entry of mcpServers is {"command": ..., "args": [...], "env": {...}} (stdio) or {"type": "http" | "sse", "url": ..., "headers": {...}}; fix the file and list again\n',
    );
    return { code: EXIT.usage };
  }
  return { specs };
}

/** The transport and target an entry asks for, for a server whose configuration could not be resolved (an unset ${VAR}). */
function asWritten(spec: McpServerSpec): string {
  const e = spec.entry;
  if ('url' in e && typeof e.url === 'string') return `${'type' in e && e.type === 'sse' ? 'sse' : 'http'}  ${e.url}`;
  return `stdio  ${'command' in e ? [e.command, ...(e.args ?? [])].join(' ') : ''}`;
}

function firstLine(text: string | undefined, max = 70): string {
  const line = (text ?? '').split('\n')[0]!.trim();
  return line.length > max ? `${line.slice(0, max - 1)}…` : line;
}

export const mcpListCommand: CliCommand = {
  command: 'list [recipe]',
  describe:
    'List the MCP servers a recipe configures (or ~/.orchestrate/.mcp.json and ./.mcp.json), whether each starts, and its tools',
  builder: (y) =>
    y
      .positional('recipe', {
        type: 'string',
        describe: 'Recipe YAML file (default: the .mcp.json files of ~/.orchestrate and the current folder)',
      })
      .option('start', {
        type: 'boolean',
        default: true,
        describe: 'Start each server to list its tools (--no-start: configuration only)',
      })
      .option('json', { type: 'boolean', default: false, describe: 'Print the result as JSON on stdout' })
      .option('trust-repo-config', {
        type: 'boolean',
        default: false,
        describe:
          "Trust the current folder's .mcp.json like a task with trust_repo_config: true (start its sandbox: none servers unconfined)",
      }),
  run: async (args, ctx) => {
    const recipe = typeof args.recipe === 'string' ? resolve(ctx.cwd, args.recipe) : undefined;
    const found = serversToList(recipe, ctx, args['trust-repo-config'] === true);
    if ('code' in found) return found.code;
    const start = args.start !== false;
    const rows = await Promise.all(
      [...found.specs.values()].map(({ spec, agents, untrusted }) =>
        describeServer(spec, agents, start, ctx, untrusted === true),
      ),
    );
    if (args.json) {
      ctx.stdout(`${JSON.stringify({ servers: rows }, null, 2)}\n`);
    } else if (rows.length === 0) {
      ctx.stdout(
        recipe
          ? 'No agent of this recipe gets an MCP server (mcp_servers: in the recipe, or a .mcp.json next to it).\n'
          : 'No MCP servers configured (~/.orchestrate/.mcp.json, ./.mcp.json).\n',
      );
    } else {
      for (const r of rows) {
        const head = r.transport ? `${r.transport}  ${r.target ?? ''}` : asWritten(found.specs.get(r.name)!.spec);
        ctx.stdout(`${r.name}  ${head}\n`);
        ctx.stdout(`  defined in ${r.source}${r.agents.length ? `; agents: ${r.agents.join(', ')}` : ''}\n`);
        if (r.notStarted) ctx.stdout(`  not started: ${r.notStarted}\n`);
        else if (r.started === undefined) ctx.stdout('  not started (--no-start)\n');
        else if (!r.started) ctx.stdout(`  does not start: ${r.error}\n`);
        else {
          ctx.stdout(`  starts: ${r.tools!.length} tool${r.tools!.length === 1 ? '' : 's'}\n`);
          for (const t of r.tools!)
            ctx.stdout(`    ${t.name}${t.description ? `  ${firstLine(t.description)}` : ''}\n`);
        }
      }
    }
    return rows.some((r) => r.started === false) ? EXIT.taskFailed : EXIT.ok;
  },
};
