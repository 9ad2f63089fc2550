// Shared pieces of the MCP client tests: server configs for the fixture servers and a scripted
// agent session that uses them.
import { realpathSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { McpServerConfig } from '../../../src/tools/mcp/config.js';

export const STDIO_FIXTURE = fileURLToPath(new URL('../../fixtures/mcp/stdio-server.mjs', import.meta.url));

/**
 * How the fixture servers are confined: in the sandbox, unless this checkout lies under the temp
 * folder (a CI clone in /tmp), which the sandbox replaces with a private one, so a sandboxed server
 * could not see its own script or node_modules there. The unconfined path still gets the env allowlist.
 */
export const FIXTURE_SANDBOX: 'workspace' | 'none' = realpathSync(STDIO_FIXTURE).startsWith(
  realpathSync(tmpdir()) + sep,
)
  ? 'none'
  : 'workspace';

/** The stdio fixture server named `name` (sandboxed, lazy, agent scope unless changed). */
export function stdioServer(name: string, extra: Partial<McpServerConfig> = {}): McpServerConfig {
  return {
    name,
    transport: 'stdio',
    command: process.execPath,
    args: [STDIO_FIXTURE, name],
    env: {},
    headers: {},
    startup: 'lazy',
    scope: 'agent',
    startupTimeoutMs: 20_000,
    toolTimeoutMs: 20_000,
    network: false,
    sandbox: FIXTURE_SANDBOX,
    ...extra,
  };
}

export function httpServer(name: string, url: string, extra: Partial<McpServerConfig> = {}): McpServerConfig {
  return {
    name,
    transport: 'http',
    url,
    args: [],
    env: {},
    headers: {},
    startup: 'lazy',
    scope: 'agent',
    startupTimeoutMs: 20_000,
    toolTimeoutMs: 20_000,
    network: false,
    sandbox: 'workspace',
    ...extra,
  };
}

/** Whether any process of the group led by `pgid` is still alive. */
export function groupAlive(pgid: number): boolean {
  try {
    process.kill(-pgid, 0);
    return true;
  } catch {
    return false;
  }
}

/** Resolves once `check` is true; polls (a process ending has no event to wait on here). */
export async function until(check: () => boolean, what: string, timeoutMs = 15_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for: ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}
