// `orchestrate agent --mcp-config`: the servers of the files named, and what the agent does when
// one it needs (not `optional: true`) cannot start or stops for good: the command ends with exit
// 1 and the cause on stderr, as a recipe's agent fails with mcp_unavailable (it used to be one
// notice, and the model went on without the tools it was told to use). Every server starts before
// the prompt, lazy ones too, so a dead one stops the agent before any model call. An optional
// server stays a warning, and the model is told (McpToolSource.unavailableNote).
import type { AgentSession } from '../runtime/agent-session.js';
import type { CreateAgentSessionOptions } from '../runtime/create-agent-session.js';
import { createRedactor } from '../session/index.js';
import { mcpConfigFromFiles } from './agent-mcp-config.js';
import { EXIT } from './cli-io.js';

/** Adds the servers of `files` (--mcp-config) to `o`, and their expanded secrets to its secrets. */
export function addMcpServers(
  o: CreateAgentSessionOptions,
  files: readonly string[],
  cwd: string,
  env: Readonly<Record<string, string | undefined>>,
): void {
  const mcp = mcpConfigFromFiles(files, cwd, env);
  if (!mcp) return;
  o.mcp = mcp.mcp;
  if (mcp.secrets.length) o.secrets = [...(o.secrets ?? []), ...mcp.secrets];
}

export class RequiredMcpServers {
  /** Why the first required server is unavailable, once one is. */
  reason: string | undefined;
  private session: AgentSession | undefined;
  private secrets: CreateAgentSessionOptions['secrets'] = [];

  /** `options` with every server started up front and a required one's loss heard here. */
  wire(options: CreateAgentSessionOptions): CreateAgentSessionOptions {
    this.secrets = options.secrets ?? [];
    if (!options.mcp) return options;
    options.mcp.startAll = true;
    options.mcp.onUnavailable = (_server, reason) => {
      this.reason ??= reason;
      // Lost during a prompt: stop the agent there rather than let it work on without the tools.
      void this.session?.abort();
    };
    return options;
  }

  /** Watches `session` from now on; false when a required server is down already. */
  watch(session: AgentSession): boolean {
    this.session = session;
    return this.reason === undefined;
  }

  /** Ends the session before its prompt: writes why and returns the exit code. */
  async stop(session: AgentSession, stderr: (text: string) => void): Promise<number> {
    await session.dispose();
    return this.exitCode(EXIT.taskFailed, stderr);
  }

  /** `code`, unless a required server was lost: then why (on stderr) and exit 1. */
  exitCode(code: number, stderr: (text: string) => void): number {
    if (this.reason === undefined) return code;
    // The reason quotes the server's stderr, which may echo a token its config gave it.
    const why = createRedactor(this.secrets ?? [])?.text(this.reason) ?? this.reason;
    stderr(
      `orchestrate agent: ${why}\nThe agent needs this server: fix its entry in the --mcp-config file, or add "optional": true to the entry to go on without its tools.\n`,
    );
    return EXIT.taskFailed;
  }
}
