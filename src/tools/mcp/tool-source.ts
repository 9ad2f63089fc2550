// The MCP tools of one agent: its servers (its own, or for `scope: run` the run's: through the
// run's host in the coordinator's thread when the agent's launch brought a port to it
// (run-host.ts), else shared with the run's other agents in this thread), the allow and deny
// patterns that pick tools, and the exposed
// names. `start` runs when the agent starts (eager servers) and `prepareTurn` before every model
// call (lazy servers on the first, re-listing after list_changed or a restart), so a tool added
// by the server is callable on the next turn. `close` ends the servers this agent owns; shared
// ones stay for the other agents and end with the thread (or closeSharedMcpServers).
// A server that cannot start, or stops for good, is reported once: an `optional` one as a
// warning (the agent goes on without its tools, and unavailableNote() tells the model why), any
// other through onUnavailable (a run fails the agent: mcp_unavailable), or as an error notice.
import type { MessagePort } from 'node:worker_threads';
import type { AnyAgentTool } from '../../agent/types.js';
import { PrivateTempDir } from '../private-temp.js';
import type { McpServerConfig } from './config.js';
import { McpConnection, type McpConnectionContext } from './connection.js';
import { matchesAny, MCP_TOOL_PREFIX, mcpToolName, normalizePattern } from './names.js';
import { RunHostPort } from './run-host-wire.js';
import { createMcpAgentTool } from './tool-adapter.js';

export interface McpToolSourceOptions extends McpConnectionContext {
  servers: McpServerConfig[];
  /** Tool patterns the agent may use (`mcp__github__*`); empty or undefined: every tool of its servers. */
  allow?: readonly string[];
  /** Tool patterns it may not use (wins over allow). */
  deny?: readonly string[];
  /** Groups `scope: run` servers: agents with the same run id in this thread share one server. */
  runId?: string;
  /** The port to the run's MCP host (the coordinator's thread): `scope: run` servers are reached through it. */
  runHostPort?: MessagePort;
  maxLines?: number;
  maxBytes?: number;
  /**
   * A server that is not `optional` cannot start or stopped for good; `reason` says why. Without
   * it such a server is an error notice and the agent goes on without its tools.
   */
  onUnavailable?: (server: string, reason: string) => void;
}

/** What a tool name maps back to. */
export interface McpToolOrigin {
  server: string;
  tool: string;
}

interface Shared {
  connection: McpConnection;
  users: number;
}
/** Run-scoped servers of this thread, by run id, server name and configuration. */
const shared = new Map<string, Shared>();

/** Ends the run-scoped servers of `runId` (every run when omitted) in this thread. */
export async function closeSharedMcpServers(runId?: string): Promise<void> {
  const ends: Promise<void>[] = [];
  for (const [key, s] of shared) {
    if (runId !== undefined && !key.startsWith(`${runId}\0`)) continue;
    shared.delete(key);
    ends.push(s.connection.close());
  }
  await Promise.all(ends);
}

/** How many run-scoped servers this thread keeps (for tests and the bench). */
export function sharedMcpServerCount(): number {
  return shared.size;
}

export class McpToolSource {
  /** The MCP tools the agent has now (replaced as a whole when they change). */
  tools: AnyAgentTool[] = [];
  readonly connections: McpConnection[] = [];
  private readonly owned = new Set<McpConnection>();
  private readonly origins = new Map<string, McpToolOrigin>();
  private readonly temp = new PrivateTempDir(undefined, 'orchestrate-mcp-');
  private readonly unsubscribe: (() => void)[] = [];
  private readonly runHost: RunHostPort | undefined;
  private changed = true;
  private closed = false;
  private readonly allow: string[];
  private readonly deny: string[];

  constructor(private readonly options: McpToolSourceOptions) {
    this.allow = (options.allow ?? []).map(normalizePattern);
    this.deny = (options.deny ?? []).map(normalizePattern);
    if (options.runHostPort && options.servers.some((c) => c.scope === 'run'))
      this.runHost = new RunHostPort(options.runHostPort, options.notify);
    for (const config of options.servers) {
      let connection: McpConnection;
      if (config.scope === 'run' && this.runHost) {
        // This agent's session with the run's one server: closing it leaves the server running.
        connection = new McpConnection(config, { ...options, runHost: this.runHost, ownerReportsFailures: true });
        this.owned.add(connection);
      } else if (config.scope === 'run' && options.runId !== undefined) {
        const key = `${options.runId}\0${config.name}\0${JSON.stringify(config)}`;
        let s = shared.get(key);
        if (!s || s.connection.status === 'closed') {
          s = { connection: new McpConnection(config, { ...options, ownerReportsFailures: true }), users: 0 };
          shared.set(key, s);
        }
        s.users++;
        connection = s.connection;
      } else {
        connection = new McpConnection(config, { ...options, ownerReportsFailures: true });
        this.owned.add(connection);
      }
      this.connections.push(connection);
      this.unsubscribe.push(
        connection.onToolsChanged(() => {
          this.changed = true;
          if (connection.status === 'failed') this.unavailable(connection, connection.failure ?? 'it stopped');
        }),
      );
    }
  }

