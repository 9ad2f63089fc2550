// `orchestrate agent --mcp-config FILE` (repeatable, like Claude Code's flag): MCP servers for a
// single agent from files in the .mcp.json shape ({"mcpServers": {name: {command, args, env} |
// {type: "http" | "sse", url, headers}}}, plus orchestrate's keys). Only the files named are
// read; a missing file, bad JSON, a bad entry or an unset ${VAR} is a usage error naming the file
// and the server, before the agent starts. A later file's server replaces an earlier one of the
// same name. The expanded values that came from the environment are kept out of the session.
import { resolve } from 'node:path';
import { AgentSessionConfigError, type CreateAgentSessionOptions } from '../runtime/create-agent-session.js';
import { readMcpJson, resolveMcpServer, type McpServerConfig } from '../tools/mcp/config.js';

export interface AgentMcpConfig {
  mcp: NonNullable<CreateAgentSessionOptions['mcp']>;
  secrets: { name: string; value: string }[];
}

/** The servers of `files` (resolved against `cwd`), expanded against `env`; undefined without files. */
export function mcpConfigFromFiles(
  files: readonly string[],
  cwd: string,
  env: Readonly<Record<string, string | undefined>>,
): AgentMcpConfig | undefined {
  if (files.length === 0) return undefined;
  const byName = new Map<string, McpServerConfig>();
  const secrets: { name: string; value: string }[] = [];
  for (const given of files) {
    const file = resolve(cwd, given);
    const read = readMcpJson(file);
    if (!read)
      throw new AgentSessionConfigError(
        `--mcp-config ${given}: no such file. Give a JSON file like {"mcpServers": {"name": {"command": "...", "args": []}}}.`,
      );
    if (read.problems.length > 0)
      throw new AgentSessionConfigError(`--mcp-config ${given}: ${read.problems.map((p) => p.message).join('; ')}`);
    if (read.specs.length === 0)
      throw new AgentSessionConfigError(`--mcp-config ${given}: no servers under "mcpServers".`);
    for (const spec of read.specs) {
      const r = resolveMcpServer(spec, env);
      if (!r.config) {
        const p = r.problems[0]!;
        throw new AgentSessionConfigError(
          `--mcp-config ${given}: mcpServers.${spec.name}.${p.path.join('.')}: ${p.message}${p.hint ? ` (${p.hint})` : ''}`,
        );
      }
      byName.set(spec.name, r.config);
      secrets.push(...r.secrets);
    }
  }
  return { mcp: { servers: [...byName.values()], baseEnv: env }, secrets };
}
