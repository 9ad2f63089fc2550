// One MCP server as an agent (or a run) uses it: an SDK Client over the server's transport,
// started once (at agent start, or at the first model call), with startup_timeout on connecting
// and listing, tool_timeout on each call (restarted by every progress notification), the tool
// list re-read after notifications/tools/list_changed, and crash handling: a stdio server that
// exits is started again once; when it exits a second time it is reported once, clearly, and
// its tools fail with that text instead of hanging. Calls of tools that are not read-only run one
// at a time (runsInParallel), whoever makes them: a `scope: run` server is shared by many agents.
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { OAuthClientProvider } from '@modelcontextprotocol/sdk/client/auth.js';
import { SSEClientTransport } from '@modelcontextprotocol/sdk/client/sse.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import {
  ErrorCode,
  McpError,
  ToolListChangedNotificationSchema,
  type CallToolResult,
  type Progress,
  type Tool,
} from '@modelcontextprotocol/sdk/types.js';
import { resolveSandboxMode, warnOnce, type SandboxPlan } from '../sandbox.js';
import { MCP_DEFAULTS, type McpServerConfig } from './config.js';
import { RunHostTransport, type RunHostPort } from './run-host-wire.js';
import { serverReadOnlyPaths } from './server-files.js';
import { ServerStdioTransport } from './stdio-transport.js';

export interface McpConnectionContext {
  /** Working directory of stdio servers without a `cwd` (the agent's). */
  cwd: string;
  /** Folders a sandboxed server may write (default: [cwd]). */
  writable?: string[];
  /** Further paths hidden from sandboxed servers (the run folder). */
  hide?: string[];
  /**
   * Paths inside the writable folders that sandboxed servers may read but not change: the run's
   * trusted inputs in the workspace (recipe.yaml, agent files, .mcp.json), as for bash.
   */
  readOnly?: string[];
  bwrapPath?: string;
  /** Where crash reports and sandbox warnings go. */
  notify: (message: string) => void;
  /** OAuth for HTTP servers (the SDK's provider interface), by server name. */
  authProviders?: Record<string, OAuthClientProvider>;
  /** The environment the sandbox allowlist is taken from (default process.env). */
  baseEnv?: Readonly<Record<string, string | undefined>>;
  /** `scope: run` servers are reached through the run's host over this port (run-host.ts). */
  runHost?: RunHostPort;
  /**
   * The owner reports a server that stopped for good (it listens with onToolsChanged and reads
   * `failure`), so the connection does not notify it itself: an optional server's loss is a
   * warning there, a required one's the agent's failure.
   */
  ownerReportsFailures?: boolean;
}

export type McpConnectionStatus = 'idle' | 'starting' | 'ready' | 'failed' | 'closed';

const CLIENT_INFO = { name: 'orchestrate', version: '1' };

function seconds(ms: number): string {
  return ms % 1000 === 0 ? `${ms / 1000}s` : `${ms}ms`;
}

/** The same duration as prose ("10 s"), for messages a user reads. */
function spelled(ms: number): string {
  return ms % 1000 === 0 ? `${ms / 1000} s` : `${ms} ms`;
}

/** How long a dead server's stderr may take to drain before its start failure is reported. */
const STDERR_DRAIN_MS = 2000;

export class McpConnection {
  status: McpConnectionStatus = 'idle';
  /** Why the server is unusable (status failed). */
  failure: string | undefined;
  /** The server's tools as last listed. */
  tools: Tool[] = [];
  /** Times the server was started again after a crash. */
  restarts = 0;
  private client: Client | undefined;
  private transport: Transport | undefined;
  private starting: Promise<void> | undefined;
  private toolsStale = false;
  private readonly listeners = new Set<() => void>();
  /** The last call that may not overlap others: the next such call waits for it. */
  private serialTail: Promise<unknown> = Promise.resolve();

  constructor(
    readonly config: McpServerConfig,
    private readonly ctx: McpConnectionContext,
  ) {}

  /** The stdio server's process id (bwrap's when sandboxed), while it runs. */
  get pid(): number | undefined {
    return this.transport instanceof ServerStdioTransport ? this.transport.pid : undefined;
  }

