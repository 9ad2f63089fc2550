// Shared pieces of the MCP client tests: server configs for the fixture servers, and
// useMcpAgents(): the HTTP fixture, temp folders and scripted agent sessions (the real runtime)
// that use the servers, each ended after its test.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, afterEach, beforeAll } from 'vitest';
import type { ScriptedTurn } from '../../../src/ai/scripted.js';
import type { ToolResultMessage } from '../../../src/ai/types.js';
import type { AgentSession } from '../../../src/runtime/agent-session.js';
import { createAgentSession } from '../../../src/runtime/create-agent-session.js';
import type { McpServerConfig } from '../../../src/tools/mcp/config.js';
// @ts-expect-error a plain ES module fixture without types
import { startHttpFixture } from '../../fixtures/mcp/http-server.mjs';

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

export interface HttpFixture {
  url: string;
  sseUrl: string;
  seenHeaders: Record<string, string>[];
  close(): Promise<void>;
}

export interface McpAgents {
  /** The Streamable HTTP / SSE fixture (server "beta", requires `Authorization: Bearer tok-123`). */
  http(): HttpFixture;
  /** A temp folder removed after the test. */
  tempDir(): string;
  /** A scripted agent with these servers, disposed after the test. */
  agent(
    servers: McpServerConfig[],
    script: ScriptedTurn[],
    extra?: { tools?: string[]; notices?: string[]; deny?: string[] },
  ): Promise<AgentSession>;
}

/** Registers the hooks of an MCP client test file (call at its top level). */
export function useMcpAgents(): McpAgents {
  const dirs: string[] = [];
  const sessions: AgentSession[] = [];
  let fixture: HttpFixture | undefined;
  beforeAll(async () => {
    fixture = (await startHttpFixture({
      name: 'beta',
      requiredHeaders: { authorization: 'Bearer tok-123' },
    })) as HttpFixture;
  });
  afterAll(async () => {
    await fixture?.close();
  });
  afterEach(async () => {
    for (const s of sessions.splice(0)) await s.dispose();
    for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
  });
  const tempDir = (): string => {
    const d = mkdtempSync(join(tmpdir(), 'mcp-client-'));
    dirs.push(d);
    return d;
  };
  return {
    http: () => fixture!,
    tempDir,
    async agent(servers, script, extra = {}) {
      const session = await createAgentSession({
        cwd: tempDir(),
        inMemory: true,
        provider: 'scripted',
        script,
        tools: extra.tools ?? ['read'],
        mcp: { servers, ...(extra.deny ? { deny: extra.deny } : {}) },
        contextFiles: false,
        defaultSkills: false,
        notify: (m) => extra.notices?.push(m),
      });
      sessions.push(session);
      return session;
    },
  };
}

/** The tool results of a session, in order. */
export function results(session: AgentSession): ToolResultMessage[] {
  return session.messages.filter((m): m is ToolResultMessage => m.role === 'toolResult');
}

/** A tool result's text (other blocks as [type]). */
export function textOf(r: ToolResultMessage): string {
  return r.content.map((c) => (c.type === 'text' ? c.text : `[${c.type}]`)).join('');
}
