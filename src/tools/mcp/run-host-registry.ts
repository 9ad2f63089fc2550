// The run's MCP hosts, as the coordinator's thread keeps them: `mcpRunPort(runId)` gives the port
// one agent launch carries to its worker thread, and `closeMcpRunHost(runId)` ends the run's
// servers when the run ends. The host itself (run-host.ts, which loads the MCP SDK) is loaded on
// the first message, so a run whose agents use no run-scoped server never pays for it.
import { MessageChannel, type MessagePort } from 'node:worker_threads';
import type { McpServerSpec } from './config.js';
import type { McpRunHost } from './run-host.js';

interface Entry {
  host?: Promise<McpRunHost>;
  ports: Set<MessagePort>;
}
const runs = new Map<string, Entry>();

async function loadHost(): Promise<typeof import('./run-host.js')> {
  // Under tsx in CommonJS (worker threads, npm run dev) import() cannot resolve .ts: require can.
  try {
    return await import('./run-host.js');
  } catch (err) {
    if (typeof require !== 'function') throw err;
    return require('./run-host.js') as typeof import('./run-host.js');
  }
}

/** A port for one agent launch of `runId` (moved to its thread); the other end goes to the run's host. */
export function mcpRunPort(runId: string): MessagePort {
  let entry = runs.get(runId);
  if (!entry) {
    entry = { ports: new Set() };
    runs.set(runId, entry);
  }
  const e = entry;
  const { port1, port2 } = new MessageChannel();
  e.ports.add(port1);
  // Messages wait here until the host is loaded, then it takes the port over.
  const early: unknown[] = [];
  const buffer = (m: unknown) => early.push(m);
  port1.on('message', buffer);
  port1.once('message', () => {
    e.host ??= loadHost().then(({ McpRunHost }) => new McpRunHost());
    void e.host.then(
      (host) => {
        port1.off('message', buffer);
        host.attach(port1, early);
      },
      () => port1.close(),
    );
  });
  port1.once('close', () => e.ports.delete(port1));
  port1.unref();
  return port2;
}

/** Whether an agent has a `scope: run` server (its launch then brings a port to the run's host). */
export function usesRunScopedMcp(agent: { mcpServers?: McpServerSpec[] } | undefined): boolean {
  return (agent?.mcpServers ?? []).some((s) => s.entry.scope === 'run');
}

/** Ends the run's MCP servers and the ports of its launches. */
export async function closeMcpRunHost(runId: string): Promise<void> {
  const entry = runs.get(runId);
  if (!entry) return;
  runs.delete(runId);
  for (const p of entry.ports) p.close();
  const host = await entry.host?.catch(() => undefined);
  await host?.close();
}

/** How many servers the run's host runs (for tests and the bench). */
export async function mcpRunHostServerCount(runId: string): Promise<number> {
  const host = await runs.get(runId)?.host?.catch(() => undefined);
  return host?.serverCount ?? 0;
}