  /** Called when the tool list changed (list_changed, or a restart); re-read with refreshTools. */
  onToolsChanged(listener: () => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** Connects and lists the tools; at most once at a time. Throws the reason it cannot. */
  start(): Promise<void> {
    if (this.status === 'ready') return Promise.resolve();
    if (this.status === 'failed' || this.status === 'closed')
      return Promise.reject(new Error(this.failure ?? `MCP server "${this.config.name}" is closed`));
    this.starting ??= this.connect().finally(() => {
      this.starting = undefined;
    });
    return this.starting;
  }

  /** Re-lists the tools when the server said they changed; true when they were re-read. */
  async refreshTools(): Promise<boolean> {
    if (!this.toolsStale || this.status !== 'ready' || !this.client) return false;
    this.toolsStale = false;
    this.tools = await this.listAll(this.client);
    return true;
  }

  /**
   * Whether calls of `tool` may run alongside other calls to this server: the configuration's
   * `parallel` when set, else only when the server marks the tool readOnlyHint (servers such as
   * the reference memory server rewrite one file per call, and two writes at once lose one).
   */
  runsInParallel(tool: string): boolean {
    if (this.config.parallel !== undefined) return this.config.parallel;
    return this.tools.find((t) => t.name === tool)?.annotations?.readOnlyHint === true;
  }

  /**
   * Calls a tool; one that may not overlap others waits for the previous such call (in the order
   * the calls were made). Timeouts, crashes and aborts throw errors whose message is meant for the model.
   */
  async callTool(
    name: string,
    args: Record<string, unknown>,
    signal: AbortSignal,
    onProgress?: (p: Progress) => void,
  ): Promise<CallToolResult> {
    await this.start();
    if (this.runsInParallel(name)) return this.send(name, args, signal, onProgress);
    const turn = this.serialTail.then(() => this.send(name, args, signal, onProgress));
    this.serialTail = turn.catch(() => undefined);
    return turn;
  }

  private async send(
    name: string,
    args: Record<string, unknown>,
    signal: AbortSignal,
    onProgress?: (p: Progress) => void,
  ): Promise<CallToolResult> {
    // Waiting for an earlier call may have outlived the server.
    await this.start();
    const client = this.client!;
    const timeout = this.config.toolTimeoutMs;
    // The SDK leaves its abort listener on the signal it is given; the session's signal lives for
    // a whole prompt, so each call gets its own (Node warned after 10 calls of one prompt).
    const call = new AbortController();
    const badBefore = this.badOutputs();
    const onAbort = () => call.abort(signal.reason);
    if (signal.aborted) call.abort(signal.reason);
    else signal.addEventListener('abort', onAbort, { once: true });
    try {
      const result = await client.callTool({ name, arguments: args }, undefined, {
        signal: call.signal,
        timeout,
        resetTimeoutOnProgress: true,
        ...(onProgress ? { onprogress: onProgress } : {}),
      });
      return result as CallToolResult;
    } catch (err) {
      const closed = err instanceof McpError && err.code === ErrorCode.ConnectionClosed;
      // A server gone for good aborts the agent it belongs to as it goes (onUnavailable), which
      // ends this call before the SDK reports the closed connection: the call says why it ended.
      if ((closed || signal.aborted) && this.status === 'failed')
        throw new Error(`MCP server "${this.config.name}" exited during the call to "${name}": ${this.failure}.`);
      if (signal.aborted) throw new Error('Operation aborted');
      if (err instanceof McpError && err.code === ErrorCode.RequestTimeout) {
        throw new Error(
          `MCP tool "${name}" of server "${this.config.name}" timed out: no result and no progress for ${seconds(timeout)} (tool_timeout). ${
            this.badOutputs() > badBefore
              ? `Meanwhile the server wrote on stdout ${this.lastBadOutput()}, which was dropped: that may have been its answer.`
              : 'The call may still be running on the server.'
          }`,
        );
      }
      if (closed) {
        throw new Error(
          `MCP server "${this.config.name}" exited during the call to "${name}"; it is being started again, so the call may be retried.`,
        );
      }
      const issues = (err as { issues?: unknown }).issues;
      if (Array.isArray(issues) && !(err instanceof McpError)) {
        // The SDK's check of the answer's shape (a zod error whose message is JSON): said as a line.
        throw new Error(
          `MCP tool "${name}" of server "${this.config.name}" answered with what is not an MCP tool result (${issuesText(issues)}); the server is at fault, not the arguments.`,
        );
      }
      // An HTTP server that went away, or refuses: the network cause rather than undici's "fetch failed".
      const cause =
        this.config.url && !(err instanceof McpError)
          ? remoteFailure(err, this.config.url)
          : err instanceof Error
            ? err.message
            : String(err);
      throw new Error(`MCP tool "${name}" of server "${this.config.name}" failed: ${cause}`);
    } finally {
      signal.removeEventListener('abort', onAbort);
    }
  }

  /** Ends the server (its process, or the HTTP session). */
  async close(): Promise<void> {
    if (this.status === 'closed') return;
    this.status = 'closed';
    this.failure ??= `MCP server "${this.config.name}" was closed`;
    const client = this.client;
    this.client = undefined;
    const transport = this.transport;
    this.transport = undefined;
    await this.starting?.catch(() => undefined);
    await (client ?? transport)?.close().catch(() => undefined);
    if (transport && client) await transport.close().catch(() => undefined);
  }

  private async connect(): Promise<void> {
    const cfg = this.config;
    this.status = 'starting';
    const client = new Client(CLIENT_INFO, { capabilities: {} });
    client.setNotificationHandler(ToolListChangedNotificationSchema, () => {
      this.toolsStale = true;
      for (const l of this.listeners) l();
    });
    const transport = this.makeTransport();
    this.client = client;
    this.transport = transport;
    client.onclose = () => this.closed(client);
    let phase: 'initialize' | 'tools/list' = 'initialize';
    const initializeMs = Math.min(cfg.initializeTimeoutMs ?? MCP_DEFAULTS.initializeTimeoutMs, cfg.startupTimeoutMs);
    let timer: NodeJS.Timeout | undefined;
    const timedOut = new Promise<never>((_, reject) => {
      timer = setTimeout(
        () =>
          reject(
            new Error(
              `MCP server "${cfg.name}" did not start within ${seconds(cfg.startupTimeoutMs)} (startup_timeout)${this.stderrNote()}`,
            ),
          ),
        cfg.startupTimeoutMs,
      );
    });
    try {
      await Promise.race([
        (async () => {
          await client.connect(transport, { timeout: initializeMs });
          phase = 'tools/list';
          this.tools = await this.listAll(client);
        })(),
        timedOut,
      ]);
      if ((this.status as McpConnectionStatus) !== 'starting')
        throw new Error(this.failure ?? `MCP server "${cfg.name}" was closed while starting`);
      this.status = 'ready';
    } catch (err) {
      const message = await this.startFailure(err, transport, phase, initializeMs);
      if ((this.status as McpConnectionStatus) !== 'closed') {
        this.status = 'failed';
        this.failure = message;
      }
      this.client = undefined;
      this.transport = undefined;
      await client.close().catch(() => undefined);
      await transport.close().catch(() => undefined);
      throw new Error(message);
    } finally {
      clearTimeout(timer);
    }
  }

  private async listAll(client: Client): Promise<Tool[]> {
    const tools: Tool[] = [];
    let cursor: string | undefined;
    do {
      const page = await client.listTools(cursor ? { cursor } : undefined, { timeout: this.config.startupTimeoutMs });
      tools.push(...page.tools);
      cursor = page.nextCursor;
    } while (cursor);
    return tools;
  }

  /** How often the stdio server wrote what is not a message (0 for other transports). */
  private badOutputs(): number {
    return this.transport instanceof ServerStdioTransport ? this.transport.badOutputs : 0;
  }

  private lastBadOutput(transport: Transport | undefined = this.transport): string | undefined {
    return transport instanceof ServerStdioTransport ? transport.badOutput : undefined;
  }

  private stderrNote(transport: Transport | undefined = this.transport): string {
    const t = transport instanceof ServerStdioTransport ? stderrTail(transport.stderr) : '';
    return t ? `. Its stderr ends with: ${t}` : '';
  }

  /**
   * Why a start failed, with its cause rather than the SDK's symptom: a process that died says
   * how and what it wrote to stderr (the SDK only says "Connection closed"), a silent one that
   * it never answered initialize, an unreachable URL why it could not be reached ("fetch failed").
   */
  private async startFailure(
    err: unknown,
    transport: Transport,
    phase: 'initialize' | 'tools/list',
    initializeMs: number,
  ): Promise<string> {
    const cfg = this.config;
    // Through the run's host (scope: run) the real server's own failure comes back as an error response.
    const text = (err instanceof Error ? err.message : String(err)).replace(/^MCP error -?\d+: (?=MCP server )/, '');
    if (text.startsWith('MCP server')) return text;
    const head = `MCP server "${cfg.name}" could not be started`;
    const issues = (err as { issues?: unknown }).issues;
    // The SDK's check of an answer's shape (a zod error whose message is JSON over many lines).
    if (Array.isArray(issues) && !(err instanceof McpError))
      return `${head}: its answer to ${phase} is not valid MCP (${issuesText(issues)}); the server is at fault: check its version, or report it to its authors`;
    const timedOut = err instanceof McpError && err.code === ErrorCode.RequestTimeout;
    if (transport instanceof ServerStdioTransport && !timedOut) {
      // The SDK saw the pipe close; the exit status and the last of stderr may still be on their way.
      await transport.drained(STDERR_DRAIN_MS);
      const exit = transport.exit;
      if (exit) {
        const how = exit.signal ? `was killed by ${exit.signal}` : `exited with code ${exit.code}`;
        // The command without its arguments: those may hold an expanded ${TOKEN}, and this text is logged.
        const what = `its command \`${cfg.command}\` ${how} before it answered ${phase}`;
        // The cause first: views cut long lines at their end.
        const stderr = stderrTail(transport.stderr);
        const bad = transport.badOutput ? `; on stdout it wrote ${transport.badOutput}` : '';
        return stderr ? `${head}: ${stderr} (${what}${bad})` : `${head}: ${what}, and wrote nothing to stderr${bad}`;
      }
    }
    if (timedOut) {
      const waited = phase === 'initialize' ? spelled(initializeMs) : spelled(cfg.startupTimeoutMs);
      // A startup_timeout shorter than initialize_timeout is the one that ran out.
      const initializeLimit = cfg.initializeTimeoutMs ?? MCP_DEFAULTS.initializeTimeoutMs;
      const key =
        phase === 'initialize' && initializeLimit <= cfg.startupTimeoutMs ? 'initialize_timeout' : 'startup_timeout';
      const where = cfg.transport === 'stdio' ? 'stdin/stdout' : cfg.url!.replace(/\?.*$/, '');
      const bad = this.lastBadOutput(transport);
      // A server that logs to stdout (console.log) garbles the protocol: say what it wrote.
      const question = bad
        ? `it wrote on stdout ${bad}; a server's stdout may carry only MCP messages (logs go to stderr)`
        : `is it an MCP server speaking on ${where}?`;
      return `${head}: no answer to ${phase} in ${waited} (${key}); ${question}${this.stderrNote(transport)}`;
    }
    if (cfg.transport !== 'stdio') return `${head}: ${remoteFailure(err, cfg.url!)}`;
    return `${head}: ${text}${this.stderrNote(transport)}`;
  }

  /** The transport closed: a crash unless we closed it. */
  private closed(client: Client): void {
    if (this.client !== client || this.status === 'closed') return;
    const transport = this.transport;
    if (!(transport instanceof ServerStdioTransport)) {
      if (this.status === 'ready') {
        this.status = 'failed';
        this.failure =
          transport instanceof RunHostTransport && transport.failure
            ? transport.failure
            : `MCP server "${this.config.name}" closed the connection`;
        if (!this.ctx.ownerReportsFailures) this.ctx.notify(this.failure);
        for (const l of this.listeners) l();
      }
      return;
    }
    const exit = transport.exit;
    const how = exit ? (exit.signal ? `killed by ${exit.signal}` : `exit code ${exit.code}`) : 'closed its output';
    const stderr = this.stderrNote();
    this.client = undefined;
    this.transport = undefined;
    if (this.status === 'starting') return; // connect() reports it
    if (this.restarts < MCP_DEFAULTS.restarts) {
      this.restarts++;
      this.status = 'idle';
      this.toolsStale = false;
      // Started again at once, so the next call finds it ready; its tools are re-read.
      // Either way the tools changed: back, or gone for good (the owner reads `failure`).
      this.start().then(
        () => {
          for (const l of this.listeners) l();
        },
        () => {
          if (!this.ctx.ownerReportsFailures && this.failure) this.ctx.notify(`error: ${this.failure}`);
          for (const l of this.listeners) l();
        },
      );
      return;
    }
    this.status = 'failed';
    this.failure = `MCP server "${this.config.name}" stopped (${how}) after it had already been restarted once; it is not started again and its tools are unavailable for the rest of this run${stderr}`;
    if (!this.ctx.ownerReportsFailures) this.ctx.notify(`error: ${this.failure}`);
    for (const l of this.listeners) l();
  }

  private makeTransport(): Transport {
    const cfg = this.config;
    if (cfg.scope === 'run' && this.ctx.runHost)
      return this.ctx.runHost.transport(cfg, {
        cwd: cfg.cwd ?? this.ctx.cwd,
        writable: this.ctx.writable ?? [this.ctx.cwd],
        ...(this.ctx.hide ? { hide: this.ctx.hide } : {}),
        ...(this.ctx.readOnly ? { readOnly: this.ctx.readOnly } : {}),
        ...(this.ctx.bwrapPath ? { bwrapPath: this.ctx.bwrapPath } : {}),
      });
    if (cfg.transport === 'stdio') {
      const cwd = cfg.cwd ?? this.ctx.cwd;
      let sandbox: { plan: SandboxPlan; bwrapPath?: string } | undefined;
      if (cfg.sandbox !== 'none') {
        const jail = resolveSandboxMode({
          mode: 'workspace',
          ...(this.ctx.bwrapPath ? { bwrapPath: this.ctx.bwrapPath } : {}),
        });
        if (jail.mode === 'workspace') {
          // The server's own script and package, read-only: the sandbox's /tmp and home are private.
          // And the run's trusted inputs: a compromised server must not rewrite the recipe it runs under.
          const readOnly = [
            ...serverReadOnlyPaths(cfg.command!, cfg.args, cwd, this.ctx.baseEnv, this.ctx.hide),
            ...(this.ctx.readOnly ?? []),
          ];
          const plan: SandboxPlan = {
            writable: this.ctx.writable ?? [this.ctx.cwd],
            network: cfg.network,
            cwd,
            ...(this.ctx.hide ? { hide: this.ctx.hide } : {}),
            ...(readOnly.length ? { readOnly } : {}),
          };
          sandbox = { plan, ...(this.ctx.bwrapPath ? { bwrapPath: this.ctx.bwrapPath } : {}) };
        } else if (jail.warning) warnOnce(jail.warning, this.ctx.notify);
      }
      return new ServerStdioTransport({
        command: cfg.command!,
        args: cfg.args,
        env: cfg.env,
        cwd,
        ...(sandbox ? { sandbox } : {}),
        ...(this.ctx.baseEnv ? { baseEnv: this.ctx.baseEnv } : {}),
      });
    }
    const url = new URL(cfg.url!);
    const authProvider = this.ctx.authProviders?.[cfg.name];
    const requestInit: RequestInit = { headers: cfg.headers };
    if (cfg.transport === 'sse')
      return new SSEClientTransport(url, { requestInit, ...(authProvider ? { authProvider } : {}) });
    return new StreamableHTTPClientTransport(url, { requestInit, ...(authProvider ? { authProvider } : {}) });
  }
}

/**
 * The end of a server's stderr as a reason, on one line (it ends up in a failure message, a
 * warning line and the report): from its last line that reads like an error ("Error: Cannot find
 * module ...", "...: not found"), else its last lines; stack frames and lines of punctuation
 * dropped (a Node server that cannot find its module prints a dozen of them around the one line
 * that matters).
 */
export function stderrTail(stderr: string, maxLines = 4, maxChars = 500): string {
  const lines = stderr
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => /[A-Za-z]/.test(l) && !/^at /.test(l));
  let from = lines.length - 1;
  while (from >= 0 && !/error|not found|cannot|no such|denied|failed|refused|missing/i.test(lines[from]!)) from--;
  const kept = from >= 0 ? lines.slice(from, from + maxLines) : lines.slice(-maxLines);
  return kept.join(' | ').slice(0, maxChars);
}

