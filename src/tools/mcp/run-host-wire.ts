// The messages between a worker thread's agent and the run's MCP host in the coordinator's
// thread (run-host.ts), over one MessagePort per agent launch, and the thread's end of it: one
// SDK Transport per run-scoped server, multiplexed on that port by a key naming the server and
// its configuration. Types and the port only: this file loads none of the MCP SDK.
import type { MessagePort } from 'node:worker_threads';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';
import type { McpServerConfig } from './config.js';

/** Where the first agent to use a run-scoped server runs it (its working folder, sandbox). */
export interface RunHostServerContext {
  cwd: string;
  writable?: string[];
  hide?: string[];
  /** The run's trusted inputs in that folder, read-only to the server (McpConnectionContext.readOnly). */
  readOnly?: string[];
  bwrapPath?: string;
}

export type ToHost =
  | { t: 'open'; key: string; config: McpServerConfig; ctx: RunHostServerContext }
  | { t: 'msg'; key: string; m: JSONRPCMessage }
  | { t: 'close'; key: string };

export type FromHost =
  | { t: 'msg'; key: string; m: JSONRPCMessage }
  | { t: 'notice'; text: string }
  // The run's server stopped for good (after its one restart): the agent's session with it ends.
  | { t: 'gone'; key: string; reason: string };

/** The key of a run-scoped server: its name and its whole (expanded) configuration. */
export function runServerKey(config: McpServerConfig): string {
  return `${config.name}\0${JSON.stringify(config)}`;
}

/** The thread's end of an agent's port to the run host: a transport per server. */
export class RunHostPort {
  private readonly transports = new Map<string, RunHostTransport>();
  private closed = false;

  constructor(
    private readonly port: MessagePort,
    notify: (text: string) => void,
  ) {
    port.on('message', (raw: FromHost) => {
      if (raw.t === 'notice') notify(raw.text);
      else if (raw.t === 'gone') this.transports.get(raw.key)?.gone(raw.reason);
      else this.transports.get(raw.key)?.onmessage?.(raw.m);
    });
    port.on('close', () => {
      this.closed = true;
      for (const t of this.transports.values()) t.onclose?.();
    });
    // The port must not keep the thread's event loop alive on its own.
    port.unref();
  }

  transport(config: McpServerConfig, ctx: RunHostServerContext): Transport {
    const key = runServerKey(config);
    const t = new RunHostTransport(key, config, ctx, this);
    this.transports.set(key, t);
    return t;
  }

  post(message: ToHost): void {
    if (!this.closed) this.port.postMessage(message);
  }

  forget(key: string): void {
    this.transports.delete(key);
  }

  /** Ends this agent's sessions with the host (the servers stay for the run's other agents). */
  close(): void {
    if (this.closed) return;
    this.closed = true;
    this.port.close();
  }
}

export class RunHostTransport implements Transport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: (message: JSONRPCMessage) => void;
  /** Why the run's server is gone for good, once the host said so. */
  failure: string | undefined;

  constructor(
    private readonly key: string,
    private readonly config: McpServerConfig,
    private readonly ctx: RunHostServerContext,
    private readonly port: RunHostPort,
  ) {}

  async start(): Promise<void> {
    this.port.post({ t: 'open', key: this.key, config: this.config, ctx: this.ctx });
  }

  async send(message: JSONRPCMessage): Promise<void> {
    this.port.post({ t: 'msg', key: this.key, m: message });
  }

  async close(): Promise<void> {
    this.port.post({ t: 'close', key: this.key });
    this.port.forget(this.key);
    this.onclose?.();
  }

  /** The host's server stopped for good: this session closes with the host's reason. */
  gone(reason: string): void {
    this.failure = reason;
    this.port.forget(this.key);
    this.onclose?.();
  }
}
