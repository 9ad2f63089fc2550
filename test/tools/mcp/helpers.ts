// Shared pieces of the MCP client tests: server configs for the fixture servers and a scripted
// agent session that uses them.
import { fileURLToPath } from 'node:url';
import type { McpServerConfig } from '../../../src/tools/mcp/config.js';

export const STDIO_FIXTURE = fileURLToPath(new URL('../../fixtures/mcp/stdio-server.mjs', import.meta.url));

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
    sandbox: 'workspace',
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