/** A zod error's issues as one line: "content: expected array, received string". */
function issuesText(issues: unknown[]): string {
  return issues
    .slice(0, 3)
    .map((i) => {
      const { path, message } = i as { path?: unknown; message?: unknown };
      const at = Array.isArray(path) && path.length ? `${path.join('.')}: ` : '';
      return `${at}${String(message ?? 'invalid')}`;
    })
    .join('; ');
}

/** An HTTP error status as a cause with what to check; the body, if any, quoted short and without markup. */
function httpFailure(status: number, message: string, where: string): string {
  const body = message
    .replace(/^(Streamable HTTP|SSE) error: (Error POSTing to endpoint: |Non-200 status code \(\d+\))?/, '')
    .replace(/<[^>]*>/g, ' ')
    .replace(/\s+/g, ' ')
    .trim();
  const quoted = body ? ` (it answered: ${body.length > 160 ? `${body.slice(0, 160)}…` : body})` : '';
  const check =
    status === 401 || status === 403
      ? ': the server refused the credentials; check the Authorization (or other) header its entry sends under headers:, and that the ${VAR} in it holds a valid token'
      : status === 404
        ? ": nothing is served there; check the URL's path (often /mcp, or /sse for the older transport)"
        : status >= 500
          ? ': the server failed; its own logs say why'
          : '';
  return `HTTP ${status} from ${where}${check}${quoted}`;
}