  /** The server and tool behind an exposed name. */
  originOf(name: string): McpToolOrigin | undefined {
    return this.origins.get(name);
  }

  /** Starts the eager servers (all of them with `all`). Failures are reported, not thrown. */
  async start(all = false): Promise<void> {
    await this.startWhere((c) => all || c.config.startup === 'eager');
  }

  /**
   * Before a model call: starts servers not started yet, re-lists changed ones. Returns the new
   * tool list when it changed, else undefined.
   */
  async prepareTurn(): Promise<AnyAgentTool[] | undefined> {
    if (this.closed) return undefined;
    await this.startWhere(() => true);
    await Promise.all(
      this.connections.map((c) =>
        c.refreshTools().then(
          (did) => {
            if (did) this.changed = true;
          },
          (err: unknown) =>
            this.options.notify(
              `warning: MCP server "${c.config.name}": its tool list could not be re-read: ${err instanceof Error ? err.message : String(err)}`,
            ),
        ),
      ),
    );
    if (!this.changed) return undefined;
    this.rebuild();
    return this.tools;
  }

  /** The tools of the servers started so far (after start()). */
  listNow(): AnyAgentTool[] {
    if (this.changed) this.rebuild();
    return this.tools;
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    for (const u of this.unsubscribe) u();
    await Promise.all([...this.owned].map((c) => c.close()));
    this.runHost?.close();
    for (const c of this.connections) {
      if (this.owned.has(c)) continue;
      for (const [, s] of shared) if (s.connection === c) s.users--;
    }
    this.temp.remove();
  }

  private readonly reported = new Set<McpConnection>();
  /** Optional servers the agent goes without, and why. */
  private readonly missing = new Map<string, string>();

  /**
   * What the model is told about optional servers it goes without (for its system prompt), or
   * undefined when every server is there.
   */
  unavailableNote(): string | undefined {
    if (this.missing.size === 0) return undefined;
    const lines = [...this.missing].map(([server, why]) => `- "${server}" (tools mcp__${server}__*): ${why}`);
    return [
      'These MCP servers are unavailable in this session, so their tools are missing; do the work without them, and say so where it matters:',
      ...lines,
    ].join('\n');
  }

  /** Reports a server that cannot start or stopped for good, once per server and agent. */
  private unavailable(c: McpConnection, reason: string): void {
    if (this.closed || this.reported.has(c)) return;
    this.reported.add(c);
    this.changed = true;
    const name = c.config.name;
    if (c.config.optional) {
      this.missing.set(name, reason);
      this.options.notify(
        `warning: ${reason.replace(/\s*\n\s*/g, ' | ')}; it is optional: the agent goes on without its tools`,
      );
    } else if (this.options.onUnavailable) this.options.onUnavailable(name, reason);
    else this.options.notify(`error: ${reason}`);
  }

  private async startWhere(pick: (c: McpConnection) => boolean): Promise<void> {
    // A run's server shared in this thread may have failed before this agent came along.
    for (const c of this.connections)
      if (c.status === 'failed') this.unavailable(c, c.failure ?? `MCP server "${c.config.name}" is unavailable`);
    await Promise.all(
      this.connections
        .filter((c) => pick(c) && (c.status === 'idle' || c.status === 'starting'))
        .map((c) =>
          c.start().then(
            () => {
              this.changed = true;
            },
            (err: unknown) => {
              this.changed = true;
              this.unavailable(c, err instanceof Error ? err.message : String(err));
            },
          ),
        ),
    );
  }

  private rebuild(): void {
    this.changed = false;
    this.origins.clear();
    const taken = new Set<string>();
    const tools: AnyAgentTool[] = [];
    for (const c of this.connections) {
      if (c.status !== 'ready') continue;
      const server = c.config.name;
      for (const tool of c.tools) {
        const written = `${MCP_TOOL_PREFIX}${server}__${tool.name}`;
        const name = mcpToolName(server, tool.name, taken);
        const names = [name, written];
        if (this.allow.length > 0 && !matchesAny(this.allow, names)) {
          taken.delete(name);
          continue;
        }
        if (matchesAny(this.deny, names)) {
          taken.delete(name);
          continue;
        }
        this.origins.set(name, { server, tool: tool.name });
        tools.push(
          createMcpAgentTool(name, tool, c, {
            temp: this.temp,
            ...(this.options.maxLines !== undefined ? { maxLines: this.options.maxLines } : {}),
            ...(this.options.maxBytes !== undefined ? { maxBytes: this.options.maxBytes } : {}),
          }),
        );
      }
    }
    this.tools = tools;
  }
}
