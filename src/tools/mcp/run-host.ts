// The run's MCP host: `scope: run` servers, one per run, in the coordinator's thread. Agents in
// worker threads reach it over their launch's MessagePort (run-host-wire.ts); for each agent and
// server the host runs a small MCP server (the SDK's Server) that forwards tools/list and
// tools/call, with progress notifications, to the one real connection (McpConnection: startup,
// timeouts, restart once), and passes the server's list_changed on. So a 100-agent fan-out over
// many threads starts one copy of a heavy server. The first agent to use a server decides where
// it runs (its working folder and sandbox); the server ends with the run (closeMcpRunHost).
import type { MessagePort } from 'node:worker_threads';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import {
  CallToolRequestSchema,
  ListToolsRequestSchema,
  type CallToolResult,
  type JSONRPCMessage,
} from '@modelcontextprotocol/sdk/types.js';
import { McpConnection } from './connection.js';
import type { FromHost, ToHost } from './run-host-wire.js';

/** One agent's session with one server: the SDK Server on the host's end of the agent's port. */
class HostTransport implements Transport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: (message: JSONRPCMessage) => void;
  constructor(
    private readonly port: MessagePort,
    private readonly key: string,
  ) {}
  async start(): Promise<void> {}
  async send(message: JSONRPCMessage): Promise<void> {
    this.port.postMessage({ t: 'msg', key: this.key, m: message } satisfies FromHost);
  }
  async close(): Promise<void> {
    this.onclose?.();
  }
}

export class McpRunHost {
  private readonly upstreams = new Map<string, McpConnection>();
  /** Ports of the agents attached now, oldest first: notices about a server go to one of them. */
  private readonly ports: MessagePort[] = [];
  private closed = false;

  get serverCount(): number {
    return this.upstreams.size;
  }

  /** Serves one agent's port; `early` holds the messages that came before the host was loaded. */
  attach(port: MessagePort, early: unknown[] = []): void {
    if (this.closed) {
      port.close();
      return;
    }
    this.ports.push(port);
    const sessions = new Map<string, { server: Server; transport: HostTransport; off: () => void }>();
    const end = (key: string) => {
      const s = sessions.get(key);
      if (!s) return;
      sessions.delete(key);
      s.off();
      void s.server.close().catch(() => undefined);
    };
    const receive = (raw: unknown) => {
      const m = raw as ToHost;
      if (m.t === 'open') {
        if (sessions.has(m.key)) return;
        const upstream = this.upstream(m.key, m);
        const transport = new HostTransport(port, m.key);
        const server = this.proxy(upstream);
        const off = upstream.onToolsChanged(() => {
          // Gone for good: each agent hears why (and fails, unless the server is optional).
          if (upstream.status === 'failed')
            port.postMessage({ t: 'gone', key: m.key, reason: upstream.failure ?? 'it stopped' } satisfies FromHost);
          else void server.sendToolListChanged().catch(() => undefined);
        });
        sessions.set(m.key, { server, transport, off });
        void server.connect(transport);
      } else if (m.t === 'msg') sessions.get(m.key)?.transport.onmessage?.(m.m);
      else if (m.t === 'close') end(m.key);
    };
    for (const m of early) receive(m);
    port.on('message', receive);
    port.once('close', () => {
      for (const key of [...sessions.keys()]) end(key);
      const i = this.ports.indexOf(port);
      if (i >= 0) this.ports.splice(i, 1);
    });
  }

  /** Ends every server of the run. */
  async close(): Promise<void> {
    this.closed = true;
    for (const p of this.ports.splice(0)) p.close();
    const all = [...this.upstreams.values()];
    this.upstreams.clear();
    await Promise.all(all.map((c) => c.close()));
  }

  private upstream(key: string, open: Extract<ToHost, { t: 'open' }>): McpConnection {
    let c = this.upstreams.get(key);
    if (!c || c.status === 'closed') {
      c = new McpConnection(open.config, {
        ...open.ctx,
        notify: (text) => this.ports[0]?.postMessage({ t: 'notice', text } satisfies FromHost),
        // Its loss reaches every agent that uses it ('gone'), not a notice to one of them.
        ownerReportsFailures: true,
      });
      this.upstreams.set(key, c);
    }
    return c;
  }

  /** A server that answers with the upstream's tools and results; failures are error results. */
  private proxy(upstream: McpConnection): Server {
    const server = new Server(
      { name: `orchestrate-run-host/${upstream.config.name}`, version: '1' },
      { capabilities: { tools: { listChanged: true } } },
    );
    server.setRequestHandler(ListToolsRequestSchema, async () => {
      await upstream.start();
      return { tools: upstream.tools };
    });
    server.setRequestHandler(CallToolRequestSchema, async (request, extra): Promise<CallToolResult> => {
      const token = request.params._meta?.progressToken;
      try {
        return await upstream.callTool(
          request.params.name,
          request.params.arguments ?? {},
          extra.signal,
          token === undefined
            ? undefined
            : (p) =>
                void extra
                  .sendNotification({ method: 'notifications/progress', params: { ...p, progressToken: token } })
                  .catch(() => undefined),
        );
      } catch (err) {
        return { content: [{ type: 'text', text: err instanceof Error ? err.message : String(err) }], isError: true };
      }
    });
    return server;
  }
}