/** Why an HTTP server could not be reached, from the network error under undici's "fetch failed". */
export function remoteFailure(err: unknown, url: string): string {
  const where = url.replace(/\?.*$/, '');
  const codes: string[] = [];
  const texts: string[] = [];
  let status: number | undefined;
  for (let e: unknown = err, depth = 0; e && depth < 5; depth++) {
    const o = e as { code?: unknown; message?: unknown; cause?: unknown };
    if (typeof o.code === 'string') codes.push(o.code);
    // The SDK's StreamableHTTPError and SseError carry the HTTP status as a number.
    if (typeof o.code === 'number' && o.code >= 400 && o.code <= 599) status ??= o.code;
    if (typeof o.message === 'string') texts.push(o.message);
    e = o.cause;
  }
  if (status !== undefined) return httpFailure(status, texts[0] ?? '', where);
  const wrongType = /Unexpected content type: ([^\s;]+)/.exec(texts.join(' '));
  if (wrongType)
    return `${where} answered with ${wrongType[1]}, not MCP (JSON or an event stream): is this the server's MCP endpoint (often /mcp, or /sse for the older transport)?`;
  const all = `${codes.join(' ')} ${texts.join(' ')}`;
  if (/ECONNREFUSED/.test(all)) return `connection refused at ${where} (is the server running, on this port?)`;
  if (/ENOTFOUND|EAI_AGAIN/.test(all)) return `host not found: ${new URL(url).hostname} (${where})`;
  if (/ECONNRESET/.test(all)) return `connection reset by ${where}`;
  if (/UND_ERR_SOCKET|other side closed/.test(all)) return `connection closed by ${where} (has the server stopped?)`;
  if (/ETIMEDOUT|UND_ERR_CONNECT_TIMEOUT/.test(all)) return `connecting to ${where} timed out`;
  if (/CERT|certificate|self.signed/i.test(all)) return `TLS certificate of ${where} not accepted: ${texts.at(-1)}`;
  return `${texts.join(': ') || String(err)} (${where})`;
}
