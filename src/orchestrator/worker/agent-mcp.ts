// The MCP servers of one instance's agent, as the thread that runs it starts them: ${VAR}s
// expand here, with this machine's environment and the task's env (a distributed worker uses its
// own), and `scope: run` servers are shared by the agents of the run. With `trust_repo_config`
// the .mcp.json in the instance's folder (the repository's) adds the servers the agent takes from
// it; the user's side wins on a name both define. The repository's file is foreign: its problems
// are notices, and a server it lacks is left out (`absent`: the agent's mcp__ tools naming it are
// dropped) rather than failing the instance.
import { join } from 'node:path';
import { MessagePort } from 'node:worker_threads';
import type { CreateAgentSessionOptions } from '../../runtime/create-agent-session.js';
import { readMcpJson, resolveMcpServer, type McpServerConfig, type McpServerSpec } from '../../tools/mcp/config.js';
import { serverOfToolName } from '../../tools/mcp/names.js';
import type { InstanceTask } from '../execution/instance-task.js';

export interface AgentMcp {
  options?: CreateAgentSessionOptions['mcp'];
  /** Expanded values that came from the environment: kept out of the session file. */
  secrets: { name: string; value: string }[];
  /** Told to the run as notices (problems of a trusted repository's .mcp.json). */
  notices: string[];
  /** Servers the agent asked the repository for that it does not define (or that cannot start). */
  absent: Set<string>;
}

/** Whether an agent's tool entry names a server that is absent (its mcp__ tools are dropped). */
export function namesAbsentServer(tool: string, mcp: AgentMcp): boolean {
  const server = serverOfToolName(tool.trim());
  return server !== undefined && mcp.absent.has(server);
}

/**
 * The MCP options of an instance's agent, or the error that keeps it from starting.
 * `onUnavailable` hears of a server (not `optional`) that cannot start or stopped for good.
 */
export function mcpOptionsFor(
  task: InstanceTask,
  onUnavailable?: (server: string, reason: string) => void,
): AgentMcp | { error: string } {
  const specs: McpServerSpec[] = [...(task.agent.mcpServers ?? [])];
  const notices: string[] = [];
  const absent = new Set<string>();
  const pick = task.agent.mcpRepoPick;
  const fromRepo = new Set<string>();
  if (task.trustRepoConfig && pick) {
    const file = join(task.cwd, '.mcp.json');
    const read = readMcpJson(file);
    for (const p of read?.problems ?? []) notices.push(`warning: ${p.message} (trust_repo_config)`);
    const offered = new Map((read?.specs ?? []).map((s) => [s.name, s]));
    for (const name of pick === 'all' ? [...offered.keys()] : pick) {
      if (specs.some((s) => s.name === name)) continue;
      const spec = offered.get(name);
      if (!spec) {
        absent.add(name);
        notices.push(`warning: MCP server "${name}" is not defined in ${file}; the agent runs without its tools`);
        continue;
      }
      specs.push(spec);
      fromRepo.add(name);
    }
  } else if (Array.isArray(pick)) for (const name of pick) absent.add(name);
  if (specs.length === 0) return { secrets: [], notices, absent };
  const env = { ...process.env, ...task.env };
  const servers: McpServerConfig[] = [];
  const secrets: { name: string; value: string }[] = [];
  for (const spec of specs) {
    const r = resolveMcpServer(spec, env);
    if (!r.config) {
      const why = r.problems.map((p) => p.message).join('; ');
      if (!fromRepo.has(spec.name)) return { error: why };
      absent.add(spec.name);
      notices.push(`warning: ${why} (in ${spec.source}); the agent runs without its tools`);
      continue;
    }
    servers.push(r.config);
    secrets.push(...r.secrets);
  }
  if (servers.length === 0) return { secrets, notices, absent };
  return {
    options: {
      servers,
      runId: task.runId,
      // Run-scoped servers live in the coordinator's thread (one per run) when the launch brought a port.
      ...(task.mcpPort instanceof MessagePort ? { runHostPort: task.mcpPort } : {}),
      ...(task.sandbox?.hide ? { hide: task.sandbox.hide } : {}),
      ...(task.agent.disallowedTools ? { deny: task.agent.disallowedTools } : {}),
      // The reason quotes the server's stderr, which may echo a token its config gave it.
      ...(onUnavailable
        ? { onUnavailable: (server: string, reason: string) => onUnavailable(server, withoutSecrets(reason, secrets)) }
        : {}),
    },
    secrets,
    notices,
    absent,
  };
}

/** `text` with each secret value replaced by [REDACTED:<name>] (the session file's marker). */
function withoutSecrets(text: string, secrets: readonly { name: string; value: string }[]): string {
  let out = text;
  for (const s of secrets) out = out.split(s.value).join(`[REDACTED:${s.name}]`);
  return out;
}
